"""Small helpers shared by the hand-written spaces (finding the main block, the CPU epilogue)."""
from __future__ import annotations

import tunefarm
from tunefarm.search import block_info


def reduction_block(sch: tunefarm.Schedule, preferred: str | None = None):
    """The block to tile: ``preferred`` if the function has it, else its only reduction block."""
    func = sch.mod["main"]
    names = block_info.leaf_blocks(func)
    if preferred in names:
        return sch.get_block(preferred)
    reductions = [n for n in names if block_info.block_realize(func, n).block.is_reduction]
    if len(reductions) != 1:
        raise tunefarm.ScheduleError("search space", f"expected one reduction block, found {reductions}")
    return sch.get_block(reductions[0])


def sample_unroll(sch: tunefarm.Schedule, loop) -> None:
    """Unroll inner loops of ``loop`` up to a sampled number of steps (0, 16, 64 or 512)."""
    step = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25])
    sch.annotate(loop, "pragma_auto_unroll_max_step", step)


def vectorize_innermost(sch: tunefarm.Schedule, block) -> None:
    """Vectorize the innermost loop of ``block`` when it is legal (spatial, no more than 64 lanes)."""
    loops = sch.get_loops(block)
    if not loops:
        return
    ext = sch.get(loops[-1]).const_extent()
    if ext is None or ext < 2 or ext > 64:
        return
    try:
        sch.vectorize(loops[-1])
    except tunefarm.ScheduleError:
        pass


def tile_ssrsrs(sch: tunefarm.Schedule, block, max_innermost_factor: int = 64):
    """Multi-level tiling ``SSRSRS`` of ``block``: each spatial loop in 4 levels, each reduction loop in 2.

    Returns ``(spatial_levels, reduction_levels)``: four and two lists of loops, outermost level first.
    """
    kinds = block_info.loop_kinds(sch.mod["main"], sch.get(block).name)
    s_levels = [[], [], [], []]
    r_levels = [[], []]
    for loop, kind in zip(sch.get_loops(block), kinds):
        if kind == "R":
            parts = sch.split(loop, factors=sch.sample_perfect_tile(loop, n=2, max_innermost_factor=16))
            for lvl, p in enumerate(parts):
                r_levels[lvl].append(p)
        else:
            parts = sch.split(loop, factors=sch.sample_perfect_tile(loop, n=4,
                                                                     max_innermost_factor=max_innermost_factor))
            for lvl, p in enumerate(parts):
                s_levels[lvl].append(p)
    sch.reorder(*s_levels[0], *s_levels[1], *r_levels[0], *s_levels[2], *r_levels[1], *s_levels[3])
    return s_levels, r_levels


def accumulate_locally(sch: tunefarm.Schedule, block, at_loop, epilogues=()):
    """Accumulate ``block`` in a ``local`` buffer written back under ``at_loop``; fold elementwise
    ``epilogues`` (block names, in order) into the write-back where the schedule allows it (an epilogue that
    cannot be folded stays a block of its own)."""
    writeback = sch.cache_write(block, 0, "local")
    for name in epilogues:
        try:
            sch.reverse_compute_inline(sch.get_block(name))
        except tunefarm.ScheduleError:
            break
    sch.reverse_compute_at(writeback, at_loop)
    return writeback
