"""The commands that share and confirm results: ``export --top-k``, ``confirm``, and ``best`` over several
``--db`` (read as one, the first one first)."""
from __future__ import annotations

import json

from dbtest_helpers import TARGET_A, real_programs, store_name
from tunefarm.cli import main
from tunefarm.database import Record, open_database
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus


def test_export_top_k_1_holds_one_record_per_workload_and_target(real_study, tmp_path, capsys):
    db, info = real_study
    out = tmp_path / "best.jsonl"
    assert main(["export", "--db", store_name(db), "-o", str(out), "--top-k", "1"]) == 0
    pairs = [(k, t) for k in info["workloads"].values() for t in db.targets(k)]
    assert f"{len(pairs)} records" in capsys.readouterr().out
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    records = [d for d in lines if d["type"] == "record"]
    assert sorted((d["workload"], d["target"]) for d in records) == sorted(pairs)
    assert {(d["workload"], d["target"]): d["program_hash"] for d in records} == {
        (k, t): db.best(k, t).program_hash for k, t in pairs}
    assert main(["export", "--db", store_name(db), "-o", str(out), "--top-k", "0"]) == 1
    assert "--top-k must be at least 1" in capsys.readouterr().err


def test_confirm_then_best_shows_the_confirmed_figures(real_study, capsys):
    db, info = real_study
    key = info["workloads"]["matmul-16"]
    assert main(["confirm", "--db", store_name(db), "--workload", key, "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "p10-p90" in out and "not confirmed" in out  # TARGET_B is not this host: said so, not timed
    confirmed = db.records(key).dropna(subset=["confirmed_us"])
    assert len(confirmed) == 2 and set(confirmed.target) == {TARGET_A}
    assert (confirmed.confirmed_p10_us <= confirmed.confirmed_us).all()
    assert (confirmed.confirmed_us <= confirmed.confirmed_p90_us).all()
    assert main(["best", "--db", store_name(db), "--workload", key, "--target", TARGET_A]) == 0
    header = capsys.readouterr().out.splitlines()[1].split()
    assert header[:6] == ["workload", "key", "median_us", "confirmed_us", "p10_us", "p90_us"]
    assert main(["confirm", "--db", store_name(db), "--top", "0"]) == 2


def test_best_over_two_databases_reads_both_first_one_first(real_study, new_store, tmp_path, capsys):
    db, info = real_study
    key = info["workloads"]["relu-32"]
    w = db.get_workload(key)
    _, programs = real_programs("relu-32")
    mine = open_database(new_store("mine"))
    mine.commit_workload(w.key, w.name, w.ir_json, w.flop)
    ok = MeasureResult(MeasureStatus.OK, [1e-7, 1.01e-7, 1.02e-7], 0.01, None, "here")
    mine.commit_records([Record(key, programs[-1][0], programs[-1][1], TARGET_A, ok, None, None)])
    assert main(["best", "--db", store_name(mine), "--db", store_name(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["workload_key"], r["target"]) for r in rows} == {(k, t) for k in info["workloads"].values()
                                                                for t in db.targets(k)}
    relu = next(r for r in rows if r["workload_key"] == key)
    assert relu["program_hash"] == programs[-1][1] and relu["median_us"] == 1.01e-1  # mine: the faster one
    html = tmp_path / "r.html"
    assert main(["report", "--db", store_name(mine), "--db", store_name(db), "-o", str(html)]) == 0
    text = html.read_text()
    assert programs[-1][1][:16] in text and "code generator" in text  # mine's record among the team's study
    matmul = info["workloads"]["matmul-16"]
    assert next(r for r in rows if r["workload_key"] == matmul and r["target"] == TARGET_A)["record_id"] == \
        db.best(matmul, TARGET_A).record_id  # only the second database holds it
    mine.close()
