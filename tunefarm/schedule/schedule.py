"""``Schedule``: the user-facing, traced, forkable schedule (TVM's ``tir.Schedule`` on tunefarm's IR).

Every method is thin: resolve its random variables to names/loop vars, call a pure primitive
(``PrimFunc -> PrimFunc``), store the new function, record the call as an ``Instruction``. Because IR is
immutable, ``copy()`` shares every function and copies only the symbol table and the trace, so the search
can fork schedules thousands of times.

Sampling instructions draw from a seeded ``random.Random``; their choices ("decisions") are recorded in
the trace, and passing ``decision=`` replays a choice instead of drawing. A decision that does not fit
the program any more (a tiling that does not multiply to the loop extent, a compute location that is not
legal) raises ``ScheduleError``.
"""
from __future__ import annotations

import math
import operator
import random

from ..ir.function import PrimFunc
from ..ir.module import IRModule
from . import sampling
from .error import ScheduleError
from .instruction import Instruction
from .primitives import annotate as _ann
from .primitives import cache as _cache
from .primitives import compute_location as _location
from .primitives import loop_transform as _loops
from .primitives import query as _query
from .primitives import reduction as _reduction
from .random_variables import INLINE_MARK, ROOT_MARK, BlockRV, ComputeLocationMark, ExprRV, LoopRV, RandomVariable
from .block_transforms import BlockTransforms
from .trace import Trace
from .tree import find_block, find_loop


def _as_module(func_or_module) -> IRModule:
    if isinstance(func_or_module, IRModule):
        return func_or_module
    if isinstance(func_or_module, PrimFunc):
        return IRModule({"main": func_or_module})
    raise TypeError(f"Schedule needs a PrimFunc or an IRModule, got {type(func_or_module).__name__}")


_NO_DECISION = object()
_SEED_FROM_OS = object()


class Schedule(BlockTransforms):
    """A schedule over a module of PrimFuncs (a single PrimFunc is wrapped as ``{"main": func}``).

    ``seed``: an int for reproducible sampling; ``None`` (or -1) seeds from the operating system.
    """

    def __init__(self, func_or_module, seed: int | None = None):
        mod = _as_module(func_or_module)
        self._funcs: dict = dict(mod.functions)
        self._mod_attrs = dict(mod.attrs)
        self._mod: IRModule | None = mod
        self._symbols: dict = {}
        self._insts: list[Instruction] = []
        self._decisions: dict = {}
        self._rng_obj: random.Random | None = None
        self._rng_seed = _SEED_FROM_OS
        self._work_on: str | None = None
        self.seed(seed)

    @classmethod
    def from_trace(cls, trace: Trace, func_or_module, decisions: dict | None = None,
                   seed: int | None = None) -> "Schedule":
        """A new schedule of ``func_or_module`` with ``trace`` applied (``Trace.apply_to_schedule``: ``decisions``
        overrides recorded ones). Built here, not by the trace, so that the trace module never imports this one."""
        sch = cls(func_or_module, seed=seed)
        trace.apply_to_schedule(sch, decisions=decisions)
        return sch

    # ------------------------------------------------------------------------------------------- state
    @property
    def mod(self) -> IRModule:
        if self._mod is None:
            self._mod = IRModule(self._funcs, self._mod_attrs)
        return self._mod

    @property
    def trace(self):
        return Trace(self._insts, self._decisions)

    def copy(self) -> "Schedule":
        """An independent schedule sharing this one's IR; its random state is forked from this one's."""
        new = Schedule.__new__(Schedule)
        new._funcs = dict(self._funcs)
        new._mod_attrs = self._mod_attrs
        new._mod = self._mod
        new._symbols = dict(self._symbols)
        new._insts = list(self._insts)
        new._decisions = dict(self._decisions)
        new._work_on = self._work_on
        new._rng_obj = None
        new._rng_seed = self.fork_seed()
        return new

    @property
    def _rng(self) -> random.Random:
        """The sampler, seeded on first use: most schedules (every replay with recorded decisions) never
        draw, and seeding a Mersenne Twister (from the OS for ``seed=None``) costs more than a primitive.
        Drawing from it gives the same numbers as seeding it eagerly."""
        rng = self._rng_obj
        if rng is None:
            seed = self._rng_seed
            rng = self._rng_obj = random.Random() if seed is _SEED_FROM_OS else random.Random(seed)
        return rng

    def seed(self, n: int | None) -> None:
        """Reseed the sampler (None or -1: from the operating system)."""
        if n is None or n == -1:
            self._rng_seed = _SEED_FROM_OS
        else:
            self._rng_seed = operator.index(n)
        self._rng_obj = None

    def fork_seed(self) -> int:
        """A fresh seed drawn from this schedule's random state (for a child schedule)."""
        return self._rng.randrange(1 << 63)

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the default function of ``get_block`` (not recorded in the trace)."""
        if func_name not in self._funcs:
            raise ScheduleError("work_on", f"the module has no function {func_name!r}; it has {list(self._funcs)}")
        self._work_on = func_name

    def show(self) -> None:
        print(self.mod.script())

    def get(self, rv):
        """The IR a random variable stands for: the ``Block`` / ``For`` node, or the int of an ExprRV.

        A LoopRV sampled as a compute-location mark gives the string ``"root"`` or ``"inline"``.
        """
        if isinstance(rv, BlockRV):
            fname, name = self._lookup(rv, "get")
            return find_block(self._funcs[fname], name, "get")[-1].block
        if isinstance(rv, LoopRV):
            fname, var = self._lookup(rv, "get")
            if isinstance(var, ComputeLocationMark):
                return str(var)
            return find_loop(self._funcs[fname], var, "get")[-1]
        if isinstance(rv, ExprRV):
            return self._lookup(rv, "get")
        raise ScheduleError("get", f"expected a random variable, got {type(rv).__name__}")

    # ------------------------------------------------------------------------------------------- helpers
    def _lookup(self, rv, primitive: str):
        try:
            return self._symbols[rv]
        except KeyError:
            raise ScheduleError(primitive, f"this {rv.kind} random variable does not belong to this schedule "
                                           "(it comes from another schedule)") from None
        except TypeError:
            raise ScheduleError(primitive, f"expected a random variable, got {type(rv).__name__}") from None

    def _block(self, block, primitive: str) -> tuple[BlockRV, str, str]:
        """``(rv, function name, block name)``; a block given by name is looked up (and recorded) first."""
        if isinstance(block, str):
            block = self.get_block(block)
        if not isinstance(block, BlockRV):
            raise ScheduleError(primitive, f"expected a BlockRV (or a block name), got {type(block).__name__}")
        fname, name = self._lookup(block, primitive)
        return block, fname, name

    def _loop(self, loop, primitive: str, allow_mark: bool = False):
        if not isinstance(loop, LoopRV):
            raise ScheduleError(primitive, f"expected a LoopRV, got {type(loop).__name__}")
        fname, var = self._lookup(loop, primitive)
        if isinstance(var, ComputeLocationMark) and not allow_mark:
            raise ScheduleError(primitive, f"the loop random variable is the compute-location mark {str(var)!r}, "
                                           "not a loop; only compute_at / reverse_compute_at accept it")
        return fname, var

    def _block_and_loop(self, block, loop, primitive: str, allow_mark: bool = False):
        """``(rv, function name, block name, loop var)`` of a block and a loop that must be in one function."""
        block, fname, name = self._block(block, primitive)
        lf, var = self._loop(loop, primitive, allow_mark)
        if lf != fname:
            raise ScheduleError(primitive, f"block {name!r} is in function {fname!r} but the loop is in {lf!r}")
        return block, fname, name, var

    def _loops(self, loops, primitive: str) -> tuple[str, list]:
        resolved = [self._loop(lp, primitive) for lp in loops]
        if not resolved:
            raise ScheduleError(primitive, "needs at least one loop")
        fnames = {f for f, _ in resolved}
        if len(fnames) > 1:
            raise ScheduleError(primitive, f"the loops belong to different functions {sorted(fnames)}")
        return resolved[0][0], [v for _, v in resolved]

    def _int(self, value, primitive: str, what: str) -> int:
        if isinstance(value, ExprRV):
            return self._lookup(value, primitive)
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise ScheduleError(primitive, f"{what} must be an integer or an ExprRV, got {value!r}")
        return operator.index(value)

    def _func_name(self, func_name, primitive: str) -> str:
        if func_name is None:
            if self._work_on is not None:
                return self._work_on
            prims = [k for k, v in self._funcs.items() if isinstance(v, PrimFunc)]
            if len(prims) == 1:
                return prims[0]
            if "main" in self._funcs:
                return "main"
            raise ScheduleError(primitive, f"the module has several functions {prims}; pass func_name")
        if not isinstance(func_name, str) or not isinstance(self._funcs.get(func_name), PrimFunc):
            raise ScheduleError(primitive, f"the module has no PrimFunc {func_name!r}; it has {list(self._funcs)}")
        return func_name

    def _set(self, fname: str, func: PrimFunc) -> None:
        if func is not self._funcs[fname]:
            self._funcs[fname] = func
            self._mod = None

    def _new(self, cls, value):
        rv = cls()
        self._symbols[rv] = value
        return rv

    def _record(self, kind: str, inputs, attrs, outputs, decision=_NO_DECISION) -> None:
        self._insts.append(Instruction(kind, inputs, attrs, outputs))
        if decision is not _NO_DECISION:
            self._decisions[len(self._insts) - 1] = decision

    @staticmethod
    def _flag(value, primitive: str, name: str) -> bool:
        if not isinstance(value, bool):
            raise ScheduleError(primitive, f"{name} must be True or False, got {value!r}")
        return value

    # ------------------------------------------------------------------------------------------- queries
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        if not isinstance(name, str):
            raise ScheduleError("get_block", f"the block name must be a string, got {name!r}")
        fname = self._func_name(func_name, "get_block")
        find_block(self._funcs[fname], name, "get_block")
        rv = self._new(BlockRV, (fname, name))
        self._record("GetBlock", (), (name, fname), (rv,))
        return rv

    def get_loops(self, block) -> list[LoopRV]:
        block, fname, name = self._block(block, "get_loops")
        rvs = [self._new(LoopRV, (fname, v)) for v in _query.get_loops(self._funcs[fname], name)]
        self._record("GetLoops", (block,), (), rvs)
        return rvs

    def get_child_blocks(self, block_or_loop) -> list[BlockRV]:
        prim = "get_child_blocks"
        if isinstance(block_or_loop, LoopRV):
            fname, var = self._loop(block_or_loop, prim)
            names = _query.get_child_blocks(self._funcs[fname], loop=var)
        else:
            block_or_loop, fname, name = self._block(block_or_loop, prim)
            names = _query.get_child_blocks(self._funcs[fname], block=name)
        rvs = [self._new(BlockRV, (fname, n)) for n in names]
        self._record("GetChildBlocks", (block_or_loop,), (), rvs)
        return rvs

    def get_producers(self, block) -> list[BlockRV]:
        return self._neighbours("GetProducers", "get_producers", block, _query.get_producers)

    def get_consumers(self, block) -> list[BlockRV]:
        return self._neighbours("GetConsumers", "get_consumers", block, _query.get_consumers)

    def _neighbours(self, kind: str, prim: str, block, query) -> list[BlockRV]:
        """The blocks ``query(func, name)`` names beside ``block`` (its producers or consumers), recorded."""
        block, fname, name = self._block(block, prim)
        rvs = [self._new(BlockRV, (fname, n)) for n in query(self._funcs[fname], name)]
        self._record(kind, (block,), (), rvs)
        return rvs

    # ------------------------------------------------------------------------------------------- loops
    def split(self, loop, factors, preserve_unit_iters: bool = True,
              disable_predication: bool = False) -> list[LoopRV]:
        """Split a loop; ``factors`` are ints, ExprRVs, and at most one ``None`` (inferred).

        Factors whose product exceeds the extent are guarded by a block predicate (``disable_predication``
        False, the default) or refused (True); a product below the extent is an error.
        """
        prim = "split"
        fname, var = self._loop(loop, prim)
        if not isinstance(factors, (list, tuple)):
            raise ScheduleError(prim, f"factors must be a list, got {type(factors).__name__}")
        recorded, values = [], []
        for f in factors:
            if f is None or isinstance(f, ExprRV):
                recorded.append(f)
                values.append(None if f is None else self._lookup(f, prim))
            else:
                values.append(self._int(f, prim, "a factor"))
                recorded.append(values[-1])
        pui = self._flag(preserve_unit_iters, prim, "preserve_unit_iters")
        dp = self._flag(disable_predication, prim, "disable_predication")
        func, new_vars = _loops.split(self._funcs[fname], var, values, pui, dp)
        self._set(fname, func)
        rvs = [self._new(LoopRV, (fname, v)) for v in new_vars]
        self._record("Split", (loop, *recorded), (pui, dp), rvs)
        return rvs

    def fuse(self, *loops, preserve_unit_iters: bool = True) -> LoopRV:
        prim = "fuse"
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        fname, vars_ = self._loops(loops, prim)
        pui = self._flag(preserve_unit_iters, prim, "preserve_unit_iters")
        func, fused = _loops.fuse(self._funcs[fname], vars_, pui)
        self._set(fname, func)
        rv = self._new(LoopRV, (fname, fused))
        self._record("Fuse", loops, (pui,), (rv,))
        return rv

    def reorder(self, *ordered_loops) -> None:
        prim = "reorder"
        if len(ordered_loops) == 1 and isinstance(ordered_loops[0], (list, tuple)):
            ordered_loops = tuple(ordered_loops[0])
        fname, vars_ = self._loops(ordered_loops, prim)
        self._set(fname, _loops.reorder(self._funcs[fname], vars_))
        self._record("Reorder", ordered_loops, (), ())

    def parallel(self, loop) -> None:
        fname, var = self._loop(loop, "parallel")
        self._set(fname, _ann.parallel(self._funcs[fname], var))
        self._record("Parallel", (loop,), (), ())

    def vectorize(self, loop) -> None:
        fname, var = self._loop(loop, "vectorize")
        self._set(fname, _ann.vectorize(self._funcs[fname], var))
        self._record("Vectorize", (loop,), (), ())

    def unroll(self, loop) -> None:
        fname, var = self._loop(loop, "unroll")
        self._set(fname, _ann.unroll(self._funcs[fname], var))
        self._record("Unroll", (loop,), (), ())

    # ------------------------------------------------------------------------------------------- blocks
    def compute_inline(self, block) -> None:
        block, fname, name = self._block(block, "compute_inline")
        self._set(fname, _location.compute_inline(self._funcs[fname], name))
        self._record("ComputeInline", (block,), (), ())

    def reverse_compute_inline(self, block) -> None:
        block, fname, name = self._block(block, "reverse_compute_inline")
        self._set(fname, _location.reverse_compute_inline(self._funcs[fname], name))
        self._record("ReverseComputeInline", (block,), (), ())

    def _compute_at(self, kind: str, prim: str, block, loop, preserve_unit_loops) -> None:
        block, fname, name, var = self._block_and_loop(block, loop, prim, allow_mark=True)
        pul = self._flag(preserve_unit_loops, prim, "preserve_unit_loops")
        func = self._funcs[fname]
        if var is INLINE_MARK:
            inline = "compute_inline" if prim == "compute_at" else "reverse_compute_inline"
            func = getattr(_location, inline)(func, name)
        elif var is ROOT_MARK:
            find_block(func, name, prim)  # stays where it is, but it must still exist
        else:
            func = getattr(_location, prim)(func, name, var, pul)
        self._set(fname, func)
        self._record(kind, (block, loop), (pul,), ())

    def compute_at(self, block, loop, preserve_unit_loops: bool = False) -> None:
        """Move a producer block under ``loop`` of its consumer (a "root" mark: no-op; "inline": inline)."""
        self._compute_at("ComputeAt", "compute_at", block, loop, preserve_unit_loops)

    def reverse_compute_at(self, block, loop, preserve_unit_loops: bool = False) -> None:
        self._compute_at("ReverseComputeAt", "reverse_compute_at", block, loop, preserve_unit_loops)

    def _cache_stage(self, kind: str, prim: str, block, index, storage_scope: str) -> BlockRV:
        block, fname, name = self._block(block, prim)
        index = self._int(index, prim, "the buffer index")
        if not isinstance(storage_scope, str):
            raise ScheduleError(prim, f"storage_scope must be a string, got {storage_scope!r}")
        func, new_name = getattr(_cache, prim)(self._funcs[fname], name, index, storage_scope)
        self._set(fname, func)
        rv = self._new(BlockRV, (fname, new_name))
        self._record(kind, (block,), (index, storage_scope), (rv,))
        return rv

    def cache_read(self, block, read_buffer_index: int, storage_scope: str) -> BlockRV:
        return self._cache_stage("CacheRead", "cache_read", block, read_buffer_index, storage_scope)

    def cache_write(self, block, write_buffer_index: int, storage_scope: str) -> BlockRV:
        return self._cache_stage("CacheWrite", "cache_write", block, write_buffer_index, storage_scope)

    def decompose_reduction(self, block, loop) -> BlockRV:
        return self._split_off_block("DecomposeReduction", "decompose_reduction", block, loop,
                                     _reduction.decompose_reduction)

    def _split_off_block(self, kind: str, prim: str, block, loop, split) -> BlockRV:
        """A primitive that splits a new block off ``block`` at ``loop``: ``split(func, name, loop var)`` gives
        the new function and the new block's name (the init of a reduction, the fill of a padding)."""
        block, fname, name, var = self._block_and_loop(block, loop, prim)
        func, new_name = split(self._funcs[fname], name, var)
        self._set(fname, func)
        rv = self._new(BlockRV, (fname, new_name))
        self._record(kind, (block, loop), (), (rv,))
        return rv

    def rfactor(self, loop, factor_axis: int) -> BlockRV:
        prim = "rfactor"
        fname, var = self._loop(loop, prim)
        axis = self._int(factor_axis, prim, "factor_axis")
        func, rf_name = _reduction.rfactor(self._funcs[fname], var, axis)
        self._set(fname, func)
        rv = self._new(BlockRV, (fname, rf_name))
        self._record("RFactor", (loop,), (axis,), (rv,))
        return rv

    # ------------------------------------------------------------------------------------------- annotations
    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Set ``For.annotations[ann_key]`` or ``Block.annotations[ann_key]`` (value: scalar or ExprRV)."""
        prim = "annotate"
        if isinstance(ann_val, ExprRV):
            value, rv_in, literal = self._lookup(ann_val, prim), ann_val, None
        else:
            if hasattr(ann_val, "item") and not isinstance(ann_val, (bool, int, float, str)):
                ann_val = ann_val.item()  # numpy scalars
            if isinstance(ann_val, float) and not math.isfinite(ann_val):
                raise ScheduleError(prim, f"the annotation value must be finite, got {ann_val}")
            value, rv_in, literal = ann_val, None, ann_val
        if isinstance(block_or_loop, LoopRV):
            fname, var = self._loop(block_or_loop, prim)
            func = _ann.annotate_loop(self._funcs[fname], var, ann_key, value)
        else:
            block_or_loop, fname, name = self._block(block_or_loop, prim)
            func = _ann.annotate_block(self._funcs[fname], name, ann_key, value)
        self._set(fname, func)
        self._record("Annotate", (block_or_loop, rv_in), (ann_key, literal), ())

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        prim = "unannotate"
        if not isinstance(ann_key, str):
            raise ScheduleError(prim, f"the annotation key must be a string, got {ann_key!r}")
        if isinstance(block_or_loop, LoopRV):
            fname, var = self._loop(block_or_loop, prim)
            func = _ann.unannotate_loop(self._funcs[fname], var, ann_key)
        else:
            block_or_loop, fname, name = self._block(block_or_loop, prim)
            func = _ann.unannotate_block(self._funcs[fname], name, ann_key)
        self._set(fname, func)
        self._record("Unannotate", (block_or_loop,), (ann_key,), ())

    def enter_postproc(self) -> None:
        """A marker instruction: what follows was added by postprocessors (as in MetaSchedule traces)."""
        self._record("EnterPostproc", (), (), ())

    # ------------------------------------------------------------------------------------------- sampling
    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16, decision=None) -> list[ExprRV]:
        """Sample ``n`` factors multiplying to the loop's (constant) extent, innermost at most
        ``max_innermost_factor`` (< 1: no limit), uniformly over all such tilings."""
        prim = "sample_perfect_tile"
        fname, var = self._loop(loop, prim)
        err = sampling.check_perfect_tile_args(n, max_innermost_factor)
        if err:
            raise ScheduleError(prim, err)
        extent = find_loop(self._funcs[fname], var, prim)[-1].const_extent()
        if extent is None:
            raise ScheduleError(prim, f"loop {var.name!r} has a symbolic extent; tiling needs a constant one")
        if decision is None:
            decision = sampling.sample_perfect_tile(self._rng, extent, n, max_innermost_factor)
            if decision is None:
                raise ScheduleError(prim, f"no tiling of extent {extent} into {n} factor(s) has an innermost "
                                          f"factor <= {max_innermost_factor}")
        else:
            err = sampling.check_perfect_tile(decision, extent, n, max_innermost_factor)
            if err:
                raise ScheduleError(prim, err)
            decision = [int(d) for d in decision]
        rvs = [self._new(ExprRV, f) for f in decision]
        self._record("SamplePerfectTile", (loop,), (n, max_innermost_factor), rvs, decision)
        return rvs

    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """Choose one of ``candidates`` with probabilities ``probs``; the decision is the chosen index."""
        prim = "sample_categorical"
        err = sampling.check_categorical_args(candidates, probs)
        if err:
            raise ScheduleError(prim, err)
        candidates = [int(c) for c in candidates]
        probs = [float(p) for p in probs]
        if decision is None:
            decision = sampling.sample_categorical(self._rng, probs)
        else:
            err = sampling.check_categorical(decision, len(candidates))
            if err:
                raise ScheduleError(prim, err)
        rv = self._new(ExprRV, candidates[decision])
        self._record("SampleCategorical", (), (candidates, probs), (rv,), decision)
        return rv

    def _legal_location(self, func, name: str, loops: list, index: int) -> bool:
        if index == -1:
            return True
        if index == -2:
            return _location.can_inline(func, name)  # the plan's checks, without building the result
        if 0 <= index < len(loops):
            return _location.compute_at_legal(func, name, loops[index], True)
        return False

    def compute_location_candidates(self, block) -> list[int]:
        """The decisions ``sample_compute_location(block)`` could take now (-2 inline, -1 root, loop indices).

        Not recorded in the trace (a query for mutators)."""
        if isinstance(block, str):
            raise ScheduleError("compute_location_candidates", "expected a BlockRV, got a block name")
        _, fname, name = self._block(block, "compute_location_candidates")
        func = self._funcs[fname]
        loops = sampling.compute_location_loops(func, name)
        return [i for i in (-2, -1, *range(len(loops))) if self._legal_location(func, name, loops, i)]

    def sample_compute_location(self, block, decision: int | None = None) -> LoopRV:
        """Sample where to compute ``block``: a LoopRV for a loop of its consumer, or the root/inline mark.

        Pass the result to ``compute_at``. Decisions: -2 inline (only if legal), -1 root, ``i`` the i-th
        loop of the first consumer at which ``compute_at`` is legal (as MetaSchedule).
        """
        prim = "sample_compute_location"
        block, fname, name = self._block(block, prim)
        func = self._funcs[fname]
        loops = sampling.compute_location_loops(func, name)
        if decision is None:
            # uniform over the legal locations without checking them all: draw untried ones uniformly until one
            # is legal (the first legal entry of a random order is a uniform pick among the legal ones). Each
            # check plans a compute_at; checking all of a conv2d's ~12 loops was most of its sampling time.
            untried = [-2, -1, *range(len(loops))]
            while True:
                i = untried.pop(self._rng.randrange(len(untried)))
                if self._legal_location(func, name, loops, i):  # -1 (root) always is
                    decision = i
                    break
        elif isinstance(decision, bool) or not isinstance(decision, int) or \
                not self._legal_location(func, name, loops, decision):
            legal = [i for i in (-2, -1, *range(len(loops))) if self._legal_location(func, name, loops, i)]
            raise ScheduleError(prim, f"decision {decision!r} is not a legal compute location of block {name!r} "
                                      f"(legal: {legal})")
        target = INLINE_MARK if decision == -2 else ROOT_MARK if decision == -1 else loops[decision]
        rv = self._new(LoopRV, (fname, target))
        self._record("SampleComputeLocation", (block,), (), (rv,), decision)
        return rv


__all__ = ["Schedule", "ScheduleError", "RandomVariable"]
