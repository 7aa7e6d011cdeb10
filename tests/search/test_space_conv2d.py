"""The auto space's register-tile sketch on NCHW convolutions: tiles whose vector is one (ragged) register of
an image row, rows over output channels and image rows at once, the padding computed once at the root, the
whole inner tile unrolled; the compiled programs equal numpy (padded, strided and unpadded convolutions)."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.runtime import build
from tunefarm.search import block_info
from tunefarm.search.postprocs import PostprocError, apply_postprocs, default_postprocs, verify_program
from tunefarm.search.space import AutoSpace, ScheduleFn
from tunefarm.search.workloads import builtin_workload

CONV = "conv2d_nchw"


def _conv_reference(data, weight, stride, pad):
    n, c, h, w = data.shape
    f, _, kh, kw = weight.shape
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    padded = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, f, oh, ow), "float64")
    for ry in range(kh):
        for rx in range(kw):
            window = padded[:, :, ry:ry + stride * oh:stride, rx:rx + stride * ow:stride]
            out += np.einsum("nchw,fc->nfhw", window, weight[:, :, ry, rx])
    return out.astype("float32")


def _is_register_tile(sch) -> bool:
    """The register-tile sketch never offers unroll depth 0 (the tile must be unrolled to live in registers)."""
    return any(inst.kind == "SampleCategorical" and 0 not in inst.attrs[0] and 1 not in inst.attrs[0]
               for inst in sch.trace.insts)


def _register_tile_samples(space, func, n, seeds=range(300)):
    out = []
    for seed in seeds:
        sch = space.sample(func, seed)
        if _is_register_tile(sch):
            out.append((seed, sch))
            if len(out) == n:
                break
    return out


def test_tiles_of_a_28_wide_image_row():
    space = AutoSpace(n_cores=1, vector_lanes=8, vector_registers=16)
    func = builtin_workload("conv2d-1x16x28x28-16x3x3")
    c, options = space._microkernel_plan(func, CONV)
    kinds = block_info.loop_kinds(func, CONV)
    f_loop, y_loop = [k for k, kind in enumerate(kinds) if kind == "S" and k != c and k != 0]
    assert {cols for _, cols, _, _ in options} == {7}  # one ragged register; 14 or 28 lanes would be scalarized
    weight = {tuple(sorted(rows.items())): w for rows, _, _, w in options}
    two_d = [(rows, acc) for rows, _, acc, _ in options if len(rows) == 2]
    assert two_d and all(acc <= 8 for _, acc in two_d)  # two row loops: half the register file
    assert all(acc + 2 <= 16 for _, _, acc, _ in options)
    # channels x rows (4 x 2) shares both the input vectors and the weight broadcasts: the heaviest tile;
    # channels alone (8) share only the input vectors; image rows alone (14) reload a vector per accumulator
    best = max(weight, key=weight.get)
    assert best == ((f_loop, 4), (y_loop, 2))
    assert weight[((f_loop, 8),)] > weight[((y_loop, 14),)]


def test_28_wide_rows_never_tile_as_14_or_28_lanes_but_short_rows_still_do():
    space = AutoSpace(n_cores=1, vector_lanes=8)
    assert space._tile_cols(28) == [7]
    assert space._tile_cols(128) == [8, 16, 32]
    assert space._tile_cols(10) == [10]  # a short output stays one tile
    assert space._tile_cols(26) == [13, 26]  # no single-register width: the wider ragged ones remain
    assert space._vector_pieces(7) == 3 and space._vector_pieces(16) == 2 and space._vector_pieces(10) == 2


@pytest.mark.parametrize("name,stride,pad", [("conv2d-1x16x28x28-16x3x3", 1, 1),
                                             ("conv2d-1x8x14x14-16x3x3-s2", 2, 1),
                                             ("conv2d-1x8x12x12-16x3x3-p0", 1, 0)])
def test_register_tile_programs_equal_numpy(name, stride, pad):
    func = builtin_workload(name)
    space = AutoSpace(n_cores=1)
    found = _register_tile_samples(space, func, 2)
    assert len(found) == 2
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype("float32") for p in func.params]
    expect = _conv_reference(arrays[0], arrays[1], stride, pad)
    for seed, sch in found:
        before = sch.mod["main"]
        if pad:  # the padding is computed once, at the root, as one loop of rows with a vector row inside
            _, loops = block_info.locate(before, "pad_temp")
            assert len(loops) == 2 and loops[-1].const_extent() == func.params[0].const_shape()[-1] + 2 * pad
        else:
            assert "pad_temp" not in block_info.leaf_blocks(before)
        # the unroll depth covers the tile's rows times the inner reduction steps, so the whole tile unrolls
        tiles = [d for i, d in sorted(sch.trace.decisions.items()) if sch.trace.insts[i].kind == "SamplePerfectTile"]
        spatial, reduce = [d for d in tiles if len(d) == 4], [d for d in tiles if len(d) == 2]
        assert len(spatial) == 4 and len(reduce) == 3 and all(d[2] == 1 for d in spatial)
        statements = int(np.prod([d[3] for d in spatial[:-1]]) * np.prod([d[1] for d in reduce]))
        (depth_inst, depth_index), = [(inst, sch.trace.decisions[i]) for i, inst in enumerate(sch.trace.insts)
                                      if inst.kind == "SampleCategorical"]
        assert depth_inst.attrs[0][depth_index] >= statements
        assert spatial[-1][3] in space._tile_cols(func.params[-1].const_shape()[-1])
        apply_postprocs(sch, default_postprocs())
        out = sch.mod["main"]
        verify_program(out)
        _, loops = block_info.locate(out, CONV)
        assert loops[-1].kind == "vectorized" and loops[-1].const_extent() == spatial[-1][3]
        got = [a.copy() for a in arrays]
        build(out, "llvm")["main"](*got)
        np.testing.assert_allclose(got[-1], expect, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["conv2d-1x16x28x28-16x3x3", "conv2d-1x8x14x14-16x3x3-s2",
                                  "conv2d-1x8x12x12-16x3x3-p0", "matmul-64", "dense-relu-64-32"])
def test_every_sample_postprocesses_or_is_rejected_cleanly(name):
    """Sketch choices never break sampling; register tiles are sized so the code-size check never rejects them."""
    func = builtin_workload(name)
    space = AutoSpace(n_cores=1)
    tiles = 0
    for seed in range(30):
        sch = space.sample(func, seed)
        register_tile = _is_register_tile(sch)
        try:
            apply_postprocs(sch, default_postprocs())
        except PostprocError:
            assert not register_tile, f"seed {seed}: a register-tile sample was rejected"
            continue
        verify_program(sch.mod["main"])
        tiles += register_tile
    assert tiles >= 3 or name.startswith("dense")  # a batch-1 dense layer has no register-tile sketch


@pytest.mark.parametrize("name,stride,pad", [("conv2d-1x8x28x28-16x3x3", 1, 1),
                                             ("conv2d-1x8x14x14-16x3x3-s2", 2, 1),
                                             ("conv2d-1x8x13x13-8x3x3-p0", 1, 0)])
def test_handwritten_conv2d_space_register_tiles_and_equals_numpy(name, stride, pad):
    from search_spaces.conv2d import conv2d_space

    func = builtin_workload(name)
    rng = np.random.default_rng(2)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype("float32") for p in func.params]
    expect = _conv_reference(arrays[0], arrays[1], stride, pad)
    ow = func.params[-1].const_shape()[-1]
    for seed in range(3):
        sch = ScheduleFn(conv2d_space).sample(func, seed)
        out = sch.mod["main"]
        if pad:  # padding at the root: one loop of rows, each row one vector
            _, loops = block_info.locate(out, "pad_temp")
            assert [lp.kind for lp in loops] == ["serial", "vectorized"]
        _, loops = block_info.locate(out, CONV)
        # the row's vector: the widest divisor of the output width within one register (28 -> 7, 11 -> 1)
        assert loops[-1].kind == "vectorized" and loops[-1].const_extent() == max(
            d for d in range(1, 9) if ow % d == 0)
        got = [a.copy() for a in arrays]
        build(out, "llvm")["main"](*got)
        np.testing.assert_allclose(got[-1], expect, rtol=1e-4, atol=1e-4)
