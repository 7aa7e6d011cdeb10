"""The dashboard over several studies read as one (``--db A --db B``), checked against ``LayeredDatabase`` and
against the records of each file: two real SQLite studies here; an SQLite file and a PostgreSQL study on a real
server under the ``postgres`` marker (``test_dashboard_postgres.py``)."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from dashtest_helpers import HOSTILE, build_layers, check_union, get_json, records_of

from tunefarm.cli import main as cli_main
from tunefarm.dashboard import DashboardServer
from tunefarm.dashboard.layered import LayeredStudy
from tunefarm.database import Record, open_database
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.testing.synthetic_study import TARGET, build_study, sampled_traces

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def layers(tmp_path):
    first, second = str(tmp_path / "team.sqlite"), str(tmp_path / "mine.sqlite")
    return first, second, build_layers(first, second)


def test_two_studies_show_as_layered_database_reads_them(layers):
    first, second, made = layers
    with DashboardServer([first, second], port=0).start() as server:
        snap = get_json(server.url + "api/summary")
        check_union(snap, lambda t: get_json(server.url + f"api/task?workload={t['workload_id']}"
                                             f"&target={t['target_id']}&k=10"), [first, second])
        key_task = next(t for t in snap["tasks"] if t["key"] == made["key"])
        d = get_json(server.url + f"api/task?workload={key_task['workload_id']}&target={key_task['target_id']}")
    # the second's confirmed program first; its confirmed copy of the first's best is the first's record
    assert (d["top"][0]["study"], d["top"][0]["record_id"]) == (second, made["own"])
    assert (d["top"][1]["study"], d["top"][1]["record_id"]) == (first, made["first_best"])
    assert d["top"][1]["confirmed"] is None and made["copy"] not in [p["record_id"] for p in d["top"]
                                                                    if p["study"] == second]
    assert len({t["workload_id"] for t in snap["tasks"] if t["workload"] == "matmul_64"}) == 2  # two keys
    assert {j["study"] for j in snap["jobs"]} == {first, second}
    assert any(HOSTILE == t["workload"] for t in snap["tasks"])


def test_best_and_the_page_agree_on_two_studies(layers, capsys):
    first, second, _ = layers
    capsys.readouterr()
    assert cli_main(["best", "--db", first, "--db", second, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    study = LayeredStudy([first, second])
    study.refresh()
    snap = study.snapshot()
    assert len(rows) == len(snap["tasks"])
    for row in rows:
        t = next(t for t in snap["tasks"] if t["key"] == row["workload_key"] and t["target"] == row["target"])
        top = study.detail(t["workload_id"], t["target_id"], 1)["top"][0]
        assert (top["record_id"], top["us"]) == (row["record_id"], pytest.approx(row["median_us"]))
        assert (top["confirmed"] or {}).get("us") == (None if row["confirmed_us"] is None
                                                      else pytest.approx(row["confirmed_us"]))
    study.close()


def test_each_study_refreshes_on_its_own(layers):
    """A refresh reads, in each study, only the records new to it: a step committed to one study is read there,
    and the other one's aggregates cover nothing."""
    first, second, made = layers
    study = LayeredStudy([first, second])
    study.refresh()
    read = {}
    for layer in study.layers:
        tallies = layer.study.q.tallies

        def counting(span, tallies=tallies, name=layer.name):
            rows = tallies(span)
            read[name] = read.get(name, 0) + sum(r[4] for r in rows)
            return rows
        layer.study.q.tallies = counting
    before = study.snapshot()
    study.refresh()
    assert read == {}  # nothing new anywhere: no aggregate ran
    traces = sampled_traces(4, seed=3)
    ok = MeasureResult(MeasureStatus.OK, [1e-6] * 3, 0.1, None, "worker-new")  # faster than any: a new best
    with open_database(second) as db:
        db.commit_records([Record(made["key"], traces[i % 4][0], f"new-{i}", TARGET, ok, None, i) for i in range(64)])
    study.refresh()
    assert read == {second: 64}
    after = study.snapshot()
    assert after["n_records"] == before["n_records"] + 64
    t = next(t for t in after["tasks"] if t["key"] == made["key"])
    assert t["best_us"] == pytest.approx(1.0)
    assert next(h for h in after["hosts"] if h["host"] == "worker-new")["n"] == 64
    check_union(after, lambda t: study.detail(t["workload_id"], t["target_id"], 10), [first, second])
    study.close()


def test_a_study_that_cannot_be_read_is_named_and_the_others_show(layers, tmp_path):
    first, second, _ = layers
    later = str(tmp_path / "later.sqlite")
    with DashboardServer([first, later], port=0).start() as server:
        snap = get_json(server.url + "api/summary")
        (err,) = snap["errors"]
        assert later in err and "\n" not in err and "no tunefarm database" in err
        assert snap["n_records"] == len(records_of([first])) and [x["error"] for x in snap["layers"]] == [None, err]
        with open_database(later) as db:  # the study appears: the next refresh reads it
            build_study(db, 50, n_workloads=1, n_jobs=1, seed=4)
        snap = get_json(server.url + "api/summary")
        assert snap["errors"] == [] and snap["n_records"] == len(records_of([first, later]))
        conn = sqlite3.connect(later)  # a study that stops being readable while shown
        conn.execute("DROP TABLE records")
        conn.commit()
        conn.close()
        snap = get_json(server.url + "api/summary")
        (err,) = snap["errors"]
        assert later in err and "records" in err and "\n" not in err
        assert snap["n_records"] == len(records_of([first])) and snap["tasks"] and snap["jobs"]
    with pytest.raises(Exception, match="no tunefarm database"):  # nothing to show at all: refused at start
        DashboardServer([str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")], port=0)


def test_the_command_takes_several_db(layers):
    first, second, _ = layers
    missing = os.path.join(os.path.dirname(first), "missing.sqlite")
    proc = subprocess.Popen([sys.executable, "-m", "tunefarm.cli", "dashboard", "--db", first, "--db", second,
                             "--db", missing, "--port", "0"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"tunefarm dashboard of {first} + {second} + {missing} (")
        assert f"({len(records_of([first, second])):,} records read in " in line
        warning = proc.stderr.readline()
        assert warning.startswith("tunefarm dashboard: warning: ") and missing in warning
        snap = get_json(line.split(" at ")[1].split()[0] + "api/summary")
        assert [x["name"] for x in snap["layers"]] == [first, second, missing]
    finally:
        proc.send_signal(2)
        assert proc.wait(timeout=30) == 0


def test_two_empty_studies(tmp_path):
    paths = [str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")]
    for p in paths:
        open_database(p).close()
    with DashboardServer(paths, port=0).start() as server:
        s = get_json(server.url + "api/summary")
        assert (s["n_records"], s["jobs"], s["tasks"], s["hosts"], s["throughput"]["series"], s["errors"]) == (
            0, [], [], [], [], [])
        assert [x["name"] for x in s["layers"]] == paths
        d = get_json(server.url + "api/task?workload=1&target=1")
        assert d["top"] == [] and d["decisions"] == []
