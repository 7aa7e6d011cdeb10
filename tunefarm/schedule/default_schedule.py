"""The schedule of a kernel nobody tuned: simple, always legal, and fast enough not to embarrass.

A model compiled before (or without) tuning still has to run at a sane speed, and ``compile`` must never
fail because of a kernel's schedule. Rules, applied block by block with the ordinary ``Schedule`` API:

- reduction blocks (matmul, dense, conv2d, pooling) whose innermost spatial extent is a multiple of the
  vector width become a register-tiled micro-kernel: the last two spatial loops are split into a tile of
  ``rows x vector`` accumulators (at most 12 AVX2 registers, e.g. 4 x 16 for a 64x784 @ 784x128 matmul),
  the reduction loops run between the tile loops and the tile, the accumulators live in a ``local`` cache
  (``cache_write`` + ``reverse_compute_at``, which LLVM keeps in registers), the rows are unrolled and the
  vector vectorized, and element-wise epilogues (bias, ReLU) are folded into the write-back; a short row
  that does not vectorize (the MLP's 10 classes) gets the same tile with scalar accumulators, unrolled;
- other reductions: the reduction loops move outside the innermost spatial loop, so it walks the output and
  the weights contiguously, vectorized when its extent allows;
- element-wise blocks: the innermost loop is vectorized the same way;
- nothing is parallelized (the host target is one core by default, and threads cost more than they give
  on kernels this small).

A kernel that is already scheduled (a parallel, vectorized or unrolled loop, or a ``local`` buffer: the
course's ``update_func`` with a tuned ``linear0``) is left alone, and so is any block under a non-serial
loop. Every block's rule runs on a copy of the schedule; a ``ScheduleError`` keeps the block as it was (any
other exception too, logged as a warning: that would be a bug in a primitive), so a kernel whose blocks all
failed is returned unscheduled.
"""
from __future__ import annotations

import logging

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from .error import ScheduleError
from .primitives.query import binding_kinds
from .schedule import Schedule
from .tree import all_block_realizes, find_block, iter_paths

log = logging.getLogger("tunefarm.default_schedule")

VECTOR_LANES = 8  # float32 lanes of an AVX2 register; a multiple of it vectorizes cleanly
MAX_VECTOR = 64  # longest vectorized loop (longer ones are split so the vector stays in registers)


def _block_names(func: PrimFunc) -> list[str]:
    return [r.block.name for r in all_block_realizes(func) if r.block.name != "root"]


def _loop_kinds(sch, block_rv, loops) -> list[str]:
    """For each loop above the block: "S" (feeds only spatial iter vars), "R" (reduction) or "" (unused)."""
    fname = sch._lookup(block_rv, "default_schedule")[0]
    realize = find_block(sch.mod[fname], sch.get(block_rv).name)[-1]
    kinds = binding_kinds(realize)
    out = []
    for lp in loops:
        var = sch.get(lp).loop_var
        k = kinds.get(var, set())
        out.append("R" if "R" in k else ("S" if k else ""))
    return out


def _const_extent(sch, loop) -> int | None:
    ext = sch.get(loop).extent
    return ext.value if isinstance(ext, E.IntImm) else None


def _vector_factor(extent: int | None) -> int | None:
    """The vector length for a loop of ``extent`` (None: leave it scalar)."""
    if extent is None or extent % VECTOR_LANES:
        return None
    f = min(extent, MAX_VECTOR)
    while extent % f:
        f -= VECTOR_LANES
    return f


def _vectorize_innermost(sch, block_rv) -> None:
    loops = sch.get_loops(block_rv)
    if not loops:
        return
    inner = loops[-1]
    f = _vector_factor(_const_extent(sch, inner))
    if f is None:
        return
    ext = _const_extent(sch, inner)
    if ext != f:
        _, inner = sch.split(inner, [None, f])
    sch.vectorize(inner)


MAX_ACCUMULATORS = 12  # vector registers for the accumulator tile (of 16 on AVX2: the rest hold operands)
MAX_SCALAR_TILE = 12  # a row this short that does not vectorize becomes unrolled scalar accumulators


def _tile_shape(ei: int | None, ej: int) -> tuple[int, int] | None:
    """``(rows, vector width)`` of the register tile: the most accumulators within budget."""
    best = None
    for v in range(VECTOR_LANES, min(ej, MAX_VECTOR) + 1, VECTOR_LANES):
        if ej % v:
            continue
        for m in range(1, 9):
            if (ei is None and m > 1) or (ei is not None and ei % m) or m * v // VECTOR_LANES > MAX_ACCUMULATORS:
                continue
            key = (m * v, -abs(m - 2 * v // VECTOR_LANES))  # ties: about 2 rows per vector (4 x 16 measured best)
            if best is None or key > best[0]:
                best = (key, (m, v))
    return best[1] if best else None


def _schedule_reduction(sch, block_rv) -> None:
    """Register-tiled micro-kernel: rows x vector accumulators in a local tile, reductions in between."""
    loops = sch.get_loops(block_rv)
    kinds = _loop_kinds(sch, block_rv, loops)
    spatial = [lp for lp, k in zip(loops, kinds) if k == "S"]
    reduce_ = [lp for lp, k in zip(loops, kinds) if k == "R"]
    if not spatial or not reduce_ or len(spatial) + len(reduce_) != len(loops):
        return _schedule_reduction_simple(sch, block_rv)
    j = spatial[-1]
    ej = _const_extent(sch, j)
    i = spatial[-2] if len(spatial) >= 2 and _const_extent(sch, spatial[-2]) not in (None, 1) else None
    shape = _tile_shape(_const_extent(sch, i) if i is not None else None, ej) if ej else None
    vector = shape is not None
    if shape is None and ej is not None and 1 < ej <= MAX_SCALAR_TILE:
        shape = (1, ej)  # a short odd row (10 classes): scalar accumulators, fully unrolled
    if shape is None:
        return _schedule_reduction_simple(sch, block_rv)
    m, v = shape
    outer = [lp for lp in spatial[:-1] if lp is not i]
    jo, ji = sch.split(j, [None, v])
    if i is not None and m > 1:
        io, ii = sch.split(i, [None, m])
        sch.reorder(*outer, io, jo, *reduce_, ii, ji)
    else:
        ii = None
        sch.reorder(*outer, *([i] if i is not None else []), jo, *reduce_, ji)
    writeback = sch.cache_write(block_rv, 0, "local")
    sch.reverse_compute_at(writeback, jo)
    init = sch.decompose_reduction(block_rv, reduce_[0])
    if ii is not None:
        sch.unroll(ii)
    mark = sch.vectorize if vector else sch.unroll
    mark(ji)
    _fold_epilogues(sch, writeback)
    mark(sch.get_loops(writeback)[-1])
    mark(sch.get_loops(init)[-1])


def _fold_epilogues(sch, writeback) -> None:
    """Element-wise consumers of the result (bias, ReLU) computed as the tile is written back."""
    while True:
        consumers = sch.get_consumers(writeback)
        if len(consumers) != 1 or _is_reduction(sch.get(consumers[0])):
            return
        trial = sch.copy()
        try:
            trial.reverse_compute_inline(consumers[0])
        except ScheduleError:
            return
        sch.reverse_compute_inline(consumers[0])


def _schedule_reduction_simple(sch, block_rv) -> None:
    """Reductions outside the innermost spatial loop, which is vectorized when its extent allows."""
    loops = sch.get_loops(block_rv)
    kinds = _loop_kinds(sch, block_rv, loops)
    spatial = [lp for lp, k in zip(loops, kinds) if k == "S"]
    reduce_ = [lp for lp, k in zip(loops, kinds) if k == "R"]
    if not spatial or not reduce_:
        return
    inner = spatial[-1]
    f = _vector_factor(_const_extent(sch, inner))
    if f is None:
        # no clean vector: still walk the output innermost for contiguous weight access
        sch.reorder(*[lp for lp in loops if lp is not inner], inner)
        return
    ext = _const_extent(sch, inner)
    if ext != f:
        outer, inner = sch.split(inner, [None, f])
        order = [lp for lp in loops if lp is not spatial[-1] and lp not in reduce_] + [outer] + reduce_ + [inner]
    else:
        order = [lp for lp in loops if lp is not inner and lp not in reduce_] + reduce_ + [inner]
    sch.reorder(*order)
    if sch.get(block_rv).init is not None:
        sch.decompose_reduction(block_rv, reduce_[0])
    sch.vectorize(inner)


def _is_reduction(block: S.Block) -> bool:
    return block.init is not None or any(iv.iter_type == "R" for iv in block.iter_vars)


def is_scheduled(func: PrimFunc) -> bool:
    """Whether someone already scheduled ``func`` (a non-serial loop or a ``local`` buffer anywhere)."""
    for path in iter_paths(func.body):
        node = path[-1]
        if isinstance(node, S.For) and node.kind != "serial":
            return True
        if isinstance(node, S.BlockRealize) and any(b.scope == "local" for b in node.block.alloc_buffers):
            return True
    return False


def default_schedule(func: PrimFunc) -> PrimFunc:
    """``func`` with the default schedule applied (``func`` itself when it is already scheduled or no rule
    applies)."""
    if is_scheduled(func):
        return func
    try:
        sch = Schedule(func)
        names = _block_names(func)
    except ScheduleError as e:  # pragma: no cover - a PrimFunc the schedule layer cannot even open
        log.debug("default schedule: %s left unscheduled (%s)", func.name, e)
        return func
    for name in names:
        trial = sch.copy()
        try:
            block = trial.get_block(name)
            if any(trial.get(lp).kind != "serial" for lp in trial.get_loops(block)):
                continue  # somebody already scheduled this block: keep their choice
            if _is_reduction(trial.get(block)):
                try:
                    _schedule_reduction(trial, block)
                except ScheduleError:  # the tiled rule does not apply: the simple one on a fresh copy
                    trial = sch.copy()
                    _schedule_reduction_simple(trial, trial.get_block(name))
            else:
                _vectorize_innermost(trial, block)
        except ScheduleError as e:
            log.debug("default schedule: block %s of %s kept as is (%s)", name, func.name, e)
            continue
        except Exception as e:  # noqa: BLE001 - compile must not fail on a default schedule
            log.warning("default schedule: block %s of %s kept as is after %s: %s", name, func.name,
                        type(e).__name__, e)
            continue
        sch = trial
    out = sch.mod["main"]
    return out if out.name == func.name else out.with_name(func.name)


__all__ = ["default_schedule", "is_scheduled"]
