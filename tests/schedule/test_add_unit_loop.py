"""``add_unit_loop``: the new loop is recorded, replays from JSON and Python text, and the built program still
computes what numpy does."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.ir import stmt as S
from tunefarm.runtime import build
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.schedule.trace_python import apply_python
from tunefarm.script import T


@T.prim_func
def add_one(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + 1.0


def _check_numerics(func):
    a = np.random.default_rng(0).random((8, 4), dtype=np.float32)
    b = np.zeros_like(a)
    build(func)(a, b)
    np.testing.assert_allclose(b, a + 1.0)


@pytest.mark.parametrize("above", ["block", "loop"])
def test_add_unit_loop_builds_and_replays(above):
    sch = Schedule(add_one)
    block = sch.get_block("B")
    i, j = sch.get_loops(block)
    u = sch.add_unit_loop(block if above == "block" else j)
    loop = sch.get(u)
    assert isinstance(loop, S.For) and loop.extent.value == 1
    child = loop.body
    assert isinstance(child, S.BlockRealize if above == "block" else S.For)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(block)] == ([8, 4, 1] if above == "block" else [8, 1, 4])
    _check_numerics(sch.mod["main"])
    again = Schedule.from_trace(Trace.from_json(sch.trace.as_json()), add_one)
    from_text = Schedule(add_one)
    apply_python(sch.trace.as_python(), from_text)
    for other in (again, from_text):
        assert other.trace.as_python() == sch.trace.as_python()
        assert str(other.mod["main"]) == str(sch.mod["main"])


def test_add_unit_loop_refuses_the_root_block():
    sch = Schedule(add_one)
    with pytest.raises(ScheduleError, match="add_unit_loop: block 'root' is the function's root block"):
        sch.add_unit_loop(sch.get_block("root"))
