"""Queries: DataFrame dtypes and values, target isolation, top-k ordering, best ignoring failures."""
from __future__ import annotations

import json
import math
import statistics
import tempfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbtest_helpers import TARGET_A, TARGET_B, make_record
from host_targets import not_this_host
from tunefarm.database import AmbiguousTargetError, Database, Record
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus

EXPECTED_DTYPES = {
    "record_id": "int64", "workload": "str", "workload_key": "str", "target": "str", "status": "category",
    "median_us": "float64", "mean_us": "float64", "min_us": "float64", "gflops": "float64", "trial": "int64",
    "job_id": "Int64", "job": "str", "job_status": "str", "host": "str", "created": "datetime64[ns]",
    "build_secs": "float64", "error": "str", "program_hash": "str", "trace_json": "str", "repeats": "int64",
    "model_version": "Int64", "confirmed_us": "float64", "confirmed_p10_us": "float64",
    "confirmed_p90_us": "float64", "cpu_model": "str", "tunefarm_version": "str", "llvmlite_version": "str",
    "llvm_version": "str",
}


def _check_dtypes(df: pd.DataFrame) -> None:
    assert list(df.columns)[:len(EXPECTED_DTYPES)] == list(EXPECTED_DTYPES)
    assert all(c.startswith("decision_") for c in list(df.columns)[len(EXPECTED_DTYPES):])
    for col, expected in EXPECTED_DTYPES.items():
        dtype = df[col].dtype
        if expected == "str":
            assert pd.api.types.is_string_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype), (col, dtype)
        else:
            assert str(dtype) == expected, (col, dtype)
    assert list(df["status"].cat.categories) == [s.value for s in MeasureStatus]


def test_records_dtypes_and_values(study):
    db, info = study
    df = db.records()
    _check_dtypes(df)
    assert len(df) == db.count_records() == 410
    assert df["record_id"].is_monotonic_increasing
    ok = df[df["status"] == "ok"]
    failed = df[df["status"] != "ok"]
    assert len(ok) and len(failed)
    assert failed[["median_us", "mean_us", "min_us", "gflops"]].isna().all().all()
    assert ok[["median_us", "mean_us", "min_us"]].notna().all().all()
    assert (ok["min_us"] <= ok["median_us"]).all() and (ok["median_us"] <= ok["mean_us"] * 1.05).all()
    assert failed["error"].notna().all() and ok["error"].isna().all()
    # one row checked against what was committed
    best = db.best("dense_128x128x128", target=TARGET_A)
    row = df[df["record_id"] == best.record_id].iloc[0]
    assert row["median_us"] == pytest.approx(statistics.median(best.result.run_secs) * 1e6)
    assert row["mean_us"] == pytest.approx(statistics.fmean(best.result.run_secs) * 1e6)
    assert row["gflops"] == pytest.approx(2 * 128 ** 3 / statistics.median(best.result.run_secs) / 1e9)
    assert json.loads(row["trace_json"]) == best.trace_json
    assert (row["workload"], row["workload_key"], row["target"], row["job"]) == (
        "dense_128x128x128", "wk-dense", TARGET_A, "tune-dense")
    assert row["created"] == pd.Timestamp(best.created.replace(tzinfo=None))
    # unknown FLOP count: GFLOP/s is NaN even for successes
    assert df[df["workload_key"] == "wk-evil"]["gflops"].isna().all()
    assert df[df["workload_key"] == "wk-evil"]["job_id"].isna().all()


def test_empty_records_keep_the_schema(db):
    _check_dtypes(db.records())
    db.commit_workload("k", "w", "{}", 1.0)
    _check_dtypes(db.records("k", target=TARGET_A, status=["ok", "timeout"]))
    assert db.workloads()["n_records"].tolist() == [0]


def test_records_filters(study):
    db, _ = study
    relu_b = db.records("relu_1024", target=TARGET_B)
    assert len(relu_b) == 120 and set(relu_b["target"]) == {TARGET_B} and set(relu_b["workload_key"]) == {"wk-relu"}
    assert set(db.records(status="ok")["status"]) == {"ok"}
    two = db.records(status=[MeasureStatus.TIMEOUT, "build_error"])
    assert set(two["status"]) == {"timeout", "build_error"}
    assert len(db.records(target=not_this_host())) == 0
    w = db.workloads()
    assert w.set_index("key").loc["wk-relu", "n_records"] == 180
    assert w["n_ok"].sum() == len(db.records(status="ok"))


def test_other_target_never_leaks(study):
    db, _ = study
    a = db.top_k("wk-relu", 1000, target=TARGET_A)
    b = db.top_k("wk-relu", 1000, target=TARGET_B)
    assert a and b and {r.target for r in a} == {TARGET_A} and {r.target for r in b} == {TARGET_B}
    assert {r.record_id for r in a}.isdisjoint(r.record_id for r in b)
    assert db.top_k("wk-dense", 10, target=TARGET_B) == []
    assert db.best("wk-dense", target=TARGET_B) is None
    assert db.best("wk-dense", target=not_this_host(tag="nonexistent")) is None
    assert len(db.records("wk-dense", target=TARGET_B)) == 0


def test_target_must_be_given_when_ambiguous(study):
    db, _ = study
    with pytest.raises(AmbiguousTargetError) as err:
        db.best("relu_1024")
    assert TARGET_A in str(err.value) and TARGET_B in str(err.value)
    with pytest.raises(AmbiguousTargetError):
        db.top_k("wk-relu", 5)
    assert db.best("wk-dense").target == TARGET_A  # one target: inferred


def test_top_k_order_and_best_ignores_failures(db):
    db.commit_workload("k", "w", "{}", 1e6)
    secs = [5e-4, 1e-4, 3e-4, 2e-4, 4e-4]
    recs = [make_record("k", i, secs=s) for i, s in enumerate(secs)]
    # failures committed before and after; a failure carries no latency, so it can never be "best"
    fails = [make_record("k", 100 + i, status=s) for i, s in enumerate(MeasureStatus) if s is not MeasureStatus.OK]
    db.commit_records(fails[:2] + recs + fails[2:])
    top = db.top_k("k", 3)
    assert [r.trial for r in top] == [1, 3, 2]
    assert [r.median_secs for r in top] == sorted(r.median_secs for r in top)
    assert all(r.status is MeasureStatus.OK for r in db.top_k("k", 100))
    assert len(db.top_k("k", 100)) == 5
    assert db.best("k").trial == 1
    assert db.top_k("k", 0) == []
    with pytest.raises(ValueError):
        db.top_k("k", -1)


def test_best_is_none_when_everything_failed(db):
    db.commit_workload("k", "w", "{}", 1.0)
    db.commit_records([make_record("k", i, status=MeasureStatus.RUN_ERROR) for i in range(3)])
    assert db.best("k") is None
    assert db.count_records("k") == 3


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(list(MeasureStatus)), st.floats(1e-7, 1.0),
                          st.sampled_from([TARGET_A, TARGET_B])), min_size=1, max_size=40),
       st.integers(1, 10))
def test_top_k_matches_a_sorted_reference(items, k):
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"{tmp}/h.sqlite")
        db.commit_workload("k", "w", "{}", 1.0)
        recs = []
        for i, (status, s, target) in enumerate(items):
            res = MeasureResult(status, [s] if status is MeasureStatus.OK else [])
            recs.append(Record("k", [["A", [], [i], []]], f"h{i}", target, res, None, i))
        db.commit_records(recs)
        for target in (TARGET_A, TARGET_B):
            ref = sorted((s, i) for i, (status, s, t) in enumerate(items) if t == target and status is MeasureStatus.OK)
            got = db.top_k("k", k, target=target)
            assert [(r.median_secs, r.trial) for r in got] == ref[:k]
            best = db.best("k", target=target)
            assert (best is None) == (not ref) and (best is None or best.trial == ref[0][1])
        df = db.records()
        assert len(df) == len(items)
        expected = np.array([s * 1e6 if st_ is MeasureStatus.OK else math.nan for st_, s, _ in items])
        np.testing.assert_allclose(df["median_us"].to_numpy(), expected, rtol=1e-12)
        db.close()


def test_records_have_a_column_per_sampling_decision_and_the_repeat_count(study):
    db, _ = study
    df = db.records("dense_128x128x128", target=TARGET_A)
    assert list(df.columns)[len(EXPECTED_DTYPES):] == ["decision_2_sample_perfect_tile"]
    wrapped = df["trace_json"].map(lambda t: isinstance(json.loads(t), dict))
    expected = [tuple(d for _, d in json.loads(t)["decisions"])[0] for t in df[wrapped]["trace_json"]]
    assert df[wrapped]["decision_2_sample_perfect_tile"].tolist() == [tuple(e) for e in expected]
    assert df[~wrapped]["decision_2_sample_perfect_tile"].isna().all()  # bare instruction lists decide nothing
    fastest = df[df.status == "ok"].groupby("decision_2_sample_perfect_tile").median_us.min()  # tuples group
    assert len(fastest) >= 2
    ok = df["status"] == "ok"
    assert (df[ok]["repeats"] == 3).all() and (df[~ok]["repeats"] == 0).all()
    assert list(db.records(decisions=False).columns) == list(EXPECTED_DTYPES)
