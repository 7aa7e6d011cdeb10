"""The dashboard's JSON endpoints against a real study and a real server on 127.0.0.1: the tests that take
``study_path`` or ``new_store`` run on an SQLite file, and on a real PostgreSQL server under the ``postgres`` marker."""
from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import time

import pytest
from dashtest_helpers import HOSTILE, add_hostile, get, get_json

from tunefarm.cli import main as cli_main
from tunefarm.dashboard import DashboardServer
from tunefarm.dashboard.queries import StudyQueries
from tunefarm.dashboard.study import SLICE_CAP, Study
from tunefarm.database import Database, open_database
from tunefarm.testing.postgres_server import PASSWORD
from tunefarm.database.errors import DatabaseError
from tunefarm.testing.synthetic_study import TARGET, build_study

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _task(summary, name):
    return next(t for t in summary["tasks"] if t["workload"] == name)


def test_summary_matches_the_database(server, study_path):
    s = get_json(server.url + "api/summary")
    with open_database(str(study_path[0]), readonly=True) as db:
        df = db.records()
        assert s["n_records"] == db.count_records() == len(df)
        assert s["last_record_id"] == int(df.record_id.max())
        for name, wdf in df.groupby("workload"):
            t = _task(s, name)
            assert t["n"] == len(wdf)
            assert t["ok"] == int((wdf.status == "ok").sum())
            assert t["best_us"] == pytest.approx(wdf.median_us.min(), rel=1e-9)
            assert t["statuses"] == {k: int(v) for k, v in wdf.status.value_counts().items() if v}
            # the curve is the running minimum, ending at the task's last trial
            assert t["curve"]["trial"][-1] == len(wdf)
            assert t["curve"]["best_us"] == sorted(t["curve"]["best_us"], reverse=True)
            assert t["curve"]["best_us"][-1] == pytest.approx(t["best_us"])
        jobs = db.jobs()
    assert [j["id"] for j in s["jobs"]] == list(jobs.job_id)
    for j, (_, row) in zip(s["jobs"], jobs.iterrows()):
        assert j["n"] == row.n_records and j["state"] == row.status == "finished" and j["rate"] == 0
        assert j["budget"] == 200
        assert sum(t["n"] for t in j["tasks"]) == j["n"]
    assert sum(h["n"] for h in s["hosts"]) == s["n_records"]
    for h in s["hosts"]:  # in the first answer already  # the lower median: a value that was measured
        hdf = df[df.host == h["host"]]
        assert h["n"] == len(hdf) and h["errors"] == int((hdf.status != "ok").sum())
        build, run = sorted(hdf.build_secs), sorted(hdf[hdf.status == "ok"].median_us / 1e6)
        assert h["build_s"] == pytest.approx(build[(len(build) - 1) // 2])
        assert h["run_s"] == (pytest.approx(run[(len(run) - 1) // 2]) if run else None)  # a host of failures
    width, now = s["throughput"]["bin_s"], s["now_us"]  # the bin under way is a rate over its elapsed part
    assert sum(rate * min(width, max(1.0, (now - t) / 1e6)) / 60 for ser in s["throughput"]["series"]
               for t, rate in zip(ser["t_us"], ser["per_min"])) == pytest.approx(s["n_records"])


def test_hostile_names_are_data_and_the_page_forbids_inline_script(server):
    s = get_json(server.url + "api/summary")
    t = _task(s, HOSTILE)  # the name arrives verbatim, as JSON data: the page sets it as text
    assert t["errors"][0][0] == f"{HOSTILE} <script>x()</script>"
    assert any(h["host"] == HOSTILE for h in s["hosts"])
    status, headers, body = get(server.url)
    assert status == 200
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "unsafe-inline" not in headers["Content-Security-Policy"]
    page = body.decode()
    assert "<script>" not in page and "onerror" not in page  # every script is a file of the package
    for name in ("app.js", "charts.js", "style.css"):
        status, _, text = get(server.url + "static/" + name)
        assert status == 200 and len(text) > 1000
    app = get(server.url + "static/app.js")[2].decode()
    assert "innerHTML" not in app and "insertAdjacentHTML" not in app and "outerHTML" not in app


def test_task_endpoint_top_k_traces_and_decisions(server, study_path):
    s = get_json(server.url + "api/summary")
    t = _task(s, "matmul_64")
    d = get_json(server.url + f"api/task?workload={t['workload_id']}&target={t['target_id']}&k=5")
    with open_database(str(study_path[0]), readonly=True) as db:
        top = db.top_k(t["key"], 5, target=TARGET)
    assert [p["record_id"] for p in d["top"]] == [r.record_id for r in top]
    assert [p["us"] for p in d["top"]] == pytest.approx([r.median_us for r in top])
    assert d["top"][0]["gflops"] == pytest.approx(top[0].gflops)
    assert all(p["trace"].count("sch.sample_perfect_tile") == 2 and "sch.split" in p["trace"] for p in d["top"])
    names = [dec["name"] for dec in d["decisions"]]
    assert len(names) == 2 and all(n.startswith("decision_") and n.endswith("sample_perfect_tile") for n in names)
    for dec in d["decisions"]:
        assert len(dec["x"]) == len(dec["us"]) == d["n_sampled"] <= SLICE_CAP + 5
        assert all(isinstance(x, str) and "×" in x for x in dec["x"])  # [4, 16] reads 4×16
        assert min(dec["us"]) == pytest.approx(t["best_us"])  # the best program is among the points
    assert d["decisions"][0]["spread"] >= d["decisions"][1]["spread"]


def test_refresh_reads_only_new_records_and_follows_a_writer_process(study_path):
    path = str(study_path[0])

    q = StudyQueries.open(path)
    tallies, rows_read = q.tallies, [0]

    def counting(span):  # counts the records each refresh's aggregates covered (the id ranges it asked about)
        rows = tallies(span)
        rows_read[0] += sum(r[4] for r in rows)
        return rows

    q.tallies = counting
    study = Study(q)
    first = study.refresh()
    assert first == rows_read[0] == study.snapshot()["n_records"]
    assert study.refresh() == 0 and rows_read[0] == first
    code = ("import sys; from tunefarm.database import open_database; from tunefarm.testing.synthetic_study "
            "import build_study; build_study(open_database(sys.argv[1]), 150, n_workloads=2, n_jobs=1, seed=5)")
    subprocess.run([sys.executable, "-c", code, path], check=True, cwd=REPO, timeout=120)
    assert study.refresh() == 150
    assert rows_read[0] == first + 150
    snap = study.snapshot()
    with open_database(path, readonly=True) as db:
        assert snap["n_records"] == db.count_records()
        assert len(snap["jobs"]) == len(db.jobs())
    q.close()


def test_a_running_job_shows_live_state_rate_and_planned_tasks(new_store):
    path = new_store("live")
    with open_database(str(path)) as db:
        db.commit_workload("wk-a", "live_a", "{}", 1e6)
        db.commit_workload("wk-b", "live_b", "{}", 1e6)
        job = db.start_job("live", {"max_trials": 50, "target": TARGET,
                                    "tasks": [["live_a", "wk-a", 1.0], ["live_b", "wk-b", 1.0]]})
        key = add_hostile(db, n=4, job=job)
        assert key
        with DashboardServer(str(path), port=0).start() as server:
            s = get_json(server.url + "api/summary")
            (j,) = s["jobs"]
            assert j["state"] == "running" and j["n"] == 4 and j["budget"] == 50
            assert 4 / 40 <= j["rate"] <= 4  # four records since the job started, under a second ago
            assert {t["workload"] for t in j["tasks"]} == {"live_a", "live_b", HOSTILE}  # planned ones too
            assert all(t["n"] == 0 for t in j["tasks"] if t["workload"] != HOSTILE)
            db.finish_job(job, "finished")
            assert get_json(server.url + "api/summary")["jobs"][0]["state"] == "finished"


def test_empty_study(new_store):
    path = new_store("empty")
    open_database(str(path)).close()
    with DashboardServer(str(path), port=0).start() as server:
        s = get_json(server.url + "api/summary")
        assert (s["n_records"], s["jobs"], s["tasks"], s["hosts"], s["throughput"]["series"]) == (0, [], [], [], [])
        d = get_json(server.url + "api/task?workload=1&target=1")
        assert d["top"] == [] and d["decisions"] == []


@pytest.mark.parametrize("kind", ["sqlite"])  # what only an SQLite file has
def test_nothing_writes_and_nothing_outside_the_study_is_served(server, study_path):
    path = study_path[0]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, _ = get(server.url + "api/summary", method, b"{}")
        assert status == 405 and headers["Allow"] == "GET, HEAD"
    for bad in ("static/../server.py", "static/..%2Fserver.py", "static/queries.py", "etc/passwd",
                "static//etc/passwd", "api/records"):
        assert get(server.url + bad)[0] == 404, bad
    for bad in ("api/task", "api/task?workload=x&target=1", "api/task?workload=1"):
        status, _, body = get(server.url + bad)
        assert status == 400 and "expected" in json.loads(body)["error"]
    get_json(server.url + "api/summary")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert server.httpd.server_address[0] == "127.0.0.1"


def test_binds_loopback_by_default_and_refuses_a_missing_study(tmp_path, capsys):
    assert DashboardServer.__init__.__defaults__[0] == "127.0.0.1"
    with pytest.raises(DatabaseError, match="no tunefarm database"):
        DashboardServer(str(tmp_path / "missing.sqlite"), port=0)
    assert cli_main(["dashboard", "--db", str(tmp_path / "missing.sqlite"), "--port", "0"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tunefarm dashboard: error: ") and "no tunefarm database" in err and "\n" not in err


def test_the_command_serves_until_interrupted(study_path):
    proc = subprocess.Popen([sys.executable, "-m", "tunefarm.cli", "dashboard", "--db", str(study_path[0]),
                             "--port", "0"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("tunefarm dashboard of ") and "http://127.0.0.1:" in line
        assert "(412 records read in " in line  # the study is read before the server listens
        assert PASSWORD not in line and ("***@" in line) == str(study_path[0]).startswith("postgresql://")
        url = line.split(" at ")[1].split()[0]
        deadline = time.monotonic() + 30
        s = get_json(url + "api/summary")
        assert s["n_records"] > 0 and time.monotonic() < deadline
    finally:
        proc.send_signal(2)
        assert proc.wait(timeout=30) == 0
    assert not math.isnan(s["tasks"][0]["best_us"])


@pytest.mark.parametrize("kind", ["sqlite"])  # what only an SQLite file has
def test_writer_processes_that_come_and_go_do_not_break_the_view(study_path):
    """Each writer process that exits checkpoints the WAL; the dashboard's connection must keep it from
    removing the WAL under it."""
    path = str(study_path[0])
    code = ("import sys; from tunefarm.database import Database; from tunefarm.testing.synthetic_study import "
            "build_study; build_study(Database(sys.argv[1]), 40, n_workloads=1, n_jobs=1, seed=int(sys.argv[2]))")
    with DashboardServer(path, port=0).start() as server:
        get_json(server.url + "api/summary")
        for seed in (11, 12, 13):
            subprocess.run([sys.executable, "-c", code, path, str(seed)], check=True, cwd=REPO, timeout=120)
            s = get_json(server.url + "api/summary")
        assert s["n_records"] == 412 + 3 * 40


def test_top_k_ranks_confirmed_records_first_as_best_does(study_path, capsys):
    """Two records re-timed on a quiet host, neither the fastest by the farm's median: the page's top-k puts them
    first, by their confirmed medians, in the order of ``db.top_k`` and ``tunefarm best``, and shows each
    confirmed median with its p10-p90 spread beside the farm's figure."""
    path = str(study_path[0])
    with open_database(path) as db:
        key = db.get_workload("matmul_64").key
        by_median = db.top_k(key, 12, target=TARGET)
        assert not any(r.confirmed for r in by_median)
        fast, slow = by_median[6], by_median[9]  # confirmed slower than the farm's best: still ranked first
        best_secs = by_median[0].median_secs
        figures = [(slow.record_id, best_secs * 1.5, best_secs * 1.4, best_secs * 1.7),
                   (fast.record_id, best_secs * 2.0, best_secs * 1.9, best_secs * 2.2)]
        assert db.store_confirmed(figures) == 2
        top = db.top_k(key, 6, target=TARGET)
    assert [r.record_id for r in top[:3]] == [slow.record_id, fast.record_id, by_median[0].record_id]
    with DashboardServer(path, port=0).start() as server:
        t = _task(get_json(server.url + "api/summary"), "matmul_64")
        d = get_json(server.url + f"api/task?workload={t['workload_id']}&target={t['target_id']}&k=6")
    assert [p["record_id"] for p in d["top"]] == [r.record_id for r in top]
    assert d["top"][0]["confirmed"] == pytest.approx({"us": best_secs * 1.5e6, "p10_us": best_secs * 1.4e6,
                                                      "p90_us": best_secs * 1.7e6})
    assert d["top"][0]["us"] == pytest.approx(slow.median_us)  # the farm's figure stays beside it
    assert d["top"][1]["confirmed"]["us"] == pytest.approx(best_secs * 2e6)
    assert all(p["confirmed"] is None for p in d["top"][2:])
    assert [p["us"] for p in d["top"][2:]] == sorted(p["us"] for p in d["top"][2:])
    capsys.readouterr()
    assert cli_main(["best", "--db", path, "--workload", key, "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["record_id"] == d["top"][0]["record_id"] and row["confirmed_us"] == pytest.approx(best_secs * 1.5e6)


def test_a_driver_that_died_shows_its_job_killed(tmp_path):
    path = str(tmp_path / "killed.sqlite")
    Database(path).close()
    code = ("import os, sys; from tunefarm.database import Database; db = Database(sys.argv[1]); "
            "db.start_job('doomed', {'max_trials': 10}); os._exit(0)")  # never finishes its job
    subprocess.run([sys.executable, "-c", code, path], check=True, cwd=REPO, timeout=120)
    with DashboardServer(path, port=0).start() as server:
        (j,) = get_json(server.url + "api/summary")["jobs"]
    assert (j["name"], j["state"], j["rate"], j["budget"]) == ("doomed", "killed", 0, 10)
