"""The other legality rules taken from TVM (and the two deliberate differences), one test per rule."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.runtime.build_module import build
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.script import from_source
from tunefarm.testing.fuzz_programs import PROGRAMS

from test_legality_tvm import MATMUL_NOT_STAGE_PIPELINE, OPAQUE_BLOCK, ROWSUM_NOT_QUASI_AFFINE

MM_RELU = '''
@T.prim_func
def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    Y = T.alloc_buffer((8, 8), "float32")
    for i, j, k in T.grid(8, 8, 8):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''

MATMUL_LOOP_MULTIPLE_CHILDREN = '''
@T.prim_func
def matmul_loop_multiple_children(a: T.handle, b: T.handle, c: T.handle, d: T.handle) -> None:
    A = T.match_buffer(a, [128, 128])
    B = T.match_buffer(b, [128, 128])
    C = T.match_buffer(c, [128, 128])
    D = T.match_buffer(d, [128, 128])
    for k, i, j in T.grid(128, 128, 128):
        with T.block("C"):
            ck, ci, cj = T.axis.remap("RSS", [k, i, j])
            with T.init():
                C[ci, cj] = 0.0
            C[ci, cj] = C[ci, cj] + A[ci, ck] * B[ck, cj]
        with T.block("D"):
            dk, di, dj = T.axis.remap("RSS", [k, i, j])
            with T.init():
                D[di, dj] = 0.0
            D[di, dj] = D[di, dj] + B[di, dk] * A[dk, dj]
'''

ROWSUM_UNBOUND_LOOP = '''
@T.prim_func
def rowsum_unbound_loop(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k, r in T.grid(8, 16, 2):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def _refused(primitive: str, fragment: str, call) -> None:
    with pytest.raises(ScheduleError, match=fragment) as info:
        call()
    assert info.value.primitive == primitive and "\n" not in str(info.value)


def _arrays(func, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(p.const_shape()).astype(p.dtype) for p in func.params]


def _same_result(before, after, runs=1):
    args = _arrays(before)
    want = [a.copy() for a in args]
    build(before)(*want)
    mod = build(after, "llvm -num-cores=2")
    for _ in range(runs):
        got = [a.copy() for a in args]
        mod(*got)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_reverse_compute_at_refuses_to_put_a_reduction_under_a_parallel_loop_over_its_reduction():
    """Found by the fuzzer: rfactor makes the reduction loop spatial in ``B_rf``, which may then run in
    parallel; moving the write-back (which reduces over that loop) under it would race."""
    s = Schedule(from_source(PROGRAMS["rowsum"]))
    _, k = s.get_loops(s.get_block("B"))
    s.rfactor(k, 0)
    rf_loops = s.get_loops(s.get_block("B_rf"))
    s.parallel(rf_loops[1])
    _refused("reverse_compute_at", "would run under parallel loop 'k'.*reduction iteration variable",
             lambda: s.reverse_compute_at(s.get_block("B"), rf_loops[1]))


def test_compute_at_refuses_a_scope_that_is_no_stage_pipeline():
    s = Schedule(from_source(MATMUL_NOT_STAGE_PIPELINE))
    i, _ = s.get_loops(s.get_block("D"))
    _refused("compute_at", "not a stage pipeline: block 'D' reads 'C' beyond",
             lambda: s.compute_at(s.get_block("C"), i))


def test_compute_at_moves_only_complete_or_reduction_blocks():
    s = Schedule(from_source(MM_RELU))
    y = s.get_block("Y")
    s.decompose_reduction(y, s.get_loops(y)[2])  # "Y" keeps the update, without its init
    i, _ = s.get_loops(s.get_block("C"))
    _refused("compute_at", "block 'Y' is neither a complete block .* nor a reduction block",
             lambda: s.compute_at(y, i))
    ok = Schedule(from_source(MM_RELU))
    ok.compute_at(ok.get_block("Y"), ok.get_loops(ok.get_block("C"))[0])
    _same_result(from_source(MM_RELU), ok.mod["main"])


def test_cache_read_needs_region_cover():
    s = Schedule(from_source(MATMUL_NOT_STAGE_PIPELINE))
    _refused("cache_read", "region cover of scope 'root' does not hold for 'C'",
             lambda: s.cache_read(s.get_block("D"), 0, "local"))


def test_rfactor_loop_with_several_blocks():
    s = Schedule(from_source(MATMUL_LOOP_MULTIPLE_CHILDREN))
    k, _, _ = s.get_loops(s.get_block("C"))
    _refused("rfactor", "loop 'k' is bound to several blocks \\['C', 'D'\\]", lambda: s.rfactor(k, 0))


def test_rfactor_refuses_an_unbound_loop_under_the_reduction():
    s = Schedule(from_source(ROWSUM_UNBOUND_LOOP))
    _, k, _ = s.get_loops(s.get_block("B"))
    _refused("rfactor", "loop 'r' feeds no iteration variable of block 'B' but lies under a reduction loop",
             lambda: s.rfactor(k, 0))


def test_decompose_reduction_needs_a_reduction_block():
    s = Schedule(from_source(ROWSUM_NOT_QUASI_AFFINE))
    i, _ = s.get_loops(s.get_block("B"))
    _refused("decompose_reduction", "not a reduction block: its bindings are not quasi-affine",
             lambda: s.decompose_reduction(s.get_block("B"), i))


def test_reorder_refuses_loops_an_opaque_block_uses():
    s = Schedule(from_source(OPAQUE_BLOCK))
    (i,) = s.get_loops(s.get_block("opaque"))
    i0, i1 = s.split(i, [None, 4])
    _refused("reorder", "opaque block 'opaque'", lambda: s.reorder(i1, i0))


def test_split_and_fuse_rewrite_the_loop_variables_inside_an_opaque_block():
    func = from_source(PROGRAMS["prefix_sum"])
    s = Schedule(func)
    (i,) = s.get_loops(s.get_block("opaque"))
    i0, i1 = s.split(i, [None, 4])  # 32 > 31: predicated
    s.fuse(i0, i1)
    assert "i_0_i_1_fused" in s.mod.script()
    _same_result(func, s.mod["main"])


def test_parallel_and_vectorize_after_decompose_reduction_stay_legal():
    """A deliberate difference from TVM (which refuses both): the update block decompose_reduction leaves is
    still independent across its spatial iterations."""
    func = from_source(PROGRAMS["matmul"])
    s = Schedule(func)
    c = s.get_block("C")
    i, j, k = s.get_loops(c)
    s.reorder(i, k, j)
    s.decompose_reduction(c, k)
    s.parallel(i)
    s.vectorize(j)
    _refused("parallel", "reduction iteration variable", lambda: s.parallel(k))
    _same_result(func, s.mod["main"], runs=20)


def test_parallel_checks_blocks_nested_in_blocks_below_the_loop():
    src = '''
@T.prim_func
def nested(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            for k in range(8):
                with T.block("inner"):
                    vk = T.axis.spatial(8, k)
                    vr = T.axis.reduce(8, i)
                    with T.init():
                        B[vk] = T.float32(0)
                    B[vk] = B[vk] + A[vr, vk]
'''
    s = Schedule(from_source(src))
    (i,) = s.get_loops(s.get_block("outer"))
    _refused("parallel", "loop 'i' is bound into a reduction iteration variable of block 'inner'",
             lambda: s.parallel(i))


def test_reverse_compute_at_refuses_a_producer_predicated_inside_the_loop():
    """Found by the fuzzer: the producer's predicate keeps it to one element per iteration of ``ax0``, but the
    region it finishes was bounded without the predicate, so the consumer read elements nobody wrote yet."""
    func = from_source(PROGRAMS["rowsum"])
    s = Schedule(func)
    b = s.get_block("B")
    copy = s.cache_read(b, 0, "global")
    s.compute_at(copy, s.get_loops(b)[1], preserve_unit_loops=True)
    s.split(s.get_loops(copy)[3], [None, 6, 2])  # a unit loop split into 12: predicated
    ax0 = s.get_loops(copy)[2]
    _refused("reverse_compute_at", "producer 'A_global' is predicated on loops inside 'ax0'",
             lambda: s.reverse_compute_at(b, ax0))
    _same_result(func, s.mod["main"])


def test_reverse_compute_at_refuses_a_consumer_whose_guarded_reads_leave_the_buffer():
    """Found by the fuzzer: ``pad`` reads ``I[h - 1, w - 1]`` only inside the image (a select), but its declared
    region reaches row -1; placing its iterations by what the copy of ``I`` finished dropped the border rows."""
    func = from_source(PROGRAMS["conv2d"])
    s = Schedule(func)
    pad = s.get_block("pad")
    copy = s.cache_read(pad, 0, "local")
    # TVM's region cover clips the read (-1..5) to the buffer (0..4), which the copy writes: it passes, so the
    # bounds check is what refuses it, predicated (a non-divisible split) or not
    _refused("reverse_compute_at", "block 'pad' reads 'I_local' outside its bounds \\(dimension 2: -1..5\\)",
             lambda: s.reverse_compute_at(pad, s.get_loops(copy)[0], preserve_unit_loops=True))
    s.split(s.get_loops(pad)[3], [None, 5, 3])
    _refused("reverse_compute_at", "block 'pad' reads 'I_local' outside its bounds \\(dimension 2: -1..5\\)",
             lambda: s.reverse_compute_at(pad, s.get_loops(copy)[0], preserve_unit_loops=True))
    _same_result(func, s.mod["main"])


def test_parallel_sees_a_nested_reduction_through_its_enclosing_blocks_spatial_variable():
    """A reduction nested in a block that binds the loop spatially is safe when its written indices use that
    variable (blockize's outer block), and refused when they do not (every iteration updates one element)."""
    template = '''
@T.prim_func
def nested(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            for k in range(8):
                with T.block("inner"):
                    vk = T.axis.reduce(8, k)
                    with T.init():
                        B[{index}] = T.float32(0)
                    B[{index}] = B[{index}] + A[vi, vk]
'''
    func = from_source(template.format(index="vi"))
    s = Schedule(func)
    (i,) = s.get_loops(s.get_block("outer"))
    s.parallel(i)
    _same_result(func, s.mod["main"])
    s = Schedule(from_source(template.format(index="0")))
    (i,) = s.get_loops(s.get_block("outer"))
    _refused("parallel", "loop 'i' is not bound into any spatial iteration variable of reduction block 'inner'",
             lambda: s.parallel(i))
