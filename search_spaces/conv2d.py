"""Search space for NCHW ``conv2d`` from ``te.ops.conv2d`` (blocks ``pad_temp`` and ``conv2d_nchw``).

A register-tile kernel, the shape the auto space's micro-kernel sketch found fastest here:

- the padding is computed once, at the root (one loop over the padded rows, each row a vector): inlined, the
  kernel's vector loads become guarded gathers (4.2x slower measured on a 28 x 28 image);
- the innermost tile is ``f_rows x y_rows`` accumulators of one vector of an image row: ``cols`` is the widest
  divisor of the output width that fits one register (a 28-wide row: 7 lanes; 14 or 28 lanes would be kept as
  scalars between loop iterations by LLVM); output channels share the input vectors, image rows share the
  weight broadcasts (4 x 2 rows measured fastest, 1.15-1.2x faster than 8 channels alone);
- the reduction's inner step is short (up to 4 channels, whole 3-tap windows possible) and unrolled with the
  tile, the accumulators are written back right outside the reduction, outer tiles run in parallel.

Eight random samples on ``conv2d-1x64x28x28-64x3x3`` (one core): best 1.46 ms, median 2.3 ms; the previous
version of this space (padding inlined, free tile sizes) gave 7.7 and 19 ms, three of its eight samples over
the code-size limit.
"""
import tunefarm

from search_spaces.common import reduction_block, vectorize_innermost

VECTOR_LANES = 8  # float32 lanes of an AVX2 register


def _row_width(extent: int) -> int:
    """The widest divisor of ``extent`` that fits one vector register."""
    return max(d for d in range(1, min(extent, VECTOR_LANES) + 1) if extent % d == 0)


def conv2d_space(sch: tunefarm.Schedule):
    conv = reduction_block(sch, "conv2d_nchw")
    try:
        pad = sch.get_block("pad_temp")
        pad_loops = sch.get_loops(pad)
        sch.fuse(*pad_loops[:-1])
        sch.vectorize(sch.get_loops(pad)[-1])
    except tunefarm.ScheduleError:
        pass  # no padding block (padding=0)
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    f0, f1, f_rows = sch.split(f, factors=sch.sample_perfect_tile(f, n=3, max_innermost_factor=8))
    y0, y1, y_rows = sch.split(y, factors=sch.sample_perfect_tile(y, n=3, max_innermost_factor=2))
    ow = sch.get(x).const_extent()
    cols = _row_width(ow)
    x0, x_cols = sch.split(x, factors=[ow // cols, cols])
    rc0, rc1 = sch.split(rc, factors=sch.sample_perfect_tile(rc, n=2, max_innermost_factor=4))
    ry0, ry1 = sch.split(ry, factors=sch.sample_perfect_tile(ry, n=2, max_innermost_factor=3))
    rx0, rx1 = sch.split(rx, factors=sch.sample_perfect_tile(rx, n=2, max_innermost_factor=3))
    sch.reorder(n, f0, y0, x0, f1, y1, rc0, ry0, rx0, rc1, ry1, rx1, f_rows, y_rows, x_cols)
    writeback = sch.cache_write(conv, 0, "local")
    sch.reverse_compute_at(writeback, y1)
    outer = sch.fuse(n, f0, y0, x0)
    if sch.get(outer).const_extent() > 1:  # a single outer tile binds no spatial variable: nothing to share out
        sch.parallel(outer)
    sch.vectorize(x_cols)
    step = sch.sample_categorical(candidates=[16, 64], probs=[0.5, 0.5])  # never rolled: registers
    sch.annotate(outer, "pragma_auto_unroll_max_step", step)
    sch.decompose_reduction(conv, rc0)
    vectorize_innermost(sch, writeback)
    return sch
