"""Helpers of the dashboard tests: HTTP requests, a workload named like an XSS payload, and two studies that
overlap as a team's and an engineer's do, with what a view of both must show."""
from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request

import pandas as pd
import pytest

from tunefarm.database import Database, Record, open_database
from tunefarm.database.base import URL_SCHEMES
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.testing.synthetic_study import TARGET, build_study, sampled_traces

HOSTILE = "<img src=x onerror=alert(1)>"


def get(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, dict, bytes]:
    """``(status, headers, body)`` of one request (error statuses included)."""
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def get_json(url: str):
    status, _, body = get(url)
    assert status == 200, body
    return json.loads(body)


def add_hostile(db: Database, n: int = 12, job: int | None = None) -> str:
    """A workload named like an XSS payload, with ``n`` records (a few failing with a hostile error)."""
    key = "hostile-workload"
    db.commit_workload(key, HOSTILE, '{"hostile": true}', 1e6)
    recs = []
    for i, (trace, factor) in enumerate(sampled_traces(n, seed=7)):
        if i % 4 == 3:
            result = MeasureResult(MeasureStatus.BUILD_ERROR, [], 0.1, f"{HOSTILE} <script>x()</script>", HOSTILE)
        else:
            result = MeasureResult(MeasureStatus.OK, [1e-5 * factor] * 3, 0.1, None, "host-a")
        recs.append(Record(key, trace, f"hostile-{i}", TARGET, result, job, i))
    db.commit_records(recs)
    return key


def _execute(path: str, sql: str, params: tuple = ()) -> list[tuple]:
    """One statement on a study, as another tool would write it (not through tunefarm), committed."""
    if str(path).startswith(URL_SCHEMES):
        import psycopg  # only the postgres run, which installs it, passes a URL
        with psycopg.connect(str(path)) as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(path)
    try:
        with conn:
            return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def build_layers(first: str, second: str) -> dict:
    """Two studies that overlap as a team's and an engineer's do: the same workloads (by key) and programs (by
    hash) in both, a workload only the second has (named like one of the first's, under another key), a job of
    the first that the second imported (its uid), and confirmed figures in the second: one on its copy of the
    first's best program (the first's record wins it), one on a program only the second ranks."""
    with open_database(first) as db:
        build_study(db, 400, n_workloads=3, n_jobs=2)
        add_hostile(db)
        key = db.get_workload("matmul_64").key
        first_top = db.top_k(key, 10, target=TARGET)
        (uid,) = db.jobs().query("name == 'job-0'").uid
    with open_database(second) as db:
        build_study(db, 420, n_workloads=3, n_jobs=1)  # seed 0 as the first: the same keys and program hashes
        build_study(db, 60, n_workloads=1, n_jobs=1, seed=1)
        df = db.records(key, target=TARGET)
        ok = df[df.status == "ok"].sort_values("median_us")
        copy = int(ok[ok.program_hash == first_top[0].program_hash].record_id.iloc[0])
        hashes = {r.program_hash for r in first_top}
        own = int(ok[~ok.program_hash.isin(hashes)].record_id.iloc[3])  # not the second's fastest either
        best = first_top[0].median_secs
        assert db.store_confirmed([(copy, best * 0.5, best * 0.4, best * 0.6),
                                   (own, best * 1.2, best * 1.1, best * 1.3)]) == 2
    cols = "name, config_json, started_us, finished_us, status, heartbeat_us"
    (src,) = _execute(first, f"SELECT {cols} FROM jobs WHERE uid = ?", (uid,))
    ((job,),) = _execute(second, f"INSERT INTO jobs (uid, {cols}) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                         (uid, *src))
    _execute(second, "UPDATE records SET job_id = ? WHERE id <= 10", (job,))  # some of its records under it
    return {"key": key, "copy": copy, "own": own, "first_best": first_top[0].record_id}


def records_of(paths) -> pd.DataFrame:
    """Every record of each study, with the study's name (a URL without its password): the union to show."""
    frames = []
    for p in paths:
        with open_database(str(p), readonly=True) as db:
            frames.append(db.records(decisions=False).assign(database=db.path))
    return pd.concat(frames, ignore_index=True)


def check_union(snap: dict, detail, paths: list[str]) -> None:
    """Long because it checks every part of the view: its tasks, jobs, hosts and top-k (``detail(task)``)
    against ``LayeredDatabase`` and against the records of each study."""
    df = records_of(paths)
    assert snap["n_records"] == len(df) == sum(x["n_records"] for x in snap["layers"])
    assert [x["name"] for x in snap["layers"]] == list(dict.fromkeys(df.database)) and snap["errors"] == []
    with open_database([str(p) for p in paths], readonly=True) as db:
        assert len(snap["tasks"]) == len(df.groupby(["workload_key", "target"]))
        for t in snap["tasks"]:
            tdf = df[(df.workload_key == t["key"]) & (df.target == t["target"])]
            assert t["n"] == len(tdf) == db.count_records(t["key"], target=t["target"])
            assert t["statuses"] == {k: int(v) for k, v in tdf.status.value_counts().items() if v}
            assert t["best_us"] == pytest.approx(tdf.median_us.min(), rel=1e-9)
            assert t["workload"] == db.get_workload(t["key"]).name  # the first study's name of the key
            assert sorted(c["study"] for c in t["curves"]) == sorted(set(tdf[tdf.status == "ok"].database))
            for c in t["curves"]:
                assert c["trial"][-1] == (tdf.database == c["study"]).sum()  # the trials of that study
            d = detail(t)
            top = db.top_k(t["key"], 10, target=t["target"])
            assert [(p["study"], p["record_id"]) for p in d["top"]] == [(r.source, r.record_id) for r in top]
            assert [p["confirmed"] and p["confirmed"]["us"] for p in d["top"]] == pytest.approx(
                [r.confirmed and r.confirmed[0] * 1e6 for r in top])
            assert d["decisions"] and d["n_sampled"] >= len(tdf[tdf.status == "ok"]) // 2
        jobs = db.jobs()  # one row per uid, the first study's
    assert sorted((j["study"], j["id"]) for j in snap["jobs"]) == sorted(zip(jobs.database, jobs.job_id))
    assert [j["started_us"] for j in snap["jobs"]] == sorted(j["started_us"] for j in snap["jobs"])
    for j in snap["jobs"]:
        assert j["n"] == int(jobs[(jobs.database == j["study"]) & (jobs.job_id == j["id"])].n_records.iloc[0])
        assert j["n"] == sum(t["n"] for t in j["tasks"])
    hidden = len(df[df.job_id.notna()]) - sum(j["n"] for j in snap["jobs"])  # records of a job shown once
    width, now = snap["throughput"]["bin_s"], snap["now_us"]
    assert sum(rate * min(width, max(1.0, (now - t) / 1e6)) / 60 for ser in snap["throughput"]["series"]
               for t, rate in zip(ser["t_us"], ser["per_min"])) == pytest.approx(len(df) - hidden)
    assert {h["host"] for h in snap["hosts"]} == set(df.host)
    for h in snap["hosts"]:  # merged by name, the medians over the union (the lower median)
        hdf = df[df.host == h["host"]]
        build, run = sorted(hdf.build_secs), sorted(hdf[hdf.status == "ok"].median_us / 1e6)
        assert h["n"] == len(hdf) and h["errors"] == int((hdf.status != "ok").sum())
        assert h["build_s"] == pytest.approx(build[(len(build) - 1) // 2], rel=1e-12)
        assert h["run_s"] == (pytest.approx(run[(len(run) - 1) // 2], rel=1e-12) if run else None)
