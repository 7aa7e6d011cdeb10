"""Search spaces: how a workload turns into sampled schedules (traces with decisions).

``ScheduleFn`` wraps a user's stochastic schedule function (the course's ``stochastic_schedule_mm``): every
call samples one schedule. ``AutoSpace`` is the rule-based space for CPUs, in the spirit of MetaSchedule's
defaults:

- auto-inline: elementwise producers are inlined into their consumers, except conditional ones such as
  padding (MetaSchedule's ``disallow_if_then_else``: they get a compute location instead);
- multi-level tiling ``SSRSRS`` of reductions with data reuse (matmul, dense, conv2d), with the result
  accumulated in a ``local`` write cache (``cache_write`` + ``reverse_compute_at`` at a sampled tile level)
  into which elementwise epilogues (bias, ReLU) are folded by ``reverse_compute_inline``;
- a packing sketch: the operand that ignores some output dimension (B of ``A @ B``, the weights of a
  convolution) is copied into a contiguous ``local`` panel per outer tile and reused by all the others
  (``cache_read`` + ``compute_at``), as an expert's BLIS-style kernel does;
- a register-tile (micro-kernel) sketch, the BLIS inner kernel: the innermost spatial tile is ``rows x cols``
  with ``cols`` whole vectors of the contiguous dimension and ``rows * cols / lanes`` accumulators filling most
  of the vector register file (4 x 16 on AVX2: eight FMA chains, two weight vectors, one broadcast), the level
  above it is 1 so the write-back (with the epilogues) sits right outside the reduction, the reduction's
  inner step is 1, 2 or 4, and the unroll depth is never 0 (a rolled 4 x 16 tile ran 5x slower). Constant
  weights need no packing copy here: the compiled model stores them in the order the kernel reads them
  (``graph/layout.py``), so the kernel streams a contiguous ``[N / cols][K][cols]`` panel;
- for reductions with a small output whose inputs are contiguous along the reduction (a dense layer on one
  input row), an ``rfactor`` sketch: the reduction's inner part becomes vector lanes of partial sums, so the
  weights are read with contiguous vector loads instead of gathers;
- random compute location for the remaining producers;
- elementwise blocks get their innermost loop split so that it fits a vector;
- the root block is annotated with the parallel extent (sampled), the vector extent and the unroll depth
  (sampled from {0, 16, 64}); the postprocessors turn those into fuse+parallel / vectorize / unroll.
  MetaSchedule also offers 512. Here it is opt-in (``AutoSpace(unroll_steps=(0, 16, 64, 512))``): over
  1000+ measured trials of matmul 128^3 and dense+ReLU 784->128 a 512 program was never the best of an
  evolutionary job, while its builds took 6-10x longer than the others (760 ms vs 56-128 ms mean for the
  matmul), so a quarter of the samples cost most of the tuning time.

Tile sizes are ``sample_perfect_tile`` decisions. Most samples draw the innermost tile of the contiguous
dimension as a whole number of vector registers (the draw is recorded as the decision, so replay and
mutation are unchanged); the rest are uniform over all tilings.

Structural choices (write cache or not, at which level, packing, register tile, rfactor) make several
*sketches*; a space samples one per call, and mutation only edits decisions, so a mutant keeps its sketch (as in
MetaSchedule).
"""
from __future__ import annotations

import os
import random
import re
from typing import Callable

from ..ir.function import PrimFunc
from ..schedule import Schedule, ScheduleError
from ..schedule.primitives.query import get_consumers
from ..schedule.sampling import sample_perfect_tile as draw_perfect_tile
from . import block_info

PARALLEL_KEY = "meta_schedule.parallel"
VECTORIZE_KEY = "meta_schedule.vectorize"
UNROLL_KEY = "meta_schedule.unroll_explicit"
UNROLL_STEPS = (0, 16, 64)


class SpaceError(Exception):
    """A space that cannot be used (not callable, returns something that is not a schedule, ...)."""


class SpaceGenerator:
    """Samples one design-space schedule of ``func`` per call (postprocessing is applied by the caller)."""

    name = "space"

    def sample(self, func: PrimFunc, seed: int) -> Schedule:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class ScheduleFn(SpaceGenerator):
    """A stochastic schedule function ``fn(sch) -> sch`` (returning None means it edited ``sch`` in place)."""

    def __init__(self, fn: Callable, name: str | None = None):
        if not callable(fn):
            raise SpaceError(f"a schedule function must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "schedule_fn")

    def sample(self, func: PrimFunc, seed: int) -> Schedule:
        sch = Schedule(func, seed=seed)
        out = self.fn(sch)
        if out is None:
            out = sch
        if not isinstance(out, Schedule):
            raise SpaceError(f"schedule function {self.name!r} returned {type(out).__name__}, expected the Schedule "
                             "it was given (or None)")
        return out


def target_cores(target) -> int:
    """Core count of a target (``-num-cores=N`` in its string), else the machine's."""
    if target is not None:
        n = getattr(target, "num_cores", None)
        if isinstance(n, int) and n > 0:
            return n
        m = re.search(r"-num-cores[= ](\d+)", str(target))
        if m:
            return max(1, int(m.group(1)))
    return os.cpu_count() or 1


class AutoSpace(SpaceGenerator):
    """Rule-based CPU space (see module doc).

    ``n_cores`` sets the parallel extents offered; ``vector_lanes`` (floats per vector register) biases the
    innermost tile of the contiguous dimension towards whole vectors (``vector_bias`` of the samples; the
    rest are uniform over all tilings, and mutation reaches every tiling anyway).
    """

    name = "auto"

    def __init__(self, n_cores: int | None = None, max_innermost_factor: int = 64, max_vectorize_extent: int = 64,
                 unroll_steps=UNROLL_STEPS, write_cache_levels=(1, 2), parallel_jobs_per_core=(1, 4, 16, 64),
                 vector_lanes: int = 8, vector_bias: float = 0.75, rfactor_max_spatial: int = 4096,
                 pack_reads: bool = True, microkernel: bool = True, vector_registers: int = 16):
        self.n_cores = n_cores or (os.cpu_count() or 1)
        self.max_innermost_factor = max_innermost_factor
        self.max_vectorize_extent = max_vectorize_extent
        self.unroll_steps = tuple(unroll_steps)
        self.write_cache_levels = tuple(write_cache_levels)
        extents = sorted({self.n_cores * j for j in parallel_jobs_per_core})
        self.parallel_extents = [1] + extents if self.n_cores > 1 else [1]
        self.vector_lanes = max(1, int(vector_lanes))
        self.vector_bias = float(vector_bias)
        self.rfactor_max_spatial = rfactor_max_spatial
        self.pack_reads = pack_reads
        self.microkernel = microkernel
        self.vector_registers = vector_registers

    @classmethod
    def for_target(cls, target, **kwargs) -> "AutoSpace":
        lanes = 8
        bits = getattr(target, "vector_bits", None) if target is not None else None
        if callable(bits):
            bits = bits()
        if isinstance(bits, int) and bits > 0:
            lanes = max(4, bits // 32)
        kwargs.setdefault("vector_lanes", lanes)
        kwargs.setdefault("vector_registers", 32 if lanes >= 16 else 16)  # AVX-512 doubles the register file
        return cls(n_cores=target_cores(target), **kwargs)

    # ---------------------------------------------------------------------------------------------------
    def sample(self, func: PrimFunc, seed: int) -> Schedule:
        sch = Schedule(func, seed=seed)
        rng = random.Random(seed ^ 0x5DEECE66D)  # structural (sketch) choices and biased tile draws
        registers: list = []  # blocks given a register-tile sketch
        self._auto_inline(sch)
        tiled: set = set()
        for name in block_info.leaf_blocks(sch.mod["main"]):
            # an earlier block's sketch may have folded this one into its write-back (bias, ReLU)
            if name in block_info.leaf_blocks(sch.mod["main"]) and \
                    block_info.needs_multi_level_tiling(sch.mod["main"], name):
                tiled |= self._tile_reduction(sch, name, rng, registers)
        self._random_compute_location(sch, tiled)
        self._split_for_vectors(sch, tiled, rng)
        self._annotate_root(sch, unroll_required=bool(registers))
        return sch

    # -- rules --------------------------------------------------------------------------------------------
    def _auto_inline(self, sch: Schedule) -> None:
        changed = True
        while changed:
            changed = False
            func = sch.mod["main"]
            for name in block_info.leaf_blocks(func):
                if block_info.is_elementwise_producer(func, name) and \
                        not block_info.has_conditional_value(func, name):
                    try:
                        sch.compute_inline(sch.get_block(name))
                    except ScheduleError:
                        continue
                    changed = True
                    break

    def _tile(self, sch: Schedule, loop, n: int, rng: random.Random, biased: bool):
        """``sample_perfect_tile`` of ``loop``; when ``biased``, most draws have an innermost factor that is a
        whole number of vectors (drawn here, recorded as the instruction's decision, so traces replay as usual)."""
        limit = self.max_innermost_factor
        decision = None
        ext = sch.get(loop).const_extent()
        if biased and ext and ext % self.vector_lanes == 0 and rng.random() < self.vector_bias:
            for _ in range(32):
                d = draw_perfect_tile(rng, ext, n, limit)
                if d[-1] % self.vector_lanes == 0:
                    decision = d
                    break
        return sch.sample_perfect_tile(loop, n=n, max_innermost_factor=limit, decision=decision)

    def _tile_reduction(self, sch: Schedule, name: str, rng: random.Random, registers: list) -> set:
        """Pick a sketch for a reduction block and apply it; returns the names of the blocks it tiled (and
        appends ``name`` to ``registers`` when the sketch is a register tile, which must be unrolled)."""
        func = sch.mod["main"]
        sketches: list = [0] + [lvl for lvl in self.write_cache_levels]
        packable = block_info.packable_read(func, name) if self.pack_reads else None
        if packable is not None:
            sketches.append("pack")
        rf_loop = block_info.rfactor_candidate(func, name, self.rfactor_max_spatial)
        if rf_loop is not None:
            sketches.append("rfactor")
        micro = self._microkernel_plan(func, name) if self.microkernel else None
        if micro is not None:
            sketches.append("micro")
        choice = rng.choice(sketches)
        if choice == "rfactor":
            return self._rfactor_tiling(sch, name, rf_loop, rng)
        if choice == "pack":
            return self._multi_level_tiling(sch, name, rng, 0, packable)
        if choice == "micro":
            registers.append(name)
            fixed = self._microkernel_decisions(sch, name, micro, rng)
            return self._multi_level_tiling(sch, name, rng, 2, decisions=fixed)
        return self._multi_level_tiling(sch, name, rng, choice)

    # -- the register-tile (micro-kernel) sketch ------------------------------------------------------------
    def _register_tiles(self, row_ext: int, col_ext: int) -> list[tuple[int, int, int]]:
        """``(rows, cols, accumulators)`` register tiles: ``cols`` a whole number of vectors dividing the
        contiguous extent (or all of a short one), ``rows`` dividing the other, and the accumulators plus one
        vector per column group plus a broadcast fitting the register file."""
        lanes = self.vector_lanes
        cols = [c for c in range(lanes, 4 * lanes + 1, lanes) if col_ext % c == 0]
        if not cols:  # ragged: 10 outputs as one tile, a 28-wide image row as 7, 14 or 28 lanes (7/8 of the vectors)
            cols = [c for c in range(lanes // 2 + 1, 4 * lanes + 1)
                    if col_ext % c == 0 and (c / (-(-c // lanes) * lanes) >= 0.75 or c == col_ext <= 2 * lanes)]
        out = []
        for c in cols:
            vecs = -(-c // lanes)
            for r in range(1, min(row_ext, 16) + 1):
                if row_ext % r == 0 and r * vecs + vecs + 1 <= self.vector_registers:
                    out.append((r, c, r * vecs))
        return out

    def _microkernel_plan(self, func, name: str):
        """``(contiguous loop, {row loop: tiles})`` when a register-tile kernel fits the block, else None.

        Row loops are the other spatial loops with extent > 1 (a sample picks one: a convolution's output
        channels share the input vectors, its image rows share the weights); tiles with fewer than four
        accumulators (a dense layer on one row) are not worth a sketch: the FMA latency would not be hidden.
        """
        kinds = block_info.loop_kinds(func, name)
        c = block_info.contiguous_loop_index(func, name)
        if c is None:
            return None
        _, loops = block_info.locate(func, name)
        exts = [lp.const_extent() for lp in loops]
        if any(e is None for e in exts):
            return None
        plan = {}
        for row, kind in enumerate(kinds):
            if kind == "S" and row != c and exts[row] > 1:
                tiles = [t for t in self._register_tiles(exts[row], exts[c]) if t[2] >= 4]
                if tiles:
                    plan[row] = tiles
        return (c, plan) if plan else None

    def _microkernel_decisions(self, sch: Schedule, name: str, plan, rng: random.Random) -> dict:
        """Tile decisions of one micro-kernel sample, by loop index: the register tile is the innermost
        spatial level, the level above it is 1 (the write-back sits right outside the reduction), the
        reduction's inner level is a short unrollable step (1, 2 or 4), outer levels are random."""
        c, rows_tiles = plan
        row = rng.choice(sorted(rows_tiles))
        tiles = rows_tiles[row]
        weights = [acc * acc for _, _, acc in tiles]  # fuller register files hide FMA latency better
        rows, cols, _ = rng.choices(tiles, weights=weights)[0]
        kinds = block_info.loop_kinds(sch.mod["main"], name)
        _, loops = block_info.locate(sch.mod["main"], name)
        out = {}
        for k, (lp, kind) in enumerate(zip(loops, kinds)):
            ext = lp.const_extent()
            if kind == "S":
                inner = cols if k == c else rows if k == row else 1
                a, b = draw_perfect_tile(rng, ext // inner, 2, None)
                out[k] = [a, b, 1, inner]
            elif kind == "R":
                step = rng.choice([u for u in (1, 2, 4) if ext % u == 0])
                out[k] = [ext // step, step]
        return out

    def _multi_level_tiling(self, sch: Schedule, name: str, rng: random.Random, cache_level: int,
                            pack: tuple | None = None, decisions: dict | None = None) -> set:
        """Tile ``name`` SSRSRS; with ``cache_level`` 1 or 2, accumulate in a ``local`` write cache written
        back (with the elementwise epilogues folded in) at the end of that spatial tile level.

        ``pack = (read index, loop indices it uses)``: the read buffer that ignores some spatial loops (B of
        ``A @ B``) is copied into a contiguous ``local`` panel once per outer tile of the loops it uses, which
        go first; the panel is then reused by every tile of the other loops (no cache-set conflicts from
        power-of-two row strides). The accumulator is written back per tile, just outside the reduction.

        ``decisions`` (loop index -> tile factors) fixes the first draw of those loops (the micro-kernel
        sketch); they are recorded as ordinary ``sample_perfect_tile`` decisions, so mutation edits them.
        """
        block = sch.get_block(name)
        func = sch.mod["main"]
        kinds = block_info.loop_kinds(func, name)
        contiguous = block_info.contiguous_loop_index(func, name)
        loops = sch.get_loops(block)
        s_tiles: list[list] = [[], [], [], []]
        r_tiles: list[list] = [[], []]
        own0, own1 = [], []  # the packed buffer's spatial loops at levels 0 and 1
        for k, (loop, kind) in enumerate(zip(loops, kinds)):
            fixed = (decisions or {}).get(k)
            if fixed is not None and kind in ("S", "R"):
                parts = sch.split(loop, factors=sch.sample_perfect_tile(
                    loop, n=len(fixed), max_innermost_factor=self.max_innermost_factor, decision=fixed))
                levels = s_tiles if kind == "S" else r_tiles
                for lvl in range(len(fixed)):
                    levels[lvl].append(parts[lvl])
            elif kind == "S":
                parts = sch.split(loop, factors=self._tile(sch, loop, 4, rng, k == contiguous))
                for lvl in range(4):
                    s_tiles[lvl].append(parts[lvl])
                if pack is not None and k in pack[1]:
                    own0.append(parts[0])
                    own1.append(parts[1])
            elif kind == "R":
                parts = sch.split(loop, factors=self._tile(sch, loop, 2, rng, False))
                for lvl in range(2):
                    r_tiles[lvl].append(parts[lvl])
            else:  # an unused loop stays outermost
                s_tiles[0].insert(0, loop)
        if pack is not None and own1:
            mine = set(own0) | set(own1)
            outer = own0 + own1 + [lp for lp in s_tiles[0] + s_tiles[1] if lp not in mine]
        else:
            pack = None
            outer = s_tiles[0] + s_tiles[1]
        sch.reorder(*outer, *r_tiles[0], *s_tiles[2], *r_tiles[1], *s_tiles[3])
        sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
        tiled = {name}
        if pack is not None:
            panel = sch.cache_read(block, pack[0], "local")
            sch.compute_at(panel, own1[-1])
            tiled.add(sch.get(panel).name)
            cache_level = 2  # write back per tile, right outside the reduction loops
        if not cache_level or not s_tiles[cache_level - 1]:
            return tiled
        writeback = sch.cache_write(block, 0, "local")
        self._fold_epilogues(sch, writeback)
        sch.reverse_compute_at(writeback, outer[-1] if pack is not None else s_tiles[cache_level - 1][-1])
        return tiled | {sch.get(writeback).name}

    def _rfactor_tiling(self, sch: Schedule, name: str, loop_index: int, rng: random.Random) -> set:
        """Split the contiguous reduction loop, ``rfactor`` its inner part into a vector of partial sums
        (``<block>_rf``, accumulated in a ``local`` cache), and tile the spatial loops in two levels:
        ``S R S V`` -- the shape that keeps a dense layer with one input row on contiguous vector loads."""
        block = sch.get_block(name)
        kinds = block_info.loop_kinds(sch.mod["main"], name)
        loops = sch.get_loops(block)
        r0, r1 = sch.split(loops[loop_index], factors=self._tile(sch, loops[loop_index], 2, rng, True))
        outer, inner, other_r = [], [], []
        for k, (loop, kind) in enumerate(zip(loops, kinds)):
            if k == loop_index:
                continue
            if kind == "S":
                a, b = sch.split(loop, factors=self._tile(sch, loop, 2, rng, False))
                outer.append(a)
                inner.append(b)
            elif kind == "R":
                other_r.append(loop)
            else:
                outer.insert(0, loop)
        sch.reorder(*outer, *other_r, r0, *inner, r1)
        rf = sch.rfactor(r1, len(sch.get(block).writes[0].buffer.shape))
        rf_name = sch.get(rf).name
        if not outer:
            return {name, rf_name}
        writeback = sch.cache_write(rf, 0, "local")
        sch.reverse_compute_at(writeback, outer[-1])
        try:
            sch.reverse_compute_at(block, outer[-1])
        except ScheduleError:
            pass
        return {name, rf_name, sch.get(writeback).name}

    def _fold_epilogues(self, sch: Schedule, writeback) -> None:
        """Inline elementwise consumers of the write-back block into it (bias add, ReLU, ...)."""
        while True:
            func = sch.mod["main"]
            wb_name = sch.get(writeback).name
            consumers = get_consumers(func, wb_name)  # a query: not recorded in the trace
            if len(consumers) != 1 or not block_info.is_elementwise_consumer(func, consumers[0]):
                return
            try:
                sch.reverse_compute_inline(sch.get_block(consumers[0]))
            except ScheduleError:
                return
            if wb_name not in block_info.leaf_blocks(sch.mod["main"]):
                return

    def _random_compute_location(self, sch: Schedule, tiled: set) -> None:
        func = sch.mod["main"]
        for name in block_info.leaf_blocks(func):
            if name in tiled:
                continue
            blk = block_info.block_realize(sch.mod["main"], name).block
            if not block_info.is_spatial(blk) or block_info.writes_param(sch.mod["main"], blk):
                continue
            if not get_consumers(sch.mod["main"], name):
                continue
            rv = sch.get_block(name)
            try:
                loc = sch.sample_compute_location(rv)
                sch.compute_at(rv, loc)
            except ScheduleError:
                continue

    def _split_for_vectors(self, sch: Schedule, tiled: set, rng: random.Random) -> None:
        """Spatial blocks: split the innermost loop so its inner part can become vector lanes."""
        for name in block_info.leaf_blocks(sch.mod["main"]):
            if name in tiled:
                continue
            func = sch.mod["main"]
            blk = block_info.block_realize(func, name).block
            if not block_info.is_spatial(blk):
                continue
            rv = sch.get_block(name)
            loops = sch.get_loops(rv)
            if not loops:
                continue
            inner = loops[-1]
            loop = sch.get(inner)
            ext = loop.const_extent()
            if ext is None or ext <= 8 or block_info.loop_kinds(func, name)[-1] != "S":
                continue
            try:
                f = self._tile(sch, inner, 2, rng, True)
                sch.split(inner, factors=f)
            except ScheduleError:
                continue

    def _annotate_root(self, sch: Schedule, unroll_required: bool = False) -> None:
        """Parallel extent, vector extent, unroll depth; a register tile only lives in registers once its
        loops are unrolled (measured: a 4 x 16 tile left rolled runs 5x slower), so then depth 0 is not offered."""
        root = sch.get_block("root")
        if len(self.parallel_extents) > 1:
            n = len(self.parallel_extents)
            v = sch.sample_categorical(candidates=list(self.parallel_extents), probs=[1.0 / n] * n)
            sch.annotate(root, PARALLEL_KEY, v)
        else:
            sch.annotate(root, PARALLEL_KEY, self.parallel_extents[0])
        sch.annotate(root, VECTORIZE_KEY, self.max_vectorize_extent)
        steps = list(self.unroll_steps)
        if unroll_required and any(x > 0 for x in steps):
            steps = [x for x in steps if x > 0]
        n = len(steps)
        v = sch.sample_categorical(candidates=steps, probs=[1.0 / n] * n)
        sch.annotate(root, UNROLL_KEY, v)


def resolve_space(space, target=None) -> SpaceGenerator:
    """``None`` -> AutoSpace for the target; a SpaceGenerator as is; a callable -> ScheduleFn;
    a string -> a registered name or ``"path/to/file.py:function"`` (see ``search_spaces.registry``)."""
    if space is None or space == "auto":
        return AutoSpace.for_target(target)
    if isinstance(space, SpaceGenerator):
        return space
    if isinstance(space, str):
        from search_spaces.registry import load_space

        return ScheduleFn(load_space(space), name=space)
    if callable(space):
        return ScheduleFn(space)
    raise SpaceError(f"space must be None, 'auto', a schedule function, a SpaceGenerator or 'file.py:function', "
                     f"got {type(space).__name__}")
