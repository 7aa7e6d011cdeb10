"""The XGBoost cost model: learns rankings, treats failures as worst, saves as XGBoost JSON."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tunefarm.search.cost_model import CostModelError, XGBCostModel, pair_counts, pairwise_accuracy, top_k_recall
from tunefarm.search.model_training import fit, folds
from tunefarm.search.features import FEATURE_LEN


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, FEATURE_LEN))
    x[:, :16] = rng.normal(size=(n, 16))  # 16 informative or noise columns; constant ones keep training fast
    lat = np.exp(0.8 * x[:, 3] - 0.5 * x[:, 10] + 0.3 * x[:, 0] * x[:, 1]) * 1e-4
    return x, lat


def test_metric_helpers_on_hand_examples():
    label = np.array([1.0, 0.5, 0.25, 0.0])
    group = np.zeros(4)
    assert pairwise_accuracy(np.array([4.0, 3, 2, 1]), label, group) == 1.0
    assert pairwise_accuracy(np.array([1.0, 2, 3, 4]), label, group) == 0.0
    assert pairwise_accuracy(np.array([4.0, 3, 1, 2]), label, group) == pytest.approx(5 / 6)
    assert pairwise_accuracy(np.array([4.0, 3, 1, 2]), label, group, only_positive=True) == 1.0
    # pairs across groups never count
    assert math.isnan(pairwise_accuracy(np.array([1.0, 2.0]), np.array([1.0, 0.5]), np.array([0, 1])))
    assert top_k_recall(np.array([4.0, 3, 1, 2]), label, group, 2) == 1.0
    assert top_k_recall(np.array([1.0, 3, 4, 2]), label, group, 2) == 0.5


def test_learns_a_ranking_from_measurements_and_reports_held_out_quality():
    x, lat = _data(300, 0)
    model = XGBCostModel(seed=0, min_train_samples=32)
    assert not model.is_trained
    model.update(x[:150], ["w"] * 150, list(lat[:150]), retrain=False)
    model.update(x[150:], ["w"] * 150, list(lat[150:]), retrain=True)
    assert model.is_trained
    m = model.metrics
    # 5-fold cross-validation: every sample is held out exactly once
    assert m.n_heldout == 300 and m.pairwise_accuracy > 0.75 and 0 <= m.top_k_recall <= 1
    xt, lt = _data(200, 1)
    pred = model.predict(xt)
    acc = pairwise_accuracy(pred, 1 / lt, np.zeros(200))
    assert acc > 0.8
    assert model.history and model.history[-1]["n_train"] == 300


def test_failures_are_learned_as_the_worst():
    x, lat = _data(200, 2)
    lats = list(lat)
    failed = x[:, 5] > 0.8  # a region of the feature space that always fails
    for k in np.nonzero(failed)[0]:
        lats[k] = None
    model = XGBCostModel(seed=1)
    model.update(x, ["w"] * 200, lats)
    assert model.is_trained
    xt, _ = _data(400, 3)
    pred = model.predict(xt)
    bad = xt[:, 5] > 1.0
    assert pred[bad].mean() < pred[~bad].mean()


def test_untrained_model_scores_randomly_until_enough_successes():
    model = XGBCostModel(seed=0, min_train_samples=32)
    x, lat = _data(40, 4)
    assert model.update(x[:31], ["w"] * 31, list(lat[:31])) is False
    assert not model.is_trained
    p1, p2 = model.predict(x), model.predict(x)
    assert p1.shape == (40,) and not np.array_equal(p1, p2)
    assert model.update(x[31:], ["w"] * 9, list(lat[31:])) is True


def test_groups_keep_workloads_apart():
    # two workloads whose latencies differ by 1000x: the per-workload normalization makes both learnable
    x, lat = _data(300, 5)
    groups = ["small" if k % 2 else "big" for k in range(300)]
    lat = np.where(np.array(groups) == "big", lat * 1000, lat)
    for objective in ("regression", "rank"):
        model = XGBCostModel(objective=objective, seed=0)
        model.update(x, groups, list(lat))
        assert model.metrics.pairwise_accuracy > 0.75


def test_save_load_round_trip_in_xgboost_json(tmp_path):
    x, lat = _data(120, 6)
    model = XGBCostModel(seed=0)
    model.update(x, ["w"] * 120, list(lat))
    path = tmp_path / "model.json"
    model.save(path)
    doc = json.loads(path.read_text())
    assert "learner" in doc  # XGBoost's own JSON model format
    meta = json.loads((tmp_path / "model.json.meta.json").read_text())
    assert meta["feature_len"] == FEATURE_LEN and meta["objective"] == "regression"
    loaded = XGBCostModel.load(path)
    assert loaded.is_trained
    np.testing.assert_allclose(loaded.predict(x), model.predict(x))
    assert math.isclose(loaded.metrics.pairwise_accuracy, model.metrics.pairwise_accuracy)


def test_save_and_load_errors(tmp_path):
    model = XGBCostModel()
    with pytest.raises(CostModelError, match="untrained"):
        model.save(tmp_path / "m.json")
    x, lat = _data(60, 7)
    model.update(x, ["w"] * 60, list(lat))
    with pytest.raises(CostModelError, match="must end in .json"):
        model.save(tmp_path / "m.bin")
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(CostModelError, match="meta.json is missing"):
        XGBCostModel.load(tmp_path / "other.json")
    model.save(tmp_path / "m.json")
    meta = json.loads((tmp_path / "m.json.meta.json").read_text())
    meta["feature_version"] = -1
    (tmp_path / "m.json.meta.json").write_text(json.dumps(meta))
    with pytest.raises(CostModelError, match="feature version -1"):
        XGBCostModel.load(tmp_path / "m.json")
    with pytest.raises(CostModelError, match="must match"):
        model.update(x[:3], ["w"] * 2, [1e-3] * 3)
    with pytest.raises(ValueError, match="objective"):
        XGBCostModel(objective="magic")


def test_pairwise_rank_objective_also_ranks():
    x, lat = _data(200, 8)
    model = XGBCostModel(objective="rank", seed=0)
    model.update(x, ["w"] * 200, list(lat))
    xt, lt = _data(200, 9)
    assert pairwise_accuracy(model.predict(xt), 1 / lt, np.zeros(200)) > 0.75


def test_fixed_rounds_and_cross_validated_metrics():
    rng = np.random.default_rng(3)
    x = np.zeros((120, FEATURE_LEN))
    x[:, :16] = rng.normal(size=(120, 16))
    lat = np.exp(rng.normal(size=120)) * 1e-4  # pure-noise labels: held-out accuracy near a coin flip
    model = XGBCostModel(seed=0, rounds=45)
    model.update(x, ["w"] * 120, list(lat), retrain=True)
    assert model.metrics.rounds == 45 and model._booster.num_boosted_rounds() == 45
    assert model.metrics.n_heldout == 120
    assert 0.35 < model.metrics.pairwise_accuracy < 0.65
    with pytest.raises(ValueError, match="rounds"):
        XGBCostModel(rounds=0)
    # too few samples for 5 folds of 4: trained, but no held-out metric
    small = XGBCostModel(seed=0, min_train_samples=8)
    small.update(x[:12], ["w"] * 12, list(lat[:12]), retrain=True)
    assert small.is_trained and small.metrics.n_heldout == 0 and math.isnan(small.metrics.pairwise_accuracy)


def test_programs_with_identical_features_never_straddle_train_and_held_out():
    rng = np.random.default_rng(5)
    base = rng.normal(size=(30, FEATURE_LEN))
    x = np.repeat(base, 4, axis=0)  # every feature row four times (different programs, same features)
    fold = folds(np.asarray(x, dtype=np.float32), 5, np.random.default_rng(0))
    for k in range(30):
        assert len(set(fold[4 * k:4 * k + 4].tolist())) == 1
    assert set(fold.tolist()) == set(range(5))


def test_pair_counts_sum_to_the_pairwise_accuracy():
    rng = np.random.default_rng(2)
    pred, label, group = rng.normal(size=40), rng.random(40), rng.integers(0, 3, 40)
    good, total = pair_counts(pred, label, group)
    assert total == sum(int((group == g).sum()) * (int((group == g).sum()) - 1) // 2 for g in range(3))
    assert good / total == pairwise_accuracy(pred, label, group)
    # a tie in the prediction is not a correct order
    assert pairwise_accuracy(np.array([1.0, 1.0]), np.array([1.0, 0.5]), np.zeros(2)) == 0.0


def test_feature_rows_of_the_wrong_width_are_rejected():
    model = XGBCostModel()
    with pytest.raises(CostModelError, match=f"{FEATURE_LEN} columns"):
        model.update(np.zeros((2, FEATURE_LEN + 1)), ["w"] * 2, [1e-3, 2e-3])
    with pytest.raises(CostModelError, match="columns"):
        model.predict(np.zeros(FEATURE_LEN - 1))


def test_trained_on_real_measurements_a_register_tiled_program_outranks_the_naive_loop(tmp_path, target, farm,
                                                                                       mm64):
    """32 auto-space programs of matmul 64^3 timed by the farm; the model then scores two programs it never
    saw: the naive i, j, k loop nest (scalar, B read down a column) and a 4 x 16 register tile vectorized
    along j and unrolled -- several times faster on any x86 CPU."""
    from search_programs import register_tiled
    from tunefarm.search.features import extract_features
    from tunefarm.tuning.api import tune

    result = tune(mm64, target=target, max_trials=32, trials_per_round=16, database=str(tmp_path / "t.sqlite"),
                  farm=farm, seed=0)
    model = result.cost_model
    assert model.is_trained and model.n_samples == 32
    sch, _, (i0, _, _, _, j1) = register_tiled(mm64)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    fast = extract_features(sch.mod["main"])
    slow = extract_features(mm64)
    p_fast, p_slow = model.predict(np.stack([fast, slow]))
    assert p_fast > p_slow


def test_regression_scores_share_the_scale_of_measurements():
    # the search compares a measured program's log(best / latency) with predictions: only the regression
    # objective predicts on that scale
    x, lat = _data(200, 4)
    reg = XGBCostModel(seed=0)
    reg.update(x, ["w"] * 200, list(lat), retrain=True)
    assert reg.predicts_log_throughput and not XGBCostModel(objective="rank").predicts_log_throughput
    pred = reg.predict(x)
    target = np.log(lat.min() / lat)
    assert np.median(np.abs(pred - target)) < 0.5 * np.median(np.abs(target - target.mean()))


def test_training_from_the_packed_payload_anywhere_serves_the_same_model():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, FEATURE_LEN)).astype(np.float32)
    lat = list(1e-3 * np.exp(-x[:, 0]))
    lat[3] = None  # a failed measurement
    here, there = XGBCostModel(seed=7), XGBCostModel(seed=7)
    for m in (here, there):
        m.add(x, ["w"] * 64, lat)
        assert m.wants_training() and m.new_samples == 64
    here.train()
    payload = json.loads(json.dumps(there.training_payload()))  # plain JSON: what crosses the wire
    assert there.new_samples == 0 and not there.wants_training()
    there.install(json.loads(json.dumps(fit(payload))))
    np.testing.assert_array_equal(here.predict(x), there.predict(x))
    assert here.version == there.version == 1
    assert here.metrics.as_dict() == there.metrics.as_dict()
    there.add(x[:16], ["w"] * 16, lat[:16])
    assert there.wants_training()


def test_a_cost_model_is_created_by_name():
    from tunefarm.search.cost_model import CostModel, create

    model = create("xgb", seed=3, min_train_samples=8)
    assert isinstance(model, XGBCostModel) and isinstance(model, CostModel)
    assert model.seed == 3 and model.min_train_samples == 8 and not model.is_trained
    with pytest.raises(ValueError, match="unknown cost model 'lightgbm'"):
        create("lightgbm")


def test_a_worker_that_kept_the_samples_is_sent_only_the_new_ones_and_serves_the_same_model():
    from tunefarm.farm.trial_clock import TrialClock
    from tunefarm.farm.work import WorkerContext
    from tunefarm.tuning.handlers import train

    rng = np.random.default_rng(5)
    x = rng.normal(size=(96, FEATURE_LEN)).astype(np.float32)
    lat = list(1e-3 * np.exp(-x[:, 0]))
    lat[7] = None
    groups = ["a", "b"] * 48
    full, incremental = XGBCostModel(seed=3), XGBCostModel(seed=3)
    ctx = WorkerContext("w0", None, TrialClock())
    wire = lambda p: json.loads(json.dumps(p))  # noqa: E731 - plain JSON, what crosses the wire
    for start, end in ((0, 48), (48, 64), (64, 96)):
        for m in (full, incremental):
            m.add(x[start:end], groups[start:end], lat[start:end])
        sent = incremental.training_payload(start)
        assert sent["since"] == start and sent["n"] == incremental.n_samples - start  # only the new rows
        assert len(sent["groups"]) == len(sent["latencies"]) == sent["n"]
        got = train(wire(sent), ctx)
        assert got["n"] == incremental.n_samples  # the worker trained on all of them
        incremental.install(wire(got))
        full.install(wire(fit(wire(full.training_payload()))))
        np.testing.assert_array_equal(full.predict(x), incremental.predict(x))
        assert full.metrics.as_dict() == incremental.metrics.as_dict()


def test_a_worker_without_the_earlier_samples_says_how_many_it_holds():
    from tunefarm.farm.trial_clock import TrialClock
    from tunefarm.farm.work import WorkerContext
    from tunefarm.tuning.handlers import train

    rng = np.random.default_rng(6)
    x = rng.normal(size=(40, FEATURE_LEN)).astype(np.float32)
    model = XGBCostModel(seed=1)
    model.add(x[:24], ["w"] * 24, list(1e-3 * np.exp(-x[:24, 0])))
    first = model.training_payload()
    model.add(x[24:], ["w"] * 16, list(1e-3 * np.exp(-x[24:, 0])))
    fresh = WorkerContext("w1", None, TrialClock())
    assert train(model.training_payload(24), fresh) == {"missing": 0}  # a worker that never saw the first 24
    kept = WorkerContext("w2", None, TrialClock())
    assert train(first, kept)["n"] == 24
    assert train(model.training_payload(30), kept) == {"missing": 24}  # a since it does not hold
    assert train(model.training_payload(24), kept)["n"] == 40
    tail = model.training_payload(10)  # it holds more than 10: its first 10 and these are every sample
    whole = dict(model.training_payload(0), settings=tail["settings"])
    assert train(tail, kept) == fit(whole)
    assert train(model.training_payload(0), kept)["n"] == 40  # every sample: taken anywhere, replacing the set
    with pytest.raises(ValueError, match="since 0"):
        fit(model.training_payload(24))
    with pytest.raises(CostModelError, match="since"):
        model.training_payload(41)
