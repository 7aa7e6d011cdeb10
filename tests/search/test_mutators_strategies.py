"""Mutators edit decisions that still replay; strategies never propose a known program twice."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from tunefarm.schedule import Schedule
from tunefarm.search import SearchError
from tunefarm.search.cost_model import XGBCostModel
from tunefarm.search.features import FeatureCache
from tunefarm.search.mutators import (MutateComputeLocation, MutateParallel, MutateTileSize, MutateUnroll,
                                      default_mutators, mutate)
from tunefarm.search.postprocs import default_postprocs
from tunefarm.search.program import sketch_key
from tunefarm.search.space import AutoSpace, ScheduleFn
from tunefarm.search.strategy_evolutionary import EvolutionarySearch
from tunefarm.search.strategy_random import RandomSearch
from tunefarm.search.task import TuneTask


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
        trace.with_decision(i, new).replay(mm128)  # still a valid program
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
        sch.trace.with_decision(idx, d).replay(func)
        seen.add(d)
    assert len(seen) >= 2


def test_mutate_returns_none_when_nothing_applies(mm64):
    sch = Schedule(mm64)
    sch.get_loops(sch.get_block("C"))
    assert mutate(sch.trace, random.Random(0), default_mutators()) is None


def _task(func, space, seed=0):
    return TuneTask("t", func, space, default_postprocs(), seed=seed)


def test_random_search_dedups_and_exhausts_a_small_space(mm128):
    from search_spaces.matmul import stochastic_schedule_mm

    task = _task(mm128, ScheduleFn(stochastic_schedule_mm))
    rs = RandomSearch(task)
    first = rs.propose(3)
    assert len(first) == 3 and len({p.hash for p in first}) == 3
    for p in first:
        task.known_hashes.add(p.hash)
    rest = rs.propose(8)
    assert len(rest) == 2 and not ({p.hash for p in rest} & task.known_hashes)
    for p in rest:
        task.known_hashes.add(p.hash)
    assert rs.propose(8) == [] and rs.exhausted


def test_no_valid_sample_raises_a_search_error_after_bounded_attempts(mm64):
    def broken(sch):
        b = sch.get_block("C")
        i, j, k = sch.get_loops(b)
        sch.split(i, factors=[3, 21])  # never a legal split of 64

    task = _task(mm64, ScheduleFn(broken))
    with pytest.raises(SearchError, match=r"no valid schedule in \d+ attempts.*split"):
        RandomSearch(task, max_attempts=64).propose(4)
    assert task.n_invalid == 64


def _oracle(prog) -> float:
    """A made-up latency: programs whose innermost j tile is wide and vectorized are fast."""
    d = [d for i, d in prog.design.decisions.items() if prog.design.insts[i].kind == "SamplePerfectTile"]
    inner_j = d[1][-1]
    return 1e-3 / inner_j


def test_evolutionary_search_follows_the_cost_model(mm128):
    space = AutoSpace(n_cores=1)
    task = _task(mm128, space, seed=0)
    feats = FeatureCache()
    model = XGBCostModel(seed=0)
    train = RandomSearch(task, features=feats).propose(96)
    model.update([feats.get(p.hash, p.func) for p in train], ["t"] * len(train), [_oracle(p) for p in train])
    assert model.is_trained
    for p in train:
        task.record_measured(p, _oracle(p))
    evo = EvolutionarySearch(task, model, feats, population_size=48, generations=2, seed=0)
    picked = evo.propose(16)
    assert len(picked) == 16 and not ({p.hash for p in picked} & task.known_hashes)
    assert evo.last_stats["mutants"] > 0
    baseline = RandomSearch(_task(mm128, space, seed=99), features=feats).propose(16)
    assert np.median([_oracle(p) for p in picked]) < np.median([_oracle(p) for p in baseline])


def _trained(mm128, n=96, seed=0):
    task = _task(mm128, AutoSpace(n_cores=1), seed=seed)
    feats = FeatureCache()
    model = XGBCostModel(seed=seed)
    train = RandomSearch(task, features=feats).propose(n)
    model.update([feats.get(p.hash, p.func) for p in train], ["t"] * len(train), [_oracle(p) for p in train])
    for p in train:
        task.record_measured(p, _oracle(p))
    return task, feats, model, train


def _evo_after_training(mm128, **kw):
    """An evolutionary search told the training programs' measurements, all of them known to the task."""
    task, feats, model, train = _trained(mm128)
    evo = EvolutionarySearch(task, model, feats, seed=0, **kw)
    evo.notify(train, [_oracle(p) for p in train])
    for p in train:
        task.known_hashes.add(p.hash)
    return task, evo


def test_measured_programs_are_ranked_by_their_measurement_not_the_model(mm128):
    task, feats, model, train = _trained(mm128)
    evo = EvolutionarySearch(task, model, feats, seed=0)
    evo.notify(train, [_oracle(p) for p in train])
    evo.score(train)
    fit = {p.hash: evo._fitness(p) for p in train}
    best = min(train, key=_oracle)
    # the measured best has fitness log(1) = 0, every other measured program log(best / its latency) < 0
    assert fit[best.hash] == 0.0
    for p in train:
        assert fit[p.hash] == pytest.approx(math.log(_oracle(best) / _oracle(p)))
    # an unmeasured program falls back to the model's prediction
    fresh = evo.fresh(4)
    evo.score(fresh)
    assert all(evo._fitness(p) == p.score for p in fresh)


def test_local_exploitation_proposes_unmeasured_neighbours_of_the_best_measured(mm128):
    task, evo = _evo_after_training(mm128, local_share=0.5, local_parents=4)
    picked = evo.propose(16)
    src = evo.last_stats["sources"]
    local = [p for p in picked if src[p.hash] == "local"]
    assert len(local) == 8 and not ({p.hash for p in picked} & task.known_hashes)
    # each local pick differs from one of the four best measured programs in exactly one decision
    parents = [p for _, p in task.best[:4]]
    for p in local:
        diffs = [sum(p.design.decisions[i] != q.design.decisions.get(i) for i in p.design.decisions)
                 for q in parents if sketch_key(q.design) == sketch_key(p.design)]
        assert min(diffs) == 1
    # and the model's best predicted neighbours are taken first
    scores = [p.score for p in local]
    assert scores == sorted(scores, reverse=True)


def test_sketch_places_are_bounded_and_skip_the_best_sketch(mm128):
    task, evo = _evo_after_training(mm128, sketch_min_samples=10_000)  # every sketch stays open
    picked = evo.propose(16)
    src = evo.last_stats["sources"]
    sketch = [p for p in picked if src[p.hash] == "sketch"]
    assert 1 <= len(sketch) <= 16 // 8
    best_key = sketch_key(task.best[0][1].design)
    assert all(sketch_key(p.design) != best_key for p in sketch)
    assert len({sketch_key(p.design) for p in sketch}) == len(sketch)


def test_gentle_tile_mutation_moves_one_prime_factor_to_a_neighbour(mm128):
    trace = _design(mm128)
    m = MutateTileSize(1.0, gentle=True)
    rng = random.Random(2)
    for _ in range(40):
        i = rng.choice(m.candidates(trace))
        old, new = trace.decisions[i], m.propose(trace, i, rng)
        assert math.prod(new) == math.prod(old)
        moved = [k for k in range(len(old)) if old[k] != new[k]]
        assert len(moved) == 2 and moved[1] - moved[0] == 1
        src, dst = (moved[0], moved[1]) if new[moved[0]] < old[moved[0]] else (moved[1], moved[0])
        assert old[src] // new[src] == 2 and new[dst] // old[dst] == 2  # 128 = 2^7: the prime is 2


def test_fresh_samples_left_unmeasured_are_reused_at_most_half(mm128):
    task, evo = _evo_after_training(mm128)
    first = evo.propose(16)
    assert evo.last_stats["fresh_reused"] == 0
    spare = {p.hash for p in evo._spare_fresh}
    assert spare and not (spare & {p.hash for p in first})  # what the round did not pick
    evo.notify(first, [_oracle(p) for p in first])
    for p in first:
        task.known_hashes.add(p.hash)
    second = evo.propose(16)
    n_fresh = evo.last_stats["fresh"]
    assert 0 < evo.last_stats["fresh_reused"] <= n_fresh // 2
    assert not ({p.hash for p in second} & task.known_hashes)  # a reused sample is never a measured one
