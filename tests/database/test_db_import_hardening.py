"""An import stores nothing twice and nothing impossible:

* a program already measured on a target (in the database, or earlier in the file) is skipped and counted, as
  tuning would never measure it again: re-importing a study's own export, or its records under fresh ids,
  adds 0 records;
* a record may not join a batch stored before (a batch is stored whole, its record count must stay true);
* run times no CPU reaches (below the timer's floor, or faster than the program's FLOPs at a generous peak of
  the record's target) and run times on a ``build_error`` record are refused with one line naming the line;
* a line longer than ``MAX_LINE_BYTES`` is refused before it is read whole (bounded memory).
"""
from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from dbtest_helpers import TARGET_A, repo_env
from tunefarm.database import Database, InvalidRecordError
from tunefarm.database.import_check import TIMER_FLOOR_S, peak_flops
from tunefarm.database.jsonl import MAX_LINE_BYTES
from tunefarm.ir.serialize import loads
from tunefarm.te.flop import estimate_flop

N_RECORDS = 80  # what populate_real() commits


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, lines: list[dict]):
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def _one_line_refusal(db, path, lineno: int, *needles: str) -> str:
    before = db.count_records()
    with pytest.raises(InvalidRecordError) as err:
        db.import_(path)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{path}:{lineno}: "), msg
    for needle in needles:
        assert needle in msg, msg
    assert db.count_records() == before  # the whole file is refused: nothing of it is stored
    return msg


def test_reimporting_a_studys_own_export_adds_nothing(real_study, tmp_path):
    db, _ = real_study
    db.export(tmp_path / "e.jsonl")
    new = db.import_(tmp_path / "e.jsonl")
    assert new["records"] == 0 and new["skipped"] == N_RECORDS and db.count_records() == N_RECORDS


def test_stored_programs_under_fresh_record_ids_are_skipped(real_study, tmp_path):
    """The drill's file: many records (fresh ids, no batch) of programs the database already holds."""
    db, _ = real_study
    lines = _study_lines(db, tmp_path)
    head = [d for d in lines if d["type"] != "record"]
    records = [d for d in lines if d["type"] == "record"]
    copies = []
    for k in range(25):
        for d in records:
            copies.append({**d, "uid": uuid.uuid4().hex, "batch": None, "job": None, "trial": k})
    new = db.import_(_write(tmp_path / "copies.jsonl", head + copies))
    assert new["records"] == 0 and new["skipped"] == len(copies) == 25 * N_RECORDS
    assert db.count_records() == N_RECORDS
    # into an empty database: each program once per target, the first record of it in the file
    fresh = Database(tmp_path / "fresh.sqlite")
    new = fresh.import_(tmp_path / "copies.jsonl")
    assert new["records"] == N_RECORDS and new["skipped"] == 24 * N_RECORDS
    df = fresh.records()
    assert len(df) == N_RECORDS == len(df.drop_duplicates(["workload", "target", "program_hash"]))
    assert set(df.trial) == {0}


def _study_lines(db, tmp_path):
    db.export(tmp_path / "e.jsonl")
    return _lines(tmp_path / "e.jsonl")


def _first(lines, **match) -> int:
    return next(i for i, d in enumerate(lines) if all(d.get(k) == v for k, v in match.items()))


def test_a_record_joining_a_stored_batch_is_refused(real_study, tmp_path):
    db, _ = real_study
    lines = _study_lines(db, tmp_path)
    i = _first(lines, type="record", target=TARGET_A)
    other_target = "llvm -mcpu=generic -num-cores=1"  # a program not yet measured there: a new record
    joining = {**lines[i], "uid": uuid.uuid4().hex, "target": other_target}
    path = _write(tmp_path / "join.jsonl", lines[:i] + [joining])
    _one_line_refusal(db, path, i + 1, "joins batch", lines[i]["batch"])
    # the same record in no batch, or in a batch of its own defined in the file, is new and stored
    alone = _write(tmp_path / "alone.jsonl", lines[:i] + [{**joining, "batch": None}])
    assert db.import_(alone)["records"] == 1
    own = {"type": "batch", "uid": uuid.uuid4().hex, "job": None, "n_records": 1, "created_us": 1}
    in_own = {**joining, "uid": uuid.uuid4().hex, "target": "llvm -mcpu=generic -num-cores=2", "batch": own["uid"]}
    assert db.import_(_write(tmp_path / "own.jsonl", lines[:i] + [own, in_own]))["records"] == 1


def _ok_record(lines):
    i = next(i for i, d in enumerate(lines) if d["type"] == "record" and d["status"] == "ok")
    w = next(d for d in lines if d["type"] == "workload" and d["key"] == lines[i]["workload"])
    return i, estimate_flop(loads(w["ir_json"]))


@pytest.mark.parametrize("case, needle", [("drill", "run time 1e-09 s"), ("timer floor", "below what can be timed"),
                                          ("over the peak", "GFLOP/s")])
def test_run_times_no_cpu_reaches_are_refused(tmp_path, case, needle):
    from dbtest_helpers import populate_real

    src = Database(tmp_path / "src.sqlite")
    populate_real(src)
    lines = _study_lines(src, tmp_path)
    i, flop = _ok_record(lines)
    fastest = flop / peak_flops(lines[i]["target"])  # the least time the target's generous peak allows
    secs = {"drill": 1e-9, "timer floor": TIMER_FLOOR_S / 2, "over the peak": fastest / 1.5}[case]
    assert case != "over the peak" or secs > TIMER_FLOOR_S  # refused by the FLOP rate, not the floor
    lines[i]["run_secs"] = [secs, secs * 1.1]
    fresh = Database(tmp_path / "fresh.sqlite")
    _one_line_refusal(fresh, _write(tmp_path / "fake.jsonl", lines), i + 1, needle)
    # the same record at a time the target can reach is stored
    lines[i]["run_secs"] = [max(fastest, TIMER_FLOOR_S) * 1.5]
    assert fresh.import_(_write(tmp_path / "real.jsonl", lines))["records"] == N_RECORDS


def test_run_times_on_a_build_error_record_are_refused(real_study, tmp_path):
    db, _ = real_study
    lines = _study_lines(db, tmp_path)
    i = _first(lines, type="record", status="build_error")
    lines[i]["run_secs"] = [1e-3]
    fresh = Database(tmp_path / "fresh.sqlite")
    _one_line_refusal(fresh, _write(tmp_path / "b.jsonl", lines), i + 1, "build_error", "run times")


def test_a_line_over_the_limit_is_refused_unread(real_study, tmp_path):
    db, _ = real_study
    lines = _study_lines(db, tmp_path)
    path = tmp_path / "long.jsonl"
    with open(path, "w") as f:
        f.write(json.dumps(lines[0]) + "\n")
        f.write('{"type": "workload", "name": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n')
    _one_line_refusal(Database(tmp_path / "fresh.sqlite"), path, 2, "longer than", "MiB")


def test_refusing_a_long_line_takes_bounded_memory(real_study, tmp_path):
    """A 64 MiB line: the importing process grows by far less than the line (it read at most the limit)."""
    db, _ = real_study
    header = json.dumps(_study_lines(db, tmp_path)[0])
    path = tmp_path / "huge.jsonl"
    with open(path, "w") as f:
        f.write(header + "\n" + '{"type": "record", "trace": "' + "y" * (64 << 20) + '"}\n')
    code = (
        "import resource, sys\n"
        "from tunefarm.database import Database, InvalidRecordError\n"
        "db = Database(sys.argv[2])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    db.import_(sys.argv[1])\n"
        "except InvalidRecordError as e:\n"
        "    print(str(e).splitlines()[0])\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "m.sqlite")], capture_output=True,
                         text=True, env=repo_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    refusal, grew = out.stdout.strip().splitlines()
    assert "longer than" in refusal
    assert int(grew) < 3 * MAX_LINE_BYTES < (64 << 20)


def test_the_import_command_refuses_each_drill_file_with_one_line(real_study, tmp_path, capsys):
    """``tunefarm import`` on the drill's files: its own export adds 0 records; a fake latency, a record joining a
    stored batch and an oversize line are each one line on stderr, status 1, and the study is unchanged."""
    from dbtest_helpers import store_name
    from tunefarm.cli import main

    db, _ = real_study
    lines = _study_lines(db, tmp_path)
    assert main(["import", str(tmp_path / "e.jsonl"), "--db", store_name(db)]) == 0
    assert "0 new records; 80 records skipped" in capsys.readouterr().out
    i = _first(lines, type="record", status="ok")
    fake = [*lines[:i], {**lines[i], "run_secs": [1e-9]}]
    joining = [*lines[:i], {**lines[i], "uid": uuid.uuid4().hex, "target": "llvm -mcpu=generic -num-cores=1"}]
    files = {"fake.jsonl": (_write(tmp_path / "fake.jsonl", fake), "run time 1e-09 s"),
             "join.jsonl": (_write(tmp_path / "join.jsonl", joining), "joins batch")}
    with open(tmp_path / "long.jsonl", "w") as f:
        f.write(json.dumps(lines[0]) + "\n" + '{"type": "record", "trace": "' + "z" * (MAX_LINE_BYTES + 1) + '"}\n')
    files["long.jsonl"] = (tmp_path / "long.jsonl", "longer than")
    for name, (path, needle) in files.items():
        assert main(["import", str(path), "--db", store_name(db)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"tunefarm import: error: {path}:") and err.count("\n") == 1, err
        assert needle in err and "Traceback" not in err, err
        assert db.count_records() == N_RECORDS
