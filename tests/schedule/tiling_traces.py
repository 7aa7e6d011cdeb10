"""MetaSchedule-style multi-level tiling traces on te workloads (dense + bias + ReLU, conv2d).

The search replays traces shaped like these for every candidate, so the replay tests and
``benchmarks/bench_replay.py`` use them besides the course's matmul trace. ``multi_level_tiling`` is the
``SSRSRS`` rule with a ``local`` write cache, epilogues folded into the write-back, and the CPU
postprocessing (fuse + parallel, vectorize, unroll, decompose_reduction), all as plain schedule calls.
"""
from __future__ import annotations

from tunefarm import te
from tunefarm.ir.function import PrimFunc
from tunefarm.schedule import Schedule, ScheduleError


def dense_bias_relu(n: int = 1, k: int = 784, m: int = 128) -> PrimFunc:
    """``relu(x @ w.T + b)`` (blocks ``T_matmul_NT``, ``T_add``, ``relu``): the MLP layer."""
    x = te.placeholder((n, k), name="x")
    w = te.placeholder((m, k), name="w")
    b = te.placeholder((m,), name="b")
    return te.create_prim_func([x, w, b, te.ops.dense_bias_relu(x, w, b)])


def conv2d(n: int = 1, ci: int = 64, hw: int = 56, co: int = 64, kk: int = 3, pad: int = 1) -> PrimFunc:
    """NCHW convolution with padding (blocks ``pad_temp``, ``conv2d_nchw``): a ResNet layer."""
    data = te.placeholder((n, ci, hw, hw), name="data")
    kernel = te.placeholder((co, ci, kk, kk), name="kernel")
    return te.create_prim_func([data, kernel, te.ops.conv2d(data, kernel, padding=pad)])


def multi_level_tiling(sch: Schedule, block: str, inline=(), epilogues=(), max_innermost_factor: int = 64) -> Schedule:
    """Tile ``block`` ``SSRSRS`` (4 spatial levels, 2 reduction levels), accumulate it in a ``local`` cache
    written back at the second spatial level, then postprocess for a CPU. ``inline``: producers to inline
    first; ``epilogues``: consumers folded into the write-back (each only if the schedule allows it)."""
    for name in inline:
        sch.compute_inline(sch.get_block(name))
    b = sch.get_block(block)
    root = sch.get_block("root")
    kinds = [iv.iter_type for iv in sch.get(b).iter_vars]  # te blocks: one loop per iteration variable
    s_levels: list[list] = [[], [], [], []]
    r_levels: list[list] = [[], []]
    for loop, kind in zip(sch.get_loops(b), kinds):
        n = 4 if kind == "S" else 2
        parts = sch.split(loop, sch.sample_perfect_tile(loop, n=n, max_innermost_factor=max_innermost_factor))
        for lvl, p in enumerate(parts):
            (s_levels if kind == "S" else r_levels)[lvl].append(p)
    sch.reorder(*s_levels[0], *s_levels[1], *r_levels[0], *s_levels[2], *r_levels[1], *s_levels[3])
    sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
    writeback = sch.cache_write(b, 0, "local")
    for name in epilogues:
        try:
            sch.reverse_compute_inline(sch.get_block(name))
        except ScheduleError:
            break
    sch.reverse_compute_at(writeback, s_levels[1][-1])
    sch.annotate(root, "meta_schedule.parallel", 16)
    unroll = sch.sample_categorical([0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25])
    sch.annotate(root, "meta_schedule.unroll_explicit", unroll)
    sch.enter_postproc()
    sch.unannotate(root, "meta_schedule.parallel")
    sch.unannotate(root, "meta_schedule.unroll_explicit")
    outer = sch.fuse(*s_levels[0], *s_levels[1])
    if sch.get(outer).const_extent() > 1:  # a loop of one iteration binds nothing: nothing to parallelize
        sch.parallel(outer)
    sch.annotate(outer, "pragma_auto_unroll_max_step", unroll)
    inner = sch.get_loops(b)[-1]
    if sch.get(inner).const_extent() > 1:
        sch.vectorize(inner)
    wb_loops = sch.get_loops(writeback)
    # the write-back sits under the fused outer loop; with no loop of its own left there is nothing to vectorize
    # (its last loop would be the outer, parallel and annotated one)
    if len(wb_loops) > 1 and sch.get(wb_loops[-1]).const_extent() > 1:
        sch.vectorize(sch.fuse(wb_loops[-1]))
    sch.decompose_reduction(b, sch.get_loops(b)[1])
    return sch


def dense_trace_schedule(seed: int = 1) -> Schedule:
    return multi_level_tiling(Schedule(dense_bias_relu(), seed=seed), "T_matmul_NT", inline=["T_add"],
                              epilogues=["relu"])


def conv2d_trace_schedule(seed: int = 1) -> Schedule:
    return multi_level_tiling(Schedule(conv2d(), seed=seed), "conv2d_nchw", inline=["pad_temp"],
                              max_innermost_factor=32)
