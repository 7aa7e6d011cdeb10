"""Search space for NCHW ``conv2d`` from ``te.ops.conv2d`` (blocks ``pad_temp`` and ``conv2d_nchw``).

The padding is inlined into the convolution (its loads become guarded), the convolution is tiled
``SSRSRS`` over (n, f, y, x | rc, ry, rx) and accumulated in a ``local`` buffer per outer tile; outer tiles
run in parallel, the innermost x tile is vectorized.
"""
import tunefarm

from search_spaces.common import accumulate_locally, reduction_block, sample_unroll, tile_ssrsrs, vectorize_innermost


def conv2d_space(sch: tunefarm.Schedule):
    conv = reduction_block(sch, "conv2d_nchw")
    try:
        sch.compute_inline(sch.get_block("pad_temp"))
    except tunefarm.ScheduleError:
        pass  # no padding block (padding=0)
    s_levels, _ = tile_ssrsrs(sch, conv, max_innermost_factor=32)
    writeback = accumulate_locally(sch, conv, s_levels[1][-1])
    outer = sch.fuse(*s_levels[0], *s_levels[1])
    sch.parallel(outer)
    sch.vectorize(s_levels[3][-1])
    sample_unroll(sch, outer)
    sch.decompose_reduction(conv, sch.get_loops(conv)[1])
    vectorize_innermost(sch, writeback)
    return sch
