"""The driver's side of the search strategies (``search/strategy.py``), with worker replies made here."""
from __future__ import annotations

import math

import numpy as np
import pytest

from search_spaces.matmul import stochastic_schedule_mm
from tunefarm.search.cost_model import XGBCostModel
from tunefarm.search.strategy import LOCAL_CHOICE, LOCAL_PARENTS, EvolutionConfig, SearchStrategy, create
from tunefarm.search.generate import generate
from tunefarm.search.space import AutoSpace, ScheduleFn

from search_work import design, fill, oracle, task_cache


def _measure_all(search: SearchStrategy, n: int) -> list:
    picked = []
    while len(picked) < n:
        e = search.pick()
        if e is None:
            break
        search.measured_result(e, oracle(e))
        picked.append(e)
    return picked


def test_random_search_dedups_and_exhausts_a_small_space(mm128):
    cache = task_cache(mm128, ScheduleFn(stochastic_schedule_mm))
    search = create("random", "t", "k", XGBCostModel(), seed=0)
    picked = []
    for _ in range(12):
        fill(search, cache, 8)
        picked += _measure_all(search, 100)
    assert len(picked) == 5 and len({e.hash for e in picked}) == 5  # the course's space has five programs
    assert search.exhausted(requests_in_flight=0) and not search.exhausted(requests_in_flight=1)
    assert search.error is None


def test_a_space_without_valid_schedules_is_an_error_after_bounded_attempts(mm64):
    def broken(sch):
        i, _, _ = sch.get_loops(sch.get_block("C"))
        sch.split(i, factors=[3, 21])  # never a legal split of 64

    cache = task_cache(mm64, ScheduleFn(broken))
    search = create("random", "t", "k", XGBCostModel())
    for _ in range(8):
        fill(search, cache, 8)
    assert search.error is not None and search.pick() is None
    assert "no valid schedule in" in search.error and "split" in search.error


def _trained(mm128, n: int = 96, seed: int = 0):
    """A search whose model learned ``oracle`` from ``n`` random programs, all of them measured."""
    cache = task_cache(mm128, AutoSpace(n_cores=1), seed=seed)
    model = XGBCostModel(seed=seed)
    search = create("evolutionary", "t", "k", model, seed=seed)
    while len(search.measured) < n:  # the model is untrained: fresh samples, random picks
        fill(search, cache, 32)
        for e in _measure_all(search, n - len(search.measured)):
            model.add([e.features], ["t"], [oracle(e)])
    model.train()
    return cache, search


def test_guided_search_follows_the_cost_model(mm128):
    cache, search = _trained(mm128)
    assert search.guided
    known = set(search.measured)
    picked = []
    for _ in range(4):
        fill(search, cache, 24)
        picked += _measure_all(search, 4)
    assert len(picked) == 16 and not ({e.hash for e in picked} & known)
    assert search.sources["exploit"] + search.sources["local"] + search.sources["explore"] > 0
    baseline_cache = task_cache(mm128, AutoSpace(n_cores=1), seed=99)
    random_search = create("random", "t", "k", XGBCostModel(), seed=99)
    fill(random_search, baseline_cache, 16)
    baseline = _measure_all(random_search, 16)
    assert np.median([oracle(e) for e in picked]) < np.median([oracle(e) for e in baseline])


def test_measured_programs_are_ranked_by_their_measurement_not_the_model(mm128):
    _, search = _trained(mm128)
    best_lat = search.best[0][0]
    for lat, e in search.best:
        assert search.fitness(e) == pytest.approx(math.log(best_lat / lat))
    assert search.fitness(search.best[0][1]) == 0.0
    for e in search.pool.values():  # unmeasured: the model's prediction
        assert search.fitness(e) == e.score


def test_local_requests_step_once_away_from_the_best_measured(mm128):
    cache, search = _trained(mm128)
    search.config = EvolutionConfig(local_per_pick=2.0, mutants_per_pick=0.0, fresh_per_pick=0.5)
    request = search.request(20)
    parents = {text for text, _ in request["local"]}
    assert parents <= {e.trace for _, e in search.best[:LOCAL_PARENTS]}
    assert search.receive(generate(cache, request), "here") > 0
    local = [e for e in search.pool.values() if e.origin == "local"]
    assert local
    tops = [design(e) for _, e in search.best[:LOCAL_PARENTS]]
    for e in local:
        d = design(e)
        diffs = [sum(d.decisions[i] != t.decisions.get(i) for i in d.decisions) for t in tops
                 if len(t.insts) == len(d.insts)]
        assert min(diffs) == 1


def test_a_new_model_rescores_the_pool_before_the_next_pick(mm128):
    cache, search = _trained(mm128)
    fill(search, cache, 24)
    search.pick()
    first = search.model.version
    assert {e.version for e in search.pool.values()} == {first}
    search.model.train()  # a new version: every pooled score is stale
    search.pick()
    assert {e.version for e in search.pool.values()} == {first + 1}


def test_picks_never_repeat_a_known_program_and_each_earns_search_effort(mm128):
    cache, search = _trained(mm128)
    search.credit = 0.0
    fill(search, cache, 16)
    hashes = set(search.pool)
    e = search.pick()
    assert e.hash in hashes and e.hash not in search.pool
    assert search.credit == pytest.approx(search.config.effort)
    again = search.receive({"programs": [[e.hash, e.trace, "", e.sketch, "fresh"]], "valid": 1}, "x")
    assert again == 0 and e.hash not in search.pool


def test_a_worker_picks_among_its_own_candidates_once_it_holds_enough(mm128):
    cache, search = _trained(mm128)
    search.pool.clear()
    fill(search, cache, 24)
    entries = sorted(search.pool.values(), key=lambda e: -e.score)
    for k, e in enumerate(entries):
        e.worker = "A" if k % 2 else "B"  # B holds the best-scored candidate
    search.config = EvolutionConfig(eps_greedy=0.0, explore_share=0.0, local_share=0.0)
    mine = {e.hash for e in entries if e.worker == "A"}
    assert len(mine) >= LOCAL_CHOICE
    picked = search.pick("A")
    assert picked.hash in mine and picked.worker == "A"  # A measures what it already holds
    assert search.pick("nobody") is not None  # a worker holding too few takes the best of all


def test_a_strategy_is_created_by_name():
    model = XGBCostModel()
    assert type(create("random", "t", "k", model)).__name__ == "RandomSearch"
    evolutionary = create("evolutionary", "t", "k", model)
    assert type(evolutionary).__name__ == "EvolutionarySearch" and not evolutionary.guided  # untrained model
    assert all(isinstance(create(k, "t", "k", model), SearchStrategy) for k in ("random", "evolutionary"))
    with pytest.raises(ValueError, match="unknown search strategy 'annealing'"):
        create("annealing", "t", "k", model)
