"""The auto space's register-tile (micro-kernel) sketch: it reaches the BLIS inner-kernel structure on the
MLP's dense layer (register tile of whole vectors, write-back right outside the reduction, unrolled), the
layout rewrite then stores the constant weights as contiguous ``[N / cols][K][cols]`` panels, and the
compiled programs equal numpy."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import nn
from tunefarm.codegen.layout import rewrite_layout
from tunefarm.graph.params import random_mlp_params
from tunefarm.graph.pipeline import prepare
from tunefarm.graph.tasks import extract_tasks
from tunefarm.nn.models import mlp
from tunefarm.runtime import build
from tunefarm.search import block_info
from tunefarm.search.postprocs import apply_postprocs, default_postprocs, verify_program
from tunefarm.search.space import AutoSpace
from tunefarm.search.workloads import builtin_workload


def _mlp_kernels(batch: int):
    params = random_mlp_params(0)
    mod, named = mlp(params).export({"forward": {"x": nn.spec.Tensor((batch, 784), "float32")}})
    tasks = extract_tasks(prepare(mod, named, None), prepared=True)
    return [t.func.with_name("main") for t in tasks]


@pytest.fixture(scope="module")
def dense16():
    return _mlp_kernels(16)[0]  # relu(x @ w0.T + b0), x of 16 rows


def _micro_seeds(space, func, n):
    out = []
    for seed in range(200):
        sch = space.sample(func, seed)
        dec = [d for i, d in sorted(sch.trace.decisions.items()) if sch.trace.insts[i].kind == "SamplePerfectTile"]
        kinds = [i.kind for i in sch.trace.insts]
        register_tile = len(dec) == 3 and len(dec[0]) == 4 and dec[0][2] == dec[1][2] == 1 \
            and dec[1][3] % 8 == 0 and dec[0][3] > 1  # i: [., ., 1, rows], j: [., ., 1, whole vectors]
        if "CacheWrite" in kinds and register_tile:
            out.append((seed, sch))
            if len(out) == n:
                break
    return out


def _run(func, arrays):
    arrays = [a.copy() for a in arrays]
    build(func, "llvm")["main"](*arrays)
    return arrays[-1]


def _tiles(space, workload):
    """``(rows, cols, accumulators)`` of the register tiles the space offers for a matmul's ``C``."""
    _, options = space._microkernel_plan(builtin_workload(workload), "C")
    return {(rows[0], cols, acc) for rows, cols, acc, _ in options}


def test_register_tiles_fit_the_register_file():
    space = AutoSpace(n_cores=1, vector_lanes=8)
    tiles = _tiles(space, "matmul-64x128x64")
    assert (4, 16, 8) in tiles and (2, 32, 8) in tiles and (8, 8, 8) in tiles
    # accumulators + one vector per column group + one broadcast <= 16 AVX2 registers
    assert all(r * (c // 8) + c // 8 + 1 <= 16 for r, c, _ in tiles)
    assert (8, 16, 16) not in tiles  # 16 accumulators would spill
    assert {c for _, c, _ in _tiles(space, "matmul-64x10x64")} == {10}  # a short output is one (ragged) tile
    wide = AutoSpace(n_cores=1, vector_lanes=16, vector_registers=32)
    assert (8, 32, 16) in _tiles(wide, "matmul-64x128x64")  # AVX-512: twice the registers


def test_no_register_tile_sketch_for_a_single_row(dense16):
    one_row = _mlp_kernels(1)[0]
    space = AutoSpace(n_cores=1)
    assert space._microkernel_plan(one_row, "matmul") is None  # 4 accumulators at most: latency-bound
    assert space._microkernel_plan(dense16, "matmul") is not None


def test_sampling_never_trips_over_a_folded_epilogue(dense16):
    """Folding bias + ReLU into the write-back removes the ``relu`` block; later rules must not look it up."""
    space = AutoSpace(n_cores=1)
    folded = 0
    for seed in range(24):
        sch = space.sample(dense16, seed)
        folded += "relu" not in block_info.leaf_blocks(sch.mod["main"])
    assert folded >= 6  # write-cache sketches (levels 1, 2, register tile) fold the epilogue


def test_register_tile_sketch_reaches_the_micro_kernel(dense16):
    space = AutoSpace(n_cores=1, vector_lanes=8)
    found = _micro_seeds(space, dense16, 3)
    assert len(found) == 3
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype("float32") for p in dense16.params]
    expect = np.maximum(arrays[0] @ arrays[1] + arrays[2], 0)
    for seed, sch in found:
        unroll = [list(i.attrs[0]) for i in sch.trace.insts if i.kind == "SampleCategorical"]
        apply_postprocs(sch, default_postprocs())
        out = sch.mod["main"]
        verify_program(out)
        # the accumulator: a local tile written back (with bias + ReLU) right after the reduction loop
        wb = [n for n in block_info.leaf_blocks(out) if n.endswith("_local")]
        assert wb and "relu" not in block_info.leaf_blocks(out)
        realize, loops = block_info.locate(out, "matmul")
        assert loops[-1].kind == "vectorized" and loops[-1].const_extent() % 8 == 0
        assert loops[0].annotations.get("pragma_auto_unroll_max_step", 0) > 0 or \
            any(lp.annotations.get("pragma_auto_unroll_max_step", 0) > 0 for lp in loops)
        # depth 0 is not offered (the register tile is always unrolled), nor one below rows x inner reduction step
        tiles = [d for i, d in sorted(sch.trace.decisions.items()) if sch.trace.insts[i].kind == "SamplePerfectTile"]
        assert len(unroll) == 1 and 0 not in unroll[0] and min(unroll[0]) >= tiles[0][3] * tiles[2][1]
        # the constant weights become contiguous [N / cols][K][cols] panels
        packed, pack = rewrite_layout(out, 1)
        cols = loops[-1].const_extent()
        shape = packed.params[1].const_shape()
        assert shape[-1] == cols and np.prod(shape) == 784 * 128
        suffixes = [int(np.prod(shape[k:])) for k in range(len(shape))]
        assert 784 * cols in suffixes  # one panel: all of K times the tile's columns, contiguous
        got_arrays = list(arrays)
        got_arrays[1] = pack(arrays[1])
        np.testing.assert_allclose(_run(packed, got_arrays), expect, rtol=1e-4, atol=1e-4)


def test_register_tile_sketch_on_the_ten_wide_output_layer():
    """The MLP's second layer (128 -> 10): ten columns are one ragged tile; results still equal numpy."""
    dense2 = _mlp_kernels(16)[1]
    space = AutoSpace(n_cores=1)
    plan = space._microkernel_plan(dense2, "matmul")
    assert plan is not None and {cols for _, cols, _, _ in plan[1]} == {10}
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype("float32") for p in dense2.params]
    expect = arrays[0] @ arrays[1] + arrays[2]
    seen = 0
    for seed in range(60):
        sch = space.sample(dense2, seed)
        dec = [d for i, d in sorted(sch.trace.decisions.items()) if sch.trace.insts[i].kind == "SamplePerfectTile"]
        if "CacheWrite" not in [i.kind for i in sch.trace.insts] or dec[1] != [1, 1, 1, 10]:
            continue
        apply_postprocs(sch, default_postprocs())
        np.testing.assert_allclose(_run(sch.mod["main"], arrays), expect, rtol=1e-4, atol=1e-4)
        seen += 1
        if seen == 2:
            break
    assert seen == 2
