"""Mutators: small random edits of a trace's decisions (the trace is then replayed to check they still fit).

Each mutator finds the sampling instructions it understands and proposes one new decision:

- ``MutateTileSize``: moves a divisor of one factor to another position of a ``sample_perfect_tile``
  decision (the product stays the loop extent; the innermost limit is respected);
- ``MutateUnroll``: another unroll depth (a categorical sampled for an unroll annotation);
- ``MutateParallel``: another parallel extent (a categorical sampled for ``meta_schedule.parallel``);
- ``MutateComputeLocation``: another legal compute location (replays the trace prefix to ask which);
- ``MutateCategorical``: any other categorical decision of a user's space.

``mutate(trace, rng, mutators)`` picks a mutator with probability proportional to its weight among those that
apply, and returns ``(inst_index, decision)`` or None.
"""
from __future__ import annotations

import random

from ..schedule import Schedule, ScheduleError, Trace
from .space import PARALLEL_KEY, UNROLL_KEY

_UNROLL_KEYS = (UNROLL_KEY, "pragma_auto_unroll_max_step")


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` greater than 1."""
    return [k for k in range(2, n + 1) if n % k == 0]


def _annotation_uses(trace: Trace) -> dict:
    """``inst_index of a SampleCategorical -> annotation key`` it feeds (through an ExprRV)."""
    producer = {}
    for i, inst in enumerate(trace.insts):
        if inst.kind == "SampleCategorical":
            producer[inst.outputs[0]] = i
    uses = {}
    for inst in trace.insts:
        if inst.kind == "Annotate" and inst.inputs[1] is not None and inst.inputs[1] in producer:
            uses[producer[inst.inputs[1]]] = inst.attrs[0]
    return uses


class Mutator:
    name = "mutator"

    def __init__(self, weight: float):
        self.weight = float(weight)

    def candidates(self, trace: Trace) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def propose(self, trace: Trace, index: int, rng: random.Random, func=None):  # pragma: no cover
        raise NotImplementedError


class MutateTileSize(Mutator):
    """``gentle``: move one prime factor to a neighbouring position only (a small step, for local search
    around a good program; the default move can jump a whole divisor anywhere)."""

    name = "tile_size"

    def __init__(self, weight: float, gentle: bool = False):
        super().__init__(weight)
        self.gentle = gentle

    def candidates(self, trace):
        out = []
        for i, inst in enumerate(trace.insts):
            if inst.kind == "SamplePerfectTile" and i in trace.decisions:
                d = trace.decisions[i]
                if len(d) > 1 and any(x > 1 for x in d):
                    out.append(i)
        return out

    def propose(self, trace, index, rng, func=None):
        """As MetaSchedule: move a random divisor ``f > 1`` of one factor to another position (big jumps
        included, so ``[4, 32]`` can become ``[32, 4]`` in one step)."""
        d = list(trace.decisions[index])
        limit = trace.insts[index].attrs[1]
        for _ in range(16):
            src = rng.choice([k for k, x in enumerate(d) if x > 1])
            if self.gentle:
                dst = rng.choice([k for k in (src - 1, src + 1) if 0 <= k < len(d)])
                f = _divisors(d[src])[0]  # the smallest prime factor
            else:
                dst = rng.choice([k for k in range(len(d)) if k != src])
                f = rng.choice(_divisors(d[src]))
            new = list(d)
            new[src] //= f
            new[dst] *= f
            if limit and limit > 0 and new[-1] > limit:
                continue
            return new
        return None


class _CategoricalByKey(Mutator):
    keys: tuple = ()
    any_key = False

    def candidates(self, trace):
        uses = _annotation_uses(trace)
        out = []
        for i, inst in enumerate(trace.insts):
            if inst.kind != "SampleCategorical" or i not in trace.decisions or len(inst.attrs[0]) < 2:
                continue
            key = uses.get(i)
            if self.any_key:
                if key not in _UNROLL_KEYS and key != PARALLEL_KEY:
                    out.append(i)
            elif key in self.keys:
                out.append(i)
        return out

    def propose(self, trace, index, rng, func=None):
        cands, probs = trace.insts[index].attrs
        cur = trace.decisions[index]
        options = [k for k in range(len(cands)) if k != cur and probs[k] > 0]
        return rng.choice(options) if options else None


class MutateUnroll(_CategoricalByKey):
    name = "unroll"
    keys = _UNROLL_KEYS


class MutateParallel(_CategoricalByKey):
    name = "parallel"
    keys = (PARALLEL_KEY,)


class MutateCategorical(_CategoricalByKey):
    name = "categorical"
    any_key = True


class MutateComputeLocation(Mutator):
    name = "compute_location"

    def candidates(self, trace):
        return [i for i, inst in enumerate(trace.insts) if inst.kind == "SampleComputeLocation"
                and i in trace.decisions]

    def propose(self, trace, index, rng, func=None):
        if func is None:
            return None
        prefix = Trace(trace.insts[:index], {k: v for k, v in trace.decisions.items() if k < index})
        try:
            sch = Schedule.from_trace(prefix, func)
            inst = trace.insts[index]
            # the block RV of the instruction is an output of the prefix; map it by position
            block_rv = _replayed_rv(prefix, sch, inst.inputs[0])
            legal = sch.compute_location_candidates(block_rv)
        except (ScheduleError, KeyError):
            return None
        options = [d for d in legal if d != trace.decisions[index]]
        return rng.choice(options) if options else None


def _replayed_rv(prefix: Trace, sch, rv):
    """The random variable of ``sch`` (a replay of ``prefix``) that corresponds to ``rv`` of the prefix.

    Replay creates outputs in the same order, so the k-th output RV of the trace is the k-th symbol the
    schedule recorded.
    """
    k = 0
    for inst in prefix.insts:
        for out in inst.outputs:
            if out is rv:
                break
            k += 1
        else:
            continue
        break
    new_trace = sch.trace
    j = 0
    for inst in new_trace.insts:
        for out in inst.outputs:
            if j == k:
                return out
            j += 1
    raise KeyError("random variable not found in the replayed prefix")


def local_mutators() -> list[Mutator]:
    """Small steps for searching around a good measured program: gentle tile moves, and the other decisions."""
    return [MutateTileSize(0.9, gentle=True), MutateComputeLocation(0.05), MutateUnroll(0.05), MutateParallel(0.02),
            MutateCategorical(0.1)]


def default_mutators() -> list[Mutator]:
    """MetaSchedule's CPU weights: tile size 0.9, compute location 0.05, unroll 0.03, parallel 0.02."""
    return [MutateTileSize(0.9), MutateComputeLocation(0.05), MutateUnroll(0.03), MutateParallel(0.02),
            MutateCategorical(0.1)]


def mutate(trace: Trace, rng: random.Random, mutators, func=None):
    """One proposed edit ``(inst_index, decision)`` of ``trace``'s decisions, or None if nothing applies."""
    live = [(m, c) for m in mutators for c in [m.candidates(trace)] if c and m.weight > 0]
    if not live:
        return None
    for _ in range(4):
        total = sum(m.weight for m, _ in live)
        r = rng.random() * total
        for m, cands in live:
            r -= m.weight
            if r <= 0:
                break
        index = rng.choice(cands)
        new = m.propose(trace, index, rng, func)
        if new is not None:
            return index, new
    return None
