"""Features of scheduled programs: fixed length, and the numbers mean what they say."""
from __future__ import annotations

import math

import numpy as np
import pytest

from search_programs import register_tiled
from tunefarm.schedule import Schedule
from tunefarm.search.features import (FEATURE_LEN, STORE_FEATURES, STORE_LEN, SUM_FEATURES,
                                      extract_features, feature_names, store_features)


def _col(vec, store: int, name: str) -> float:
    return vec[store * STORE_LEN + STORE_FEATURES.index(name)]


def _buf(vec, store: int, buf: int, name: str) -> float:
    from tunefarm.search.features import ACCESS_FEATURES

    return vec[store * STORE_LEN + len(STORE_FEATURES) + buf * len(ACCESS_FEATURES) + ACCESS_FEATURES.index(name)]


def test_plain_matmul_loops_strides_and_bytes(mm64):
    v = extract_features(mm64)
    assert v.shape == (FEATURE_LEN,) and len(feature_names()) == FEATURE_LEN
    assert np.isfinite(v).all()
    # the update store C[i,j] += A[i,k] * B[k,j] is the heaviest: 64^3 iterations, 2 float ops
    assert _col(v, 0, "log_iterations") == math.log2(1 + 64 ** 3)
    assert _col(v, 0, "log_total_flop") == math.log2(1 + 2 * 64 ** 3)
    assert _col(v, 0, "n_loops") == 3
    # innermost loop is k: C ignores it (stride 0), A[i, k] is contiguous, B[k, j] strides a row
    assert _buf(v, 0, 0, "is_write") == 1 and _buf(v, 0, 0, "stride_innermost") == 0
    strides = sorted([_buf(v, 0, 1, "stride_innermost"), _buf(v, 0, 2, "stride_innermost")])
    assert strides == [1.0, 64.0]
    # every buffer is 64x64 floats: 16 KiB distinct
    for b in range(3):
        assert _buf(v, 0, b, "log_unique_bytes") == math.log2(1 + 64 * 64 * 4)
    assert _col(v, 0, "innermost_vectorized") == 0 and _col(v, 0, "n_parallel") == 0


def test_schedule_changes_show_up(mm64):
    sch, b, (i0, j0, k, i1, j1) = register_tiled(mm64)
    wb = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j1)
    sch.annotate(k, "pragma_auto_unroll_max_step", 64)
    sch.decompose_reduction(b, k)
    v = extract_features(sch.mod["main"], n_cores=2)
    assert _col(v, 0, "innermost_vectorized") == 1
    assert _col(v, 0, "log_vector_extent") == math.log2(17)
    assert _col(v, 0, "log_parallel_extent") == math.log2(1 + 16 * 4)
    assert _col(v, 0, "parallel_outermost") == 1
    assert _col(v, 0, "writes_local") == 1
    # lowering compacts the accumulator to one 4 x 16 tile per parallel iteration
    assert _col(v, 0, "log_local_tile_elems") == math.log2(1 + 64)
    assert _col(v, 0, "log_auto_unroll_step") == math.log2(65)
    # the unrolled part: i1 (4) x j1 vectorized... 4 * 16 > 64 would stop; i1 alone (4) fits
    assert _col(v, 0, "log_auto_unrolled_iters") > 0
    rows = store_features(sch.mod["main"])
    assert rows.shape == (3, STORE_LEN)  # init, update, write-back
    plain = extract_features(mm64)
    assert not np.array_equal(plain, v)


def test_micro_kernel_of_a_register_tiled_matmul(mm64):
    sch, _, (*_, j1) = register_tiled(mm64)
    sch.vectorize(j1)
    v = extract_features(sch.mod["main"])
    # inside the innermost reduction loop k: a 4 x 16 accumulator tile, reading 4 of A and 16 of B per k
    assert _col(v, 0, "has_micro_kernel") == 1
    assert _col(v, 0, "log_micro_iters") == math.log2(1 + 64)
    assert _col(v, 0, "log_micro_write_elems") == math.log2(1 + 64)
    assert _col(v, 0, "log_micro_read_elems") == math.log2(1 + 4 + 16)
    assert _col(v, 0, "micro_flop_per_read") == pytest.approx(2 * 64 / 20)
    assert _col(v, 0, "micro_vectorized") == 1
    assert _col(v, 0, "log_micro_reduction_extent") == math.log2(1 + 64)
    assert _col(v, 0, "micro_depth") == 2
    # the plain i, j, k nest has k innermost: no loops inside it, a one-element "tile"
    plain = extract_features(mm64)
    assert _col(plain, 0, "has_micro_kernel") == 1 and _col(plain, 0, "micro_depth") == 0
    assert _col(plain, 0, "log_micro_write_elems") == math.log2(2)
    # a store without a reduction loop (the init) has none
    rows = store_features(Schedule(mm64).mod["main"])
    init_rows = [r for r in rows if r[STORE_FEATURES.index("is_init")] == 1]
    assert init_rows and all(r[STORE_FEATURES.index("has_micro_kernel")] == 0 for r in init_rows)


def test_register_facts_of_the_micro_kernel(mm64):
    # 4 x 16 tile vectorized along j: 4 * 16 / 8 = 8 accumulator vectors + 2 vectors of B + a broadcast of A
    sch, b, (i0, j0, k, i1, j1) = register_tiled(mm64)
    sch.vectorize(j1)
    v = extract_features(sch.mod["main"])
    assert _col(v, 0, "micro_acc_vectors") == 8
    assert _col(v, 0, "micro_registers_fit") == 1
    assert _col(v, 0, "micro_unrolled_share") == pytest.approx(1 / 4)  # no unroll pragma: one of i1's 4 rows
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    unrolled = extract_features(sch.mod["main"])
    assert _col(unrolled, 0, "micro_unrolled_share") == 1  # the whole i1 loop (4 <= 64) becomes straight code
    # a 16 x 16 tile needs 32 accumulators: more than the 16 AVX2 registers
    sch2 = Schedule(mm64)
    i, j, kk = sch2.get_loops(sch2.get_block("C"))
    j0, j1 = sch2.split(j, factors=[None, 16])
    i0, i1 = sch2.split(i, factors=[None, 16])
    sch2.reorder(i0, j0, kk, i1, j1)
    sch2.vectorize(j1)
    big = extract_features(sch2.mod["main"])
    assert _col(big, 0, "micro_acc_vectors") == 32 and _col(big, 0, "micro_registers_fit") == 0


def test_a_copy_store_outranks_the_init_when_it_runs_more_often(mm64):
    # a cache_read of B computed inside the i loop: the copy runs 64 times (64 x 64 x 64 iterations, no flops);
    # it must take the second slot, ahead of the 64 x 64 init, so slot contents do not depend on program order
    sch = Schedule(mm64)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    cr = sch.cache_read(b, 1, "global")
    sch.compute_at(cr, i)
    sch.decompose_reduction(b, j)
    v = extract_features(sch.mod["main"])
    assert _col(v, 0, "log_total_flop") == math.log2(1 + 2 * 64 ** 3)
    assert _col(v, 1, "log_float_ops") == 0 and _col(v, 1, "is_init") == 0
    assert _col(v, 1, "log_iterations") == pytest.approx(math.log2(1 + 64 ** 3))
    assert _col(v, 2, "log_iterations") == pytest.approx(math.log2(1 + 64 ** 2))  # C_init: one per output
    assert v[-len(SUM_FEATURES):][0] == 3
