"""``blockize``: the new outer block is recorded and replays, the built program (nested blocks, a reduction's
init moved to the outer block) computes what numpy does, and bindings that do not split are refused."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.ir import stmt as S
from tunefarm.runtime import build
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.schedule.trace_python import apply_python
from tunefarm.script import T


@T.prim_func
def matmul(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 24), "float32"), C: T.Buffer((32, 24), "float32")):
    for i, j, k in T.grid(32, 24, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _check(func):
    rng = np.random.default_rng(0)
    a, b = rng.random((32, 16), dtype=np.float32), rng.random((16, 24), dtype=np.float32)
    c = np.zeros((32, 24), np.float32)
    build(func)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def _replays(sch):
    again = Schedule.from_trace(Trace.from_json(sch.trace.as_json()), matmul)
    from_text = Schedule(matmul)
    apply_python(sch.trace.as_python(), from_text)
    for other in (again, from_text):
        assert str(other.mod["main"]) == str(sch.mod["main"])


@pytest.mark.parametrize("preserve_unit_iters", [True, False])
def test_blockize_a_tile_of_a_reduction(preserve_unit_iters):
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [None, 8])
    jo, ji = sch.split(j, [None, 4])
    sch.reorder(io, jo, ii, ji, k)
    outer = sch.blockize(ii, preserve_unit_iters=preserve_unit_iters)
    ob = sch.get(outer)
    assert ob.name == "C_o" and [iv.iter_type for iv in ob.iter_vars] == ["S", "S", "R"]
    assert [iv.dom.extent.value for iv in ob.iter_vars] == [4, 6, 1]
    assert ob.init is not None and sch.get(block).init is None  # the init moved to the outer block
    assert [sch.get(lp).loop_var for lp in sch.get_loops(outer)] == [sch.get(io).loop_var, sch.get(jo).loop_var]
    _check(sch.mod["main"])
    _replays(sch)


def test_blockize_the_outermost_loop_then_parallelize_above_it():
    sch = Schedule(matmul)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [4, None])
    outer = sch.blockize(ii)
    assert isinstance(sch.get(outer), S.Block)
    sch.parallel(io)
    _check(sch.mod["main"])
    _replays(sch)


def test_blockize_refuses_a_binding_that_does_not_split():
    sch = Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    fused = sch.fuse(i, j)
    _, inner = sch.split(fused, [None, 5])  # 768 = 154 * 5 (predicated): inner steps cross rows unevenly
    with pytest.raises(ScheduleError, match="blockize: "):
        sch.blockize(inner)


def test_blockize_refuses_a_loop_over_several_blocks():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi]

    sch = Schedule(two)
    (i,) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="blockize: the loops under 'i' must nest perfectly over one block"):
        sch.blockize(i)
