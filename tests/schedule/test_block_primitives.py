"""Block primitives on the course's examples: the structure TVM prints, and the same numbers before/after.

Programs are written in TVMScript (``tunefarm.script``); expected results are TVM's printed output parsed
by the same front end, so "same printed script" means "same loop/block structure, bindings, regions".
Numbers come from ``tunefarm.reference.interpret`` (fresh buffers are NaN-filled, so reading anything a
schedule forgot to compute shows up).
"""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.ir import stmt as S
from tunefarm.reference import interpret
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.schedule.primitives.cache import cache_read
from tunefarm.schedule.primitives.compact import compact_buffer_allocations
from tunefarm.schedule.primitives.compute_location import (can_inline, compute_at, compute_at_candidates,
                                                           compute_inline, reverse_compute_inline)
from tunefarm.schedule.primitives.reduction import decompose_reduction, rfactor
from tunefarm.schedule.tree import block_names, find_block, iter_paths
from tunefarm.script import from_source

import course_programs as cp
import programs as P
from course_trace import course_trace

# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------


def parse(src: str):
    return from_source(src)


def run(func, arrays):
    out = [a.copy() for a in arrays]
    interpret(func, *out)
    return out


def random_args(func, seed=0):
    rng = np.random.default_rng(seed)
    args = []
    for p in func.params:
        shape = p.const_shape()
        args.append((rng.standard_normal(shape)).astype(p.dtype))
    return args


def assert_same_numbers(before, after, seed=0, atol=1e-4):
    args = random_args(before, seed)
    want = run(before, args)
    got = run(after, args)
    for p, w, g in zip(before.params, want, got):
        assert not np.isnan(g).any(), f"{p.name} has NaN: something read memory nobody wrote"
        np.testing.assert_allclose(g, w, atol=atol, rtol=1e-4, err_msg=p.name)


def assert_matmul(func, n, seed=0):
    a, b, c = random_args(func, seed)
    interpret(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def same_script(a, b):
    assert a.script() == b.script(), "\n" + a.script() + "\n---- expected ----\n" + b.script()


# ---------------------------------------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------------------------------------
# notes 004: the course's mm_relu after split(j, [None, 4]), reorder(j0, k, j1), reverse_compute_at(C, j0)
MM_RELU_RCA = cp.course_script("004", "for ax0 in T.serial(4):")

# notes 000: the compute_inline example as written, and TVM's output of compute_inline(B)
BEFORE_INLINE = cp.course_script("000", "def before_inline(a: T.handle")
AFTER_INLINE = cp.course_script("000", "def before_inline(A: T.Buffer", "A[vi, vj] * T.float32(2) + T.float32(1)")

MM_BIAS_RELU = P.mm_bias_relu_script(32)

MATMUL = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def matmul(n):
    return parse(MATMUL.replace("128", str(n)))


# ---------------------------------------------------------------------------------------------------------
# compute_inline / reverse_compute_inline
# ---------------------------------------------------------------------------------------------------------
def test_compute_inline_matches_the_course_output():
    before = parse(BEFORE_INLINE)
    after = compute_inline(before, "B")
    same_script(after, parse(AFTER_INLINE))
    assert_same_numbers(before, after)
    a = random_args(before)[0]
    c = np.zeros((128, 128), "float32")
    interpret(after, a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_compute_inline_of_an_intermediate_after_a_matmul():
    before = parse(MM_BIAS_RELU)
    assert can_inline(before, "Z") and not can_inline(before, "Y") and not can_inline(before, "C")
    after = compute_inline(before, "Z")
    assert block_names(after) == ["root", "Y", "C"]
    assert [b.name for b in after.root_block.alloc_buffers] == ["Y"]
    c_block = find_block(after, "C")[-1].block
    assert sorted(r.buffer.name for r in c_block.reads) == ["D", "Y"]
    assert "T.max(Y[vi, vj] + D[vj], T.float32(0))" in after.script()
    a, b, d, _ = random_args(before)
    c = np.zeros((32, 32), "float32")
    interpret(after, a, b, d, c)
    np.testing.assert_allclose(c, np.maximum(a @ b + d, 0), rtol=1e-4, atol=1e-4)


def test_reverse_compute_inline_folds_the_consumer_into_the_producer():
    before = parse(MM_BIAS_RELU)
    after = reverse_compute_inline(before, "C")
    assert block_names(after) == ["root", "Y", "Z"]
    z = find_block(after, "Z")[-1].block
    assert [w.buffer.name for w in z.writes] == ["C"]
    assert [b.name for b in after.root_block.alloc_buffers] == ["Y"]
    assert_same_numbers(before, after)
    course = parse(BEFORE_INLINE)
    same_script(reverse_compute_inline(course, "C"),
                parse(AFTER_INLINE.replace('T.block("C")', 'T.block("B")')))


def test_inline_chain_leaves_one_block():
    src = BEFORE_INLINE.replace("C = T.match_buffer(c, (128, 128))", "C = T.alloc_buffer((128, 128))\n    D = T.match_buffer(d, (128, 128))")
    src = src.replace("c: T.handle", "d: T.handle") + """
    for i, j in T.grid(128, 128):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] * 3.0
"""
    f = parse(src)
    g = reverse_compute_inline(compute_inline(f, "B"), "D")
    assert block_names(g) == ["root", "C"]
    assert g.root_block.alloc_buffers == ()
    assert "D[vi, vj] = (A[vi, vj] * T.float32(2) + T.float32(1)) * T.float32(3)" in g.script()
    assert_same_numbers(f, g)


# ---------------------------------------------------------------------------------------------------------
# reverse_compute_at / compute_at
# ---------------------------------------------------------------------------------------------------------
def _mm_relu_course_schedule(n):
    sch = Schedule(P.mm_relu(n))
    block_y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_c = sch.get_block("C")
    sch.reverse_compute_at(block_c, j0)
    return sch.mod["main"]


def test_reverse_compute_at_in_the_mm_relu_example_matches_tvm():
    same_script(_mm_relu_course_schedule(128), parse(MM_RELU_RCA)["mm_relu"])
    small = _mm_relu_course_schedule(32)  # the same schedule, small enough for the interpreter
    a, b, c = random_args(small)
    interpret(small, a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_compute_at_a_reduction_producer_under_a_tiled_consumer_loop():
    before = P.mm_relu(32)
    sch = Schedule(before)
    i, j = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 8])
    f = sch.mod["main"]
    assert [v.name for v in compute_at_candidates(f, "Y")] == ["i", "j_0", "j_1"]
    after = compute_at(f, "Y", sch.get(j0).loop_var)
    expected = '''
@T.prim_func
def mm_relu(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((32, 32), "float32")
    for i, j_0 in T.grid(32, 4):
        for ax0, ax1 in T.grid(8, 32):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 8 + ax0)
                vk = T.axis.reduce(32, ax1)
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for j_1 in range(8):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 8 + j_1)
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''
    same_script(after, parse(expected))
    assert_same_numbers(before, after)
    kept = compute_at(f, "Y", sch.get(i).loop_var, preserve_unit_loops=True)
    y_loops = [p[-1] for p in iter_paths(kept.body) if isinstance(p[-1], S.For) and p[-1].loop_var.name == "ax0"]
    assert y_loops and y_loops[0].extent.value == 1  # the unit loop over vi is kept
    assert_same_numbers(before, kept)


STENCIL = P.stencil_script(64)


def test_compute_at_of_a_stencil_producer_guards_the_edge_tile():
    before = parse(STENCIL)
    sch = Schedule(before)
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 8])  # 62 = 7*8 + 6: the last tile is predicated
    f = sch.mod["main"]
    after = compute_at(f, "B", sch.get(i0).loop_var)
    text = after.script()
    assert "for ax0 in range(10):" in text  # 8 outputs need a window of 10 inputs
    assert "vi = T.axis.spatial(64, i_0 * 8 + ax0)" in text
    assert "T.where(i_0 * 8 + ax0 < 64)" in text
    assert_same_numbers(before, after)
    a = random_args(before)[0]
    c = np.zeros(62, "float32")
    interpret(after, a, c)
    np.testing.assert_allclose(c, 2 * (a[:-2] + a[1:-1] + a[2:]), rtol=1e-5)


# ---------------------------------------------------------------------------------------------------------
# decompose_reduction / rfactor
# ---------------------------------------------------------------------------------------------------------
def _stochastic_schedule_mm(n, j_factors):
    sch = Schedule(matmul(n), seed=1)
    block_c = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_c)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    init = sch.decompose_reduction(block_c, k)
    assert sch.get(init).name == "C_init"
    return sch.mod["main"]


def test_decompose_reduction_after_split_and_reorder_like_stochastic_schedule_mm():
    after = _stochastic_schedule_mm(128, [16, 8])
    # TVM's printed result (TVM renames the update block "C_update"; tunefarm keeps "C")
    expected = '''
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    for i, j_0 in T.grid(128, 16):
        for j_1_init in range(8):
            with T.block("C_init"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 8 + j_1_init)
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(128, 8):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 8 + j_1)
                vk = T.axis.reduce(128, k)
                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
    same_script(after, parse(expected))
    assert_matmul(_stochastic_schedule_mm(32, [4, 8]), 32)


def test_decompose_reduction_at_the_outermost_loop_copies_every_spatial_loop():
    before = matmul(16)
    i, j, k = [p[-1].loop_var for p in iter_paths(before.body) if isinstance(p[-1], S.For)]
    after, name = decompose_reduction(before, "C", i)
    assert name == "C_init"
    assert "for i_init, j_init in T.grid(16, 16):" in after.script()
    assert_same_numbers(before, after)


RFACTOR_EXPECTED = '''
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((64, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    C_rf = T.alloc_buffer((4, 16, 16), "float32")
    for i, j, k_0, k_1 in T.grid(16, 16, 16, 4):
        with T.block("C_rf"):
            vk_1, vi, vj, vk_0 = T.axis.remap("SSSR", [k_1, i, j, k_0])
            T.reads(A[vi, vk_0 * 4 + vk_1], B[vk_0 * 4 + vk_1, vj])
            T.writes(C_rf[vk_1, vi, vj])
            with T.init():
                C_rf[vk_1, vi, vj] = T.float32(0)
            C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, vj]
    for i, j, k_1 in T.grid(16, 16, 4):
        with T.block("C"):
            vk_1, vi, vj = T.axis.remap("RSS", [k_1, i, j])
            T.reads(C_rf[vk_1, vi, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]
'''


def test_rfactor_of_an_inner_reduction_loop_matches_tvm_structure():
    before = parse(MATMUL.replace("(128, 128), \"float32\"), B", "(16, 64), \"float32\"), B")
                   .replace("B: T.Buffer((128, 128)", "B: T.Buffer((64, 16)")
                   .replace("C: T.Buffer((128, 128)", "C: T.Buffer((16, 16)")
                   .replace("T.grid(128, 128, 128)", "T.grid(16, 16, 64)"))
    sch = Schedule(before)
    i, j, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k1, 0)
    after = sch.mod["main"]
    assert sch.get(rf).name == "C_rf"
    same_script(after, parse(RFACTOR_EXPECTED))
    assert_same_numbers(before, after)
    f = sch.mod["main"]
    # the rf block's reduction can itself be decomposed, the write-back still sums the partial results
    g, _ = decompose_reduction(f, "C_rf", [p[-1].loop_var for p in iter_paths(f.body)
                                           if isinstance(p[-1], S.For) and p[-1].loop_var.name == "k_0"][0])
    assert_same_numbers(before, g)


def test_rfactor_with_factor_axis_last_and_a_max_reduction():
    src = '''
@T.prim_func
def rowmax(A: T.Buffer((8, 96), "float32"), M: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 96):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4028234663852886e+38)
            M[vi] = T.max(M[vi], A[vi, vk])
'''
    before = parse(src)
    sch = Schedule(before)
    i, k = sch.get_loops(sch.get_block("M"))
    k0, k1 = sch.split(k, factors=[12, 8])
    for loop, axis, shape in ((k0, -1, (8, 12)), (k1, 1, (8, 8))):
        f, name = rfactor(sch.mod["main"], sch.get(loop).loop_var, axis)
        rf_buf = [b for b in f.root_block.alloc_buffers if b.name == "M_rf"][0]
        assert rf_buf.const_shape() == shape
        assert name == "M_rf"
        assert_same_numbers(before, f)
        a = random_args(before)[0]
        m = np.zeros(8, "float32")
        interpret(f, a, m)
        np.testing.assert_allclose(m, a.max(axis=1))


# ---------------------------------------------------------------------------------------------------------
# cache_read / cache_write and the multi-level tiling pattern
# ---------------------------------------------------------------------------------------------------------
def test_cache_read_copies_before_the_reader_and_redirects_it():
    before = matmul(32)
    after, name = cache_read(before, "C", 1, "local")
    assert name == "B_local"
    assert block_names(after) == ["root", "B_local", "C"]
    buf = after.root_block.alloc_buffers[0]
    assert (buf.name, buf.scope, buf.const_shape()) == ("B_local", "local", (32, 32))
    c = find_block(after, "C")[-1].block
    assert [r.buffer.name for r in c.reads] == ["A", "B_local"]
    assert "B_local[v0, v1] = B[v0, v1]" in after.script()
    assert_same_numbers(before, after)
    again, name2 = cache_read(after, "C", 0, "global")
    assert name2 == "A_global" and block_names(again) == ["root", "A_global", "B_local", "C"]
    assert_same_numbers(before, again)


def test_cache_read_of_an_intermediate_goes_after_its_writer():
    before = parse(MM_BIAS_RELU)
    after, name = cache_read(before, "C", 0, "local")
    assert block_names(after) == ["root", "Y", "Z", "Z_local", "C"]
    assert_same_numbers(before, after)
    after, name = cache_read(after, "Z", 0, "global")  # Y, read by Z
    assert block_names(after) == ["root", "Y", "Y_global", "Z", "Z_local", "C"]
    assert_same_numbers(before, after)


def _tiled_matmul(n=64, i_factors=(2, 1, 8, 4), j_factors=(2, 2, 4, 4), k_factors=(16, 4)):
    """matmul tiled SSRSRS (two spatial levels around the reduction) with the Schedule's loop primitives."""
    sch = Schedule(matmul(n))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1, i2, i3 = sch.split(i, factors=list(i_factors))
    j0, j1, j2, j3 = sch.split(j, factors=list(j_factors))
    k0, k1 = sch.split(k, factors=list(k_factors))
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    return sch, block, (i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)


def _with_write_cache(n, i_factors, j_factors, k_factors, scope="local"):
    """``_tiled_matmul`` accumulating in a ``scope`` write cache written back under the outer tile, its
    reduction decomposed (MetaSchedule's CPU sketch)."""
    sch, block, loops = _tiled_matmul(n, i_factors, j_factors, k_factors)
    wb = sch.cache_write(block, 0, scope)
    sch.reverse_compute_at(wb, loops[3], preserve_unit_loops=True)
    sch.decompose_reduction(block, loops[4])
    return sch.mod["main"]


def test_cache_write_local_then_reverse_compute_at_under_the_tile():
    sch, block, loops = _tiled_matmul()
    wb = sch.cache_write(block, 0, "local")
    assert sch.get(wb).name == "C_local"
    full = sch.mod["main"]
    assert block_names(full) == ["root", "C", "C_local"]
    (cache,) = full.root_block.alloc_buffers
    assert (cache.name, cache.scope, cache.const_shape()) == ("C_local", "local", (64, 64))
    c_block = find_block(full, "C")[-1].block
    assert [w.buffer.name for w in c_block.writes] == ["C_local"]
    sch.reverse_compute_at(wb, loops[3], preserve_unit_loops=True)
    tiled = sch.mod["main"]
    text = tiled.script()
    assert "for ax0, ax1 in T.grid(32, 16):" in text
    assert "v0 = T.axis.spatial(64, i_0 * 32 + i_1 * 32 + ax0)" in text
    assert "v1 = T.axis.spatial(64, j_0 * 32 + j_1 * 16 + ax1)" in text
    wb_path = find_block(tiled, "C_local")
    assert [lp.loop_var.name for lp in wb_path if isinstance(lp, S.For)] == ["i_0", "j_0", "i_1", "j_1", "ax0", "ax1"]
    sch.decompose_reduction(block, loops[4])
    final = sch.mod["main"]
    assert block_names(final) == ["root", "C_init", "C", "C_local"]
    assert_matmul(final, 64, seed=3)

    compact = compact_buffer_allocations(final)
    assert compact.root_block.alloc_buffers == ()
    wrappers = [p for p in iter_paths(compact.body) if isinstance(p[-1], S.BlockRealize)
                and p[-1].block.name == "j_1_alloc"]
    assert len(wrappers) == 1
    path = wrappers[0]
    assert path[-2].loop_var is sch.get(loops[3]).loop_var  # allocated right under the tile loop j_1
    (buf,) = path[-1].block.alloc_buffers
    assert (buf.name, buf.scope, buf.const_shape()) == ("C_local", "local", (32, 16))
    assert_matmul(compact, 64, seed=4)
    assert compact_buffer_allocations(compact).script() == compact.script()  # a second pass changes nothing


def test_tiling_pattern_with_a_global_write_cache_like_the_tvm_trace():
    # the 128^3 MetaSchedule trace of 004, scaled down: decisions [2,1,16,1] x [2,1,8,4] x [32,2]
    after = _with_write_cache(32, (2, 1, 16, 1), (2, 1, 4, 4), (16, 2), "global")
    assert_same_numbers(matmul(32), after)
    assert_same_numbers(matmul(32), compact_buffer_allocations(after))  # global buffers stay as they are
    assert compact_buffer_allocations(after).root_block.alloc_buffers[0].const_shape() == (32, 32)


def test_compaction_refuses_when_values_flow_across_iterations():
    src = '''
@T.prim_func
def flow(A: T.Buffer((8,), "float32"), B: T.Buffer((2, 8), "float32")):
    X = T.alloc_buffer((8,), "float32", scope="local")
    for t in range(2):
        for i in range(8):
            with T.block("w"):
                vt, vi = T.axis.remap("SS", [t, i])
                T.where(t < 1)
                X[vi] = A[vi] * T.float32(2)
        for i in range(8):
            with T.block("r"):
                vt, vi = T.axis.remap("SS", [t, i])
                B[vt, vi] = X[vi]
'''
    before = parse(src)
    after = compact_buffer_allocations(before)
    # X written in the first iteration of t is read in the second: it must stay allocated outside t
    assert [b.name for b in after.root_block.alloc_buffers] == ["X"]
    assert_same_numbers(before, after)


def test_compaction_shrinks_to_the_touched_box_in_place():
    src = '''
@T.prim_func
def window(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "float32")):
    X = T.alloc_buffer((16,), "float32", scope="local")
    for i in range(4):
        with T.block("w"):
            vi = T.axis.spatial(4, i)
            X[vi + 8] = A[vi] + T.float32(1)
    for i in range(4):
        with T.block("r"):
            vi = T.axis.spatial(4, i)
            B[vi] = X[vi + 8]
'''
    before = parse(src)
    after = compact_buffer_allocations(before)
    (buf,) = after.root_block.alloc_buffers
    assert buf.const_shape() == (4,)
    assert "X[vi + 8 - 8]" not in after.script() and "X[vi] = A[vi]" in after.script()
    assert_same_numbers(before, after)


@pytest.mark.parametrize("factors", [((2, 2, 4, 2), (2, 2, 2, 4), (4, 8)), ((1, 2, 16, 1), (4, 1, 2, 4), (2, 16))])
def test_multi_level_tiling_numbers_for_other_tile_shapes(factors):
    final = compact_buffer_allocations(_with_write_cache(32, *factors))
    assert_matmul(final, 32, seed=5)
    tile = (factors[0][2] * factors[0][3], factors[1][2] * factors[1][3])
    local = [b for p in iter_paths(final.body) if isinstance(p[-1], S.Block) for b in p[-1].alloc_buffers]
    assert [b.const_shape() for b in local] == [tile]


def _replay_004_trace(n, storage_scope):
    """MetaSchedule's auto-generated 128^3 matmul trace from the course notes (004), scaled to ``n``."""
    tiles = ((2, 1, n // 2, 1), (2, 1, n // 8, 4), (n // 2, 2))
    return course_trace(Schedule(matmul(n)), tiles, storage_scope).mod["main"]


def test_the_course_metaschedule_trace_replays_and_computes_a_matmul():
    f = _replay_004_trace(32, "global")
    assert block_names(f) == ["root", "C_init", "C", "C_global"]
    top = f.root_block.body
    assert isinstance(top, S.For) and top.kind == "parallel"  # one parallel loop holds all three blocks
    assert_matmul(f, 32)


def test_local_accumulator_compacts_under_the_fused_parallel_loop():
    f = _replay_004_trace(32, "local")
    g = compact_buffer_allocations(f)
    top = g.root_block.body
    assert g.root_block.alloc_buffers == () and top.kind == "parallel"
    wrapper = top.body.block  # the per-iteration (per-thread) allocation
    assert [(b.name, b.const_shape()) for b in wrapper.alloc_buffers] == [("C_local", (16, 16))]
    assert_matmul(g, 32, seed=7)


def test_compaction_needs_every_digit_of_a_fused_loop():
    src = '''
@T.prim_func
def halves(A: T.Buffer((8,), "float32"), B: T.Buffer((4, 4), "float32")):
    X = T.alloc_buffer((8,), "float32", scope="local")
    for f in range(4):
        for i in range(4):
            with T.block("w"):
                vi = T.axis.spatial(8, f // 2 * 4 + i)
                T.where(f % 2 == 0)
                X[vi] = A[vi] + T.float32(1)
        for i in range(4):
            with T.block("r"):
                vf, vi = T.axis.remap("SS", [f, i])
                B[vf, vi] = X[vf // 2 * 4 + vi]
'''
    before = parse(src)
    after = compact_buffer_allocations(before)
    # odd iterations of f read what the even ones wrote: the tile origin f // 2 * 4 misses the digit f % 2
    assert [b.name for b in after.root_block.alloc_buffers] == ["X"]
    assert_same_numbers(before, after)


def test_te_program_inline_and_reverse_compute_at():
    from tunefarm import te

    A = te.placeholder((32, 32), "float32", name="A")
    B = te.placeholder((32, 32), "float32", name="B")
    k = te.reduce_axis((0, 32), name="k")
    C = te.compute((32, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((32, 32), lambda i, j: te.max(C[i, j], te.const(0, "float32")), name="D")
    E2 = te.compute((32, 32), lambda i, j: D[i, j] * te.const(2.0, "float32"), name="E")
    f = te.create_prim_func([A, B, E2])
    sch = Schedule(f)
    sch.compute_inline(sch.get_block("D"))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(j0, kk, j1)
    sch.reverse_compute_at(sch.get_block("E"), j0)
    g = sch.mod["main"]
    assert block_names(g) == ["root", "C", "E"]
    assert "E[i, j] = T.max(C[i, j], T.float32(0)) * T.float32(2)" in g.script()
    a, b, e = random_args(g)
    interpret(g, a, b, e)
    np.testing.assert_allclose(e, 2 * np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


LINEAR0 = '''
@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    n = T.int64()
    X = T.match_buffer(x, (n, T.int64(64)), "float32")
    W = T.match_buffer(w, (T.int64(32), T.int64(64)), "float32")
    B = T.match_buffer(b, (T.int64(32),), "float32")
    Z = T.match_buffer(z, (n, T.int64(32)), "float32")
    Y = T.alloc_buffer((n, T.int64(32)), "float32")
    for i, j, k in T.grid(n, T.int64(32), T.int64(64)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(n, T.int64(32)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]
'''


def test_symbolic_batch_tiling_with_a_local_accumulator():
    sch = Schedule(parse(LINEAR0))
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(j0, k, j1)
    wb = sch.cache_write(y, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.reverse_compute_at(sch.get_block("Z"), j0)
    sch.decompose_reduction(y, k)
    f = sch.mod["main"]
    assert "T.where" not in f.script()  # i < n is known from the loop over i
    g = compact_buffer_allocations(f)
    local = [b for p in iter_paths(g.body) if isinstance(p[-1], S.Block) for b in p[-1].alloc_buffers
             if b.scope == "local"]
    assert [b.const_shape() for b in local] == [(1, 8)]
    rng = np.random.default_rng(0)
    for n in (1, 5):
        x = rng.standard_normal((n, 64)).astype("float32")
        w = rng.standard_normal((32, 64)).astype("float32")
        b = rng.standard_normal(32).astype("float32")
        for func in (f, g):
            z = np.zeros((n, 32), "float32")
            interpret(func, x, w, b, z)
            np.testing.assert_allclose(z, x @ w.T + b, rtol=1e-4, atol=1e-4)


def test_epilogue_folds_into_the_tile_write_back():
    """dense + bias + relu: tile the matmul, accumulate locally, fold bias and relu into the write-back."""
    before = parse(MM_BIAS_RELU)
    sch = Schedule(before)
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    i0, i1 = sch.split(i, [4, 8])
    j0, j1 = sch.split(j, [4, 8])
    k0, k1 = sch.split(k, [8, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    wb = sch.cache_write(y, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.reverse_compute_inline(sch.get_block("C"))
    sch.reverse_compute_inline(sch.get_block("Z"))
    sch.decompose_reduction(y, k0)
    f = sch.mod["main"]
    assert block_names(f) == ["root", "Y_init", "Y", "Y_local"]
    assert "C[v0, v1] = T.max(Y_local[v0, v1] + D[v1], T.float32(0))" in f.script()
    assert_same_numbers(before, f)
    g = compact_buffer_allocations(f)
    assert [(b.name, b.const_shape()) for p in iter_paths(g.body) if isinstance(p[-1], S.Block)
            for b in p[-1].alloc_buffers] == [("Y_local", (8, 8))]
    assert_same_numbers(before, g)


def test_cache_write_copies_back_only_what_the_block_writes():
    src = '''
@T.prim_func
def part(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(10):
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            C[vi + 3] = A[vi] * T.float32(2)
'''
    before = parse(src)
    sch = Schedule(before)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.split(i, [3, 4])  # 12 iterations for a domain of 10: predicated
    sch.cache_write(sch.get_block("C"), 0, "local")
    after = sch.mod["main"]
    assert "for ax0 in range(10):" in after.script() and "v0 = T.axis.spatial(16, ax0 + 3)" in after.script()
    assert_same_numbers(before, after)  # C[0:3] and C[13:16] keep the caller's (random) values
    two_writers = parse(src.replace('''    for i in range(10):
        with T.block("C"):''', '''    for i in range(16):
        with T.block("fill"):
            vi = T.axis.spatial(16, i)
            C[vi] = T.float32(7)
    for i in range(10):
        with T.block("C"):'''))
    with pytest.raises(ScheduleError, match="written by 2 blocks \\['fill', 'C'\\]; cache_write needs a single"):
        Schedule(two_writers).cache_write("C", 0, "local")


def test_compute_at_legal_agrees_with_compute_at_on_every_loop():
    from tunefarm.schedule.error import ScheduleError
    from tunefarm.schedule.primitives.compute_location import compute_at_legal

    before = P.mm_relu(32)
    sch = Schedule(before)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=[None, 8])
    f = sch.mod["main"]
    loops = [p[-1].loop_var for p in iter_paths(f.body) if isinstance(p[-1], S.For)]
    verdicts = []
    for block in ("Y", "C"):
        for v in loops:
            try:
                compute_at(f, block, v, True)
                ok = True
            except ScheduleError:
                ok = False
            assert compute_at_legal(f, block, v, True) is ok, (block, v.name)
            verdicts.append(ok)
    assert any(verdicts) and not all(verdicts)  # both answers were exercised


def test_compaction_without_region_inference_differs_only_in_block_regions():
    final = _with_write_cache(64, (2, 1, 2, 16), (2, 1, 2, 16), (32, 2))

    def without_regions(text):
        return "\n".join(line for line in text.splitlines() if "T.reads" not in line and "T.writes" not in line)

    full = compact_buffer_allocations(final)
    fast = compact_buffer_allocations(final, infer_regions=False)
    assert full.script() != final.script()  # something was compacted
    assert without_regions(fast.script()) == without_regions(full.script())
    assert_matmul(fast, 64, seed=5)
