"""Mutators edit decisions that still replay."""
from __future__ import annotations

import math
import random

from tunefarm.schedule import Schedule
from tunefarm.search.mutators import (MutateComputeLocation, MutateParallel, MutateTileSize, MutateUnroll,
                                      default_mutators, mutate)
from tunefarm.search.space import AutoSpace


def _design(func, seed=0, n_cores=4):
    return AutoSpace(n_cores=n_cores).sample(func, seed).trace


def test_tile_size_mutation_keeps_the_product_and_the_innermost_limit(mm128):
    trace = _design(mm128)
    m = MutateTileSize(1.0)
    rng = random.Random(0)
    idxs = m.candidates(trace)
    assert len(idxs) == 3
    changed = 0
    for _ in range(50):
        i = rng.choice(idxs)
        new = m.propose(trace, i, rng)
        old = trace.decisions[i]
        assert math.prod(new) == math.prod(old) == 128
        assert new[-1] <= 64 and len(new) == len(old)
        changed += new != old
        Schedule.from_trace(trace.with_decision(i, new), mm128)  # still a valid program
    assert changed == 50


def test_unroll_and_parallel_mutators_touch_only_their_categoricals(mm128):
    trace = _design(mm128)
    unroll = MutateUnroll(1.0).candidates(trace)
    par = MutateParallel(1.0).candidates(trace)
    assert len(unroll) == 1 and len(par) == 1 and unroll != par
    assert trace.insts[unroll[0]].attrs[0] == [0, 16, 64]
    rng = random.Random(1)
    for _ in range(10):
        d = MutateUnroll(1.0).propose(trace, unroll[0], rng)
        assert d != trace.decisions[unroll[0]] and 0 <= d < 4


def test_compute_location_mutation_uses_legal_locations():
    from tunefarm import te

    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: te.exp(A[i, j]), name="B")
    C = te.compute((64, 64), lambda i, j: B[i, j] + B[i, j], name="C")
    func = te.create_prim_func([A, C])

    def space(sch):
        b = sch.get_block("B")
        sch.compute_at(b, sch.sample_compute_location(b))
        return sch

    sch = space(Schedule(func, seed=0))
    m = MutateComputeLocation(1.0)
    (idx,) = m.candidates(sch.trace)
    rng = random.Random(0)
    seen = set()
    for _ in range(12):
        d = m.propose(sch.trace, idx, rng, func)
        assert d is not None and d != sch.trace.decisions[idx]
        Schedule.from_trace(sch.trace.with_decision(idx, d), func)
        seen.add(d)
    assert len(seen) >= 2


def test_mutate_returns_none_when_nothing_applies(mm64):
    sch = Schedule(mm64)
    sch.get_loops(sch.get_block("C"))
    assert mutate(sch.trace, random.Random(0), default_mutators()) is None
