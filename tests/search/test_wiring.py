"""``tune_tasks`` takes each part of a job as an instance or by name, and only wires them."""
from __future__ import annotations

import json

import pytest

import tunefarm
from tunefarm.search.cost_model import XGBCostModel
from tunefarm.search.strategy import RandomSearch
from tunefarm.search.task_scheduler import RoundRobin
from tunefarm.tuning import tune_tasks


def test_instances_are_used_as_given(tmp_path, farm, target, mm64, mm128):
    model = XGBCostModel(seed=3, min_train_samples=4)
    made = []

    def random_search(name, key, cost_model, seed):
        made.append(RandomSearch(name, key, cost_model, seed))
        return made[-1]

    r = tune_tasks([("a", mm64), ("b", mm128)], target=target, max_trials=16, trials_per_round=4,
                   database=tunefarm.Database(str(tmp_path / "d.sqlite")), farm=farm, seed=1, progress=False,
                   cost_model=model, strategy=random_search, task_scheduler=RoundRobin())
    assert r.trials == 16 and r.cost_model is model and model.n_samples == 16
    assert [s.name for s in made] == ["a", "b"] and all(s.model is model for s in made)
    assert sum(s.sources["random"] for s in made) == 16  # every pick was the random search's
    config = json.loads(r.database.jobs().config_json.iloc[0])
    assert config["strategy"] == "random" and config["task_scheduler"] == "round-robin"


def test_a_strategy_instance_brings_its_cost_model(tmp_path, farm, target, mm64):
    model = XGBCostModel(seed=2)
    search = RandomSearch("mm", "ignored", model, seed=0)
    r = tunefarm.tune(mm64, target=target, max_trials=6, trials_per_round=3, database=str(tmp_path / "d.sqlite"),
                      farm=farm, seed=2, progress=False, strategy=search)
    assert r.trials == 6 and r.cost_model is model and sum(search.sources.values()) == 6


def test_parts_that_do_not_fit_are_refused_before_a_farm_starts(mm64, mm128):
    with pytest.raises(ValueError, match="another cost model"):
        tunefarm.tune(mm64, max_trials=4, farm="local", cost_model=XGBCostModel(),
                      strategy=RandomSearch("mm", "k", XGBCostModel()))
    with pytest.raises(ValueError, match="searches one task"):
        tune_tasks([("a", mm64), ("b", mm128)], max_trials=4, farm="local",
                   strategy=RandomSearch("mm", "k", XGBCostModel()))
    with pytest.raises(TypeError, match="task_scheduler must be"):
        tunefarm.tune(mm64, max_trials=4, farm="local", task_scheduler=3)
