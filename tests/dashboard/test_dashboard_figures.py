"""Every figure the page shows, counted again from the store's ``records()``: after the first read of a study (which
aggregates from the indexes, a ``Span.whole`` read) and after a refresh that folds in new records (id ranges),
on an SQLite file and, under the ``postgres`` marker, on a real PostgreSQL server."""
from __future__ import annotations

import collections

import pytest

from tunefarm.dashboard.queries import StudyQueries
from tunefarm.dashboard.study import BIN_S, Study, error_head
from tunefarm.database import Record, open_database
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.testing.synthetic_study import TARGET, sampled_traces


def _expected_tasks(df) -> dict:
    """Per workload: count, statuses, best, the best-so-far steps (trial, created_us, best) and error counts."""
    out = {}
    for name, wdf in df.sort_values("record_id").groupby("workload"):
        best, curve = float("inf"), []
        for n, (status, us, created) in enumerate(zip(wdf.status, wdf.median_us, wdf.created), start=1):
            if status == "ok" and us == us and us < best:  # us == us: not NaN
                best = us
                curve.append((n, created.value // 1000, us))
        if curve:
            curve.append((len(wdf), int(wdf.created.max().value // 1000), best))
        errors = collections.Counter(error_head(e, s) for e, s in zip(wdf.error, wdf.status) if s != "ok")
        out[name] = {"n": len(wdf), "statuses": {k: int(v) for k, v in wdf.status.value_counts().items() if v},
                     "best_us": None if best == float("inf") else best, "curve": curve, "errors": errors}
    return out


def _check(snap: dict, df) -> None:
    expected = _expected_tasks(df)
    assert snap["n_records"] == len(df) and snap["last_record_id"] == int(df.record_id.max())
    assert sorted(t["workload"] for t in snap["tasks"]) == sorted(expected)
    for t in snap["tasks"]:
        e = expected[t["workload"]]
        assert (t["n"], t["statuses"]) == (e["n"], e["statuses"])
        assert t["best_us"] == (pytest.approx(e["best_us"], rel=1e-12) if e["best_us"] else None)
        c = t["curve"]
        assert list(zip(c["trial"], c["t_us"])) == [(n, us) for n, us, _ in e["curve"]]
        assert c["best_us"] == pytest.approx([b for _, _, b in e["curve"]], rel=1e-12)
        # the three most common error heads, with their exact counts
        assert [n for _, n in t["errors"]] == [n for _, n in e["errors"].most_common(3)]
        assert all(e["errors"][head] == n for head, n in t["errors"])
    for j in snap["jobs"]:
        jdf = df[df.job_id == j["id"]]
        assert j["n"] == len(jdf)
        for t in j["tasks"]:
            tdf = jdf[jdf.workload == t["workload"]]
            ok = tdf[tdf.status == "ok"]
            assert (t["n"], t["ok"]) == (len(tdf), len(ok))
            assert t["best_us"] == (pytest.approx(ok.median_us.min(), rel=1e-12) if len(ok) else None)
    now, width = snap["now_us"], snap["throughput"]["bin_s"]
    bin_of = (df.created.astype("int64") // 1000 // (BIN_S * 10**6))
    merge = width // BIN_S  # bins of BIN_S merged from the study's first one
    assert len(snap["throughput"]["series"]) == df.job_id.nunique() + int(df.job_id.isna().any())
    for ser in snap["throughput"]["series"]:  # per job, the bins add up to its records
        shown = sum(rate * min(width, max(1.0, (now - t) / 1e6)) / 60 for t, rate in zip(ser["t_us"], ser["per_min"]))
        sel = df.job_id.isna() if ser["job"] is None else df.job_id == ser["job"]
        assert shown == pytest.approx(int(sel.sum()))
        first = bin_of.min() + (bin_of[sel].min() - bin_of.min()) // merge * merge
        assert min(ser["t_us"]) == first * BIN_S * 10**6
    for h in snap["hosts"]:
        hdf = df[df.host == h["host"]]
        build, run = sorted(hdf.build_secs), sorted(hdf[hdf.status == "ok"].median_us / 1e6)
        assert (h["n"], h["errors"]) == (len(hdf), int((hdf.status != "ok").sum()))
        assert h["build_s"] == pytest.approx(build[(len(build) - 1) // 2], rel=1e-12)
        assert h["run_s"] == (pytest.approx(run[(len(run) - 1) // 2], rel=1e-12) if run else None)


def _step(db, key: str, start: int, n: int, secs: float) -> None:
    """``n`` records of one task: a few better than any before (some tying the one before), a few failing with
    errors seen before."""
    traces = sampled_traces(8, seed=3)
    recs = []
    for i in range(n):
        if i % 5 == 4:
            result = MeasureResult(MeasureStatus.RUN_ERROR, [], 0.2, "run_error: trial 3 failed\ndetail", "worker-0")
        else:
            s = secs * (0.5 if i % 16 in (7, 8) else 3.0) * (1 - i // 16 / 100)  # ties: not a step
            result = MeasureResult(MeasureStatus.OK, [s] * 3, 0.05 + i / 1000, None, f"worker-{i % 4}")
        recs.append(Record(key, traces[i % 8][0], f"late-{start + i}", TARGET, result, None, start + i,
                           1_750_000_000.0 + 3600 + i))
    db.commit_records(recs)


def test_first_read_and_refreshes_show_what_the_records_hold(study_path):
    path, info = str(study_path[0]), study_path[1]
    live = Study(StudyQueries.open(path))
    live.refresh()
    with open_database(path, readonly=True) as db:
        _check(live.snapshot(), db.records(decisions=False))
    with open_database(path) as db:
        best = float(db.records(decisions=False).median_us.min()) / 1e6
        _step(db, info["keys"][0], 0, 40, best)
    live.refresh()  # the new records' id range, through the window query
    with open_database(path) as db:
        _step(db, info["keys"][1], 40, 24, best)
        _step(db, "hostile-workload", 64, 10, best)
        df = db.records(decisions=False)
    assert live.refresh() == 34
    fresh = Study(StudyQueries.open(path))
    fresh.refresh()  # the same study read whole
    for study in (live, fresh):
        _check(study.snapshot(), df)
    drop = ("now_us", "rate")
    same = [{k: v for k, v in j.items() if k not in drop} for j in live.snapshot()["jobs"]]
    assert same == [{k: v for k, v in j.items() if k not in drop} for j in fresh.snapshot()["jobs"]]
    assert live.snapshot()["tasks"] == fresh.snapshot()["tasks"]
    live.q.close()
    fresh.q.close()
