"""The ``tunefarm best`` and ``tunefarm report`` commands, through main() and ``python -m tunefarm.cli``."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from dbtest_helpers import EVIL_NAME, REPO, TARGET_A, TARGET_B, make_record, repo_env, store_name
from host_targets import not_this_host
from tunefarm.cli import main


def test_best_table(study, capsys):
    db, _ = study
    assert main(["best", "--db", store_name(db)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["workload", "key", "target", "median_us", "gflops"]
    assert len(lines) == 1 + 4  # dense, relu x 2 targets, evil
    best = db.best("wk-dense")
    dense = next(line for line in lines if line.startswith("dense_128x128x128"))
    assert f"{best.median_us:,.3f}" in dense and TARGET_A in dense


def test_best_csv_and_json_match_the_database(study, capsys):
    db, _ = study
    assert main(["best", "--db", store_name(db), "--workload", "relu_1024", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["target"] for r in rows} == {TARGET_A, TARGET_B}
    for r in rows:
        best = db.best("wk-relu", target=r["target"])
        assert float(r["median_us"]) == pytest.approx(best.median_us)
        assert json.loads(r["trace"]) == best.trace_json
    assert main(["best", "--db", store_name(db), "--workload", "wk-relu", "--target", TARGET_B,
                 "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    best = db.best("wk-relu", target=TARGET_B)
    assert (row["target"], row["record_id"], row["trace"]) == (TARGET_B, best.record_id, best.trace_json)
    assert main(["best", "--db", store_name(db), "--workload", "wk-evil", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["workload"] == EVIL_NAME and row["gflops"] is None  # NaN is not JSON: unknown FLOPs -> null


def test_best_errors(study, tmp_path, capsys):
    db, _ = study
    missing = tmp_path / "missing.sqlite"
    assert main(["best", "--db", str(missing)]) == 1
    assert "no tunefarm database" in capsys.readouterr().err
    assert not missing.exists()  # a typo must not create an empty database
    assert main(["best", "--db", store_name(db), "--workload", "nope"]) == 1
    assert "nope" in capsys.readouterr().err
    assert main(["best", "--db", store_name(db), "--target", not_this_host()]) == 1
    assert "no successful records" in capsys.readouterr().err
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 500)
    assert main(["best", "--db", str(junk)]) == 1
    err = capsys.readouterr().err
    assert "not a tunefarm database" in err and "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["best"])  # argparse: --db is required


def test_report_command(study, tmp_path, capsys):
    db, _ = study
    out = tmp_path / "r.html"
    assert main(["report", "--db", store_name(db), "-o", str(out)]) == 0
    assert "410 records" in capsys.readouterr().out
    html = out.read_text()
    assert "dense_128x128x128" in html and "<svg" in html
    assert main(["report", "--db", store_name(db), "-o", str(tmp_path / "no" / "dir.html")]) == 1


def test_python_dash_m(study, tmp_path):
    db, _ = study
    cmd = [sys.executable, "-m", "tunefarm.cli", "best", "--db", store_name(db), "--format", "json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=repo_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert {r["workload_key"] for r in json.loads(proc.stdout)} == {"wk-dense", "wk-relu", "wk-evil"}
    out = tmp_path / "m.html"
    proc = subprocess.run([sys.executable, "-m", "tunefarm.cli", "report", "--db", store_name(db), "-o", str(out)],
                          capture_output=True, text=True, cwd=REPO, env=repo_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert os.path.getsize(out) > 10_000


def test_best_escapes_terminal_sequences_in_names(db, capsys):
    evil = "mm\x1b[2J\x1b]0;owned\x07\x1b[31m\u202e"
    db.commit_workload("wk-esc", evil, "{}", 1e6)
    db.commit_records([make_record("wk-esc", 0)])
    for fmt in ("table", "csv", "json"):
        assert main(["best", "--db", store_name(db), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out, fmt  # JSON escapes them as \u001b, \u0007
        assert fmt == "json" or "\u202e" not in out, fmt
    assert main(["best", "--db", store_name(db)]) == 0
    assert "mm\\x1b[2J\\x1b]0;owned\\x07" in capsys.readouterr().out


def test_import_and_export_commands(real_study, tmp_path, capsys):
    db, _ = real_study
    assert main(["export", "--db", store_name(db), "-o", str(tmp_path / "e.jsonl")]) == 0
    assert "80 records" in capsys.readouterr().out
    fresh = tmp_path / "fresh.sqlite"
    assert main(["import", str(tmp_path / "e.jsonl"), "--db", str(fresh)]) == 0
    assert "80 new records" in capsys.readouterr().out
    assert main(["import", str(tmp_path / "e.jsonl"), "--db", str(fresh)]) == 0
    assert "0 new records" in capsys.readouterr().out
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    rec = json.loads(lines[-1])
    rec["program_hash"] = "42"
    (tmp_path / "bad.jsonl").write_text("\n".join(lines[:-1] + [json.dumps(rec)]) + "\n")
    assert main(["import", str(tmp_path / "bad.jsonl"), "--db", str(fresh)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tunefarm import: error: {tmp_path / 'bad.jsonl'}:{len(lines)}: program_hash '42'")
    assert err.count("\n") == 1
    assert main(["import", str(tmp_path / "missing.jsonl"), "--db", str(fresh)]) == 1
    assert "does not exist" in capsys.readouterr().err
