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
  inner step is 1-4 (a 3-tap window loop whole), and the unroll depth is never 0 (a rolled 4 x 16 tile ran 5x
  slower) nor below the tile's rows times that step. The rows may come from two loops (a convolution's
  output channels share its input vectors, its image rows share the weight broadcasts: 4 x 2 rows of 7 lanes);
  tiles are drawn by accumulators over the square of the loads per FMA. A row that is no whole number of
  vectors (28 wide) tiles as one ragged register (7 lanes), not 14 or 28. Its padding is computed once at the
  root. Constant weights need no packing copy here: the compiled model stores them in the order the kernel
  reads them (``codegen/layout.py``), so the kernel streams a contiguous ``[N / cols][K][cols]`` panel;
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

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from ..schedule import Schedule, ScheduleError
from ..schedule.primitives.query import get_consumers, get_producers
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
    """A stochastic schedule function ``fn(sch) -> sch`` (returning None means it edited ``sch`` in place).

    ``origin`` says where a worker can import ``fn`` from (``("module", module, qualname)`` or
    ``("file", path, name)``; see ``task_spec``) when that is not plain from ``fn`` itself.
    """

    def __init__(self, fn: Callable, name: str | None = None, origin: tuple | None = None):
        if not callable(fn):
            raise SpaceError(f"a schedule function must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "schedule_fn")
        self.origin = origin

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
        args = dict(locals())
        self._init_args = {k: (list(v) if isinstance(v, tuple) else v) for k, v in args.items()
                           if k not in ("self", "__class__")}
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

    def init_args(self) -> dict:
        """The constructor's arguments as JSON values: ``AutoSpace(**space.init_args())`` is the same space."""
        return dict(self._init_args, n_cores=self.n_cores)

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
        registers: list = []  # statements each register-tile sketch needs unrolled
        placed: set = set()  # producers a sketch already put where they belong (padding at the root)
        self._auto_inline(sch)
        tiled: set = set()
        for name in block_info.leaf_blocks(sch.mod["main"]):
            # an earlier block's sketch may have folded this one into its write-back (bias, ReLU)
            if name in block_info.leaf_blocks(sch.mod["main"]) and \
                    block_info.needs_multi_level_tiling(sch.mod["main"], name):
                tiled |= self._tile_reduction(sch, name, rng, registers, placed)
        self._random_compute_location(sch, tiled | placed)
        self._split_for_vectors(sch, tiled, rng, whole=placed)
        self._annotate_root(sch, unroll_required=bool(registers), min_unroll=max(registers, default=0))
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

    def _tile_reduction(self, sch: Schedule, name: str, rng: random.Random, registers: list,
                        placed: set | None = None) -> set:
        """Pick a sketch for a reduction block and apply it; returns the names of the blocks it tiled (and
        appends to ``registers`` the statement count of the inner tile when the sketch is a register tile, which
        must be unrolled whole; padding producers it computes at the root go to ``placed``)."""
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
            fixed, unrolled = self._microkernel_decisions(sch, name, micro, rng)
            registers.append(unrolled)
            tiled = self._multi_level_tiling(sch, name, rng, 2, decisions=fixed)
            if placed is not None:
                placed |= self._padding_at_root(sch, name)
            return tiled
        return self._multi_level_tiling(sch, name, rng, choice)

    # -- the register-tile (micro-kernel) sketch ------------------------------------------------------------
    def _vector_pieces(self, cols: int) -> int:
        """Loads LLVM makes of one ``cols``-lane row: whole vectors, then a ragged tail split into power-of-two
        parts (7 lanes of a float row: a 4-, a 2- and a 1-lane load plus two shuffles)."""
        return cols // self.vector_lanes + bin(cols % self.vector_lanes).count("1")

    def _tile_cols(self, col_ext: int) -> list[int]:
        """Column widths of a register tile: whole vectors dividing the contiguous extent; else (ragged) at most
        one vector with 3/4 of its lanes used (a 28-wide image row as 7) or all of a short output (10 columns).
        Wider ragged widths (13 of a 26-wide row) only when there is no such one: LLVM keeps a loop-carried
        vector of a non-power-of-two width over one register as scalars, and 14- and 28-lane conv2d tiles
        measured 1.2-1.6x slower than 7-lane ones."""
        lanes = self.vector_lanes
        cols = [c for c in range(lanes, 4 * lanes + 1, lanes) if col_ext % c == 0]
        if cols:
            return cols
        ragged = [c for c in range(lanes // 2 + 1, 4 * lanes + 1)
                  if col_ext % c == 0 and (c / (-(-c // lanes) * lanes) >= 0.75 or c == col_ext <= 2 * lanes)]
        return [c for c in ragged if c <= lanes or c == col_ext <= 2 * lanes] or ragged

    def _fits(self, acc: int, vecs: int) -> bool:
        return acc + vecs + 1 <= self.vector_registers

    def _operand_loops(self, func, name: str):
        """For each operand the block's update loads (the accumulator excluded): the indices of the loops it
        depends on. None when the bindings are not one loop per iteration variable."""
        blk = block_info.block_realize(func, name).block
        loop_of = block_info.iter_var_loops(func, name)
        if loop_of is None or not isinstance(blk.body, S.BufferStore):
            return None
        out = []
        for ld in block_info.expr_nodes(blk.body.value, E.BufferLoad):
            if ld.buffer is blk.body.buffer:
                continue
            out.append({loop_of[v] for i in ld.indices for v in block_info.vars_in(i) if v in loop_of})
        return out

    def _microkernel_plan(self, func, name: str):
        """``(contiguous loop, [(rows by loop index, cols, accumulators, weight)])`` when a register-tile kernel
        fits the block, else None.

        Row loops are the other spatial loops with extent > 1. A tile has one row loop, or two (a convolution's
        output channels share the input vectors, its image rows share the weights: 4 channels x 2 rows x 7
        lanes measured 1.15-1.2x faster than 8 channels x 7 lanes); two-loop tiles keep to half the register
        file, since both the vectors and the broadcasts of a step stay live (2 x 7 rows of 7 lanes spilled and
        ran 1.5-1.7x slower than 4 x 2). Tiles with fewer than four accumulators (a dense layer on one row) are
        not worth a sketch: the FMA latency would not be hidden. ``weight`` (the sampling weight) is the
        accumulators over the square of the loads per FMA: a load of the vector operand costs its
        ``_vector_pieces``, a broadcast one; an operand is loaded once per row of the row loops it depends on.
        (A ragged load from a buffer the program allocates, such as the padded input, is one widened load in
        the generated code; the weight still counts its pieces, which errs towards whole-vector tiles.)
        """
        kinds = block_info.loop_kinds(func, name)
        c = block_info.contiguous_loop_index(func, name)
        if c is None:
            return None
        _, loops = block_info.locate(func, name)
        exts = [lp.const_extent() for lp in loops]
        if any(e is None for e in exts):
            return None
        operands = self._operand_loops(func, name)
        row_loops = [k for k, kind in enumerate(kinds) if kind == "S" and k != c and exts[k] > 1]
        shapes = [{k: r} for k in row_loops for r in range(2, min(exts[k], 16) + 1) if exts[k] % r == 0]
        shapes += [{a: ra, b: rb} for i, a in enumerate(row_loops) for b in row_loops[i + 1:]
                   for ra in range(2, min(exts[a], 16) + 1) if exts[a] % ra == 0
                   for rb in range(2, min(exts[b], 16) + 1) if exts[b] % rb == 0]
        options = []
        for cols in self._tile_cols(exts[c]):
            vecs = -(-cols // self.vector_lanes)
            for rows in shapes:
                n_rows = 1
                for r in rows.values():
                    n_rows *= r
                acc = n_rows * vecs
                if acc < 4 or not self._fits(acc, vecs) or (len(rows) > 1 and acc > self.vector_registers // 2):
                    continue
                options.append((rows, cols, acc, self._tile_weight(rows, cols, acc, c, operands)))
        return (c, options) if options else None

    def _tile_weight(self, rows: dict, cols: int, acc: int, c: int, operands) -> float:
        if operands is None:
            return float(acc * acc)
        loads = 0
        for deps in operands:
            n = self._vector_pieces(cols) if c in deps else 1
            for k, r in rows.items():
                if k in deps:
                    n *= r
            loads += n
        per_fma = max(loads, 1) / acc
        return acc / (per_fma * per_fma)

    def _microkernel_decisions(self, sch: Schedule, name: str, plan, rng: random.Random) -> tuple[dict, int]:
        """Tile decisions of one micro-kernel sample, by loop index, and the number of statements the inner
        reduction step unrolls to: the register tile is the innermost spatial level, the level above it is 1
        (the write-back sits right outside the reduction), the reduction's inner level is a short unrollable
        step (1-4, a whole 3-tap window loop included) whose statements (counted in vectors) fit the deepest
        unroll depth, outer levels are random."""
        c, options = plan
        rows, cols, _, _ = rng.choices(options, weights=[w for *_, w in options])[0]
        kinds = block_info.loop_kinds(sch.mod["main"], name)
        _, loops = block_info.locate(sch.mod["main"], name)
        statements = 1
        for r in rows.values():
            statements *= r
        budget = max(max(self.unroll_steps, default=0), statements)
        budget = min(budget, max(64, statements))  # 512 is opt-in for other sketches, not a reason to unroll more
        vecs = -(-cols // self.vector_lanes)  # a statement of a multi-vector row is that many in the unrolled code
        out = {}
        reductions = [k for k, kind in enumerate(kinds) if kind == "R"]
        for k in rng.sample(reductions, len(reductions)):
            ext = loops[k].const_extent()
            step = rng.choice([u for u in (1, 2, 3, 4) if ext % u == 0 and statements * u * vecs <= budget] or [1])
            statements *= step
            out[k] = [ext // step, step]
        for k, kind in enumerate(kinds):
            if kind == "S":
                ext = loops[k].const_extent()
                inner = cols if k == c else rows.get(k, 1)
                a, b = draw_perfect_tile(rng, ext // inner, 2, None)
                out[k] = [a, b, 1, inner]
        return out, statements

    def _padding_at_root(self, sch: Schedule, name: str) -> set:
        """Producers of ``name`` that store a conditional value (padding) stay at the root, computed once:
        inlined, the register tile's vector loads become guarded gathers (4.2x slower measured on conv2d), and
        under a tile loop they are recomputed per tile. Their outer loops are fused into one, so the unroll
        depth given for the register tile does not unroll the copy's rows too (30 rows of a padded 28 x 28
        image are 120 vector statements, most of the code-size budget). Returns the blocks placed."""
        func = sch.mod["main"]
        placed = set()
        for prod in get_producers(func, name):
            if prod not in block_info.leaf_blocks(func) or not block_info.has_conditional_value(func, prod):
                continue
            blk = block_info.block_realize(func, prod).block
            if not block_info.is_spatial(blk) or block_info.writes_param(func, blk):
                continue
            rv = sch.get_block(prod)
            loops = sch.get_loops(rv)
            if len(loops) > 2:
                try:
                    sch.fuse(*loops[:-1])
                except ScheduleError:
                    continue
            placed.add(prod)
            func = sch.mod["main"]
        return placed

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

    def _split_for_vectors(self, sch: Schedule, tiled: set, rng: random.Random, whole: set = frozenset()) -> None:
        """Spatial blocks: split the innermost loop so its inner part can become vector lanes; blocks in
        ``whole`` keep an innermost loop that is one vector already (a padded image row of 30: splitting it as
        30 x 1 ... 2 x 15 measured 0.98-1.02x on conv2d, and its unrolled part only spends code-size budget)."""
        for name in block_info.leaf_blocks(sch.mod["main"]):
            if name in tiled:
                continue
            if name in whole:
                ext = sch.get(sch.get_loops(sch.get_block(name))[-1]).const_extent()
                if ext is not None and ext <= self.max_vectorize_extent:
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

    def _annotate_root(self, sch: Schedule, unroll_required: bool = False, min_unroll: int = 0) -> None:
        """Parallel extent, vector extent, unroll depth; a register tile only lives in registers once its
        loops are unrolled (measured: a 4 x 16 tile left rolled runs 5x slower), so then depth 0 is not offered,
        nor a depth below ``min_unroll`` (the statements of the inner reduction step times the tile's rows: a
        conv2d tile of 4 x 2 rows whose 3-step ``ry`` loop stayed rolled under depth 16 ran 1.2x slower than
        under 64)."""
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
            deep = [x for x in steps if x >= min_unroll]
            steps = deep or [max(steps)]
        n = len(steps)
        v = sch.sample_categorical(candidates=steps, probs=[1.0 / n] * n)
        sch.annotate(root, UNROLL_KEY, v)
