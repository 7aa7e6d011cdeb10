"""JSON-lines export/import: round trip into a fresh file, idempotence, merging, validation."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from dbtest_helpers import TARGET_A, populate_real, real_programs
from tunefarm.database import Database, InvalidRecordError, InvalidTraceError, Record
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.ir.serialize import dumps

N_RECORDS = 80  # what populate_real() commits


def _frames(db: Database):
    return db.records(), db.workloads(), db.jobs()


def test_round_trip_into_a_fresh_file_gives_equal_frames(real_study, tmp_path):
    db, info = real_study
    counts = db.export(tmp_path / "study.jsonl")
    assert counts["records"] == N_RECORDS and counts["workloads"] == 2 and counts["jobs"] == 2
    fresh = Database(tmp_path / "fresh.sqlite")
    new = fresh.import_(tmp_path / "study.jsonl")
    assert new == {**counts, "skipped": 0}
    for a, b in zip(_frames(db), _frames(fresh)):
        pd.testing.assert_frame_equal(a, b)
    key = info["workloads"]["matmul-16"]
    for target in fresh.targets(key):
        assert [r.record_id for r in fresh.top_k(key, 5, target=target)] == \
               [r.record_id for r in db.top_k(key, 5, target=target)]
    relu = info["workloads"]["relu-32"]
    assert fresh.best(relu).trace_json == db.best(relu).trace_json


def test_import_twice_adds_nothing(real_study, tmp_path):
    db, _ = real_study
    db.export(tmp_path / "e.jsonl")
    fresh = Database(tmp_path / "fresh.sqlite")
    fresh.import_(tmp_path / "e.jsonl")
    again = fresh.import_(tmp_path / "e.jsonl")
    assert again == {"workloads": 0, "jobs": 0, "batches": 0, "records": 0, "skipped": N_RECORDS}
    assert fresh.count_records() == N_RECORDS and len(fresh.jobs()) == 2 and len(fresh.workloads()) == 2
    # importing into the source itself is also a no-op
    assert db.import_(tmp_path / "e.jsonl")["records"] == 0 and db.count_records() == N_RECORDS


def test_import_merges_with_local_results(real_study, tmp_path):
    db, info = real_study
    key = info["workloads"]["matmul-16"]
    db.export(tmp_path / "e.jsonl")
    other = Database(tmp_path / "other.sqlite")
    # the same task, also measured on this machine: faster than anything imported
    func, programs = real_programs("matmul-16")
    other.commit_workload(key, "matmul_16", dumps(func), 1e5)
    ok = MeasureResult(MeasureStatus.OK, [1.02e-7, 1e-7, 1.05e-7], 0.01, None, "here")
    other.commit_records([Record(key, t, h, TARGET_A, ok, None, i) for i, (t, h) in enumerate(programs[:5])])
    new = other.import_(tmp_path / "e.jsonl")
    # the five programs measured here on TARGET_A are not stored again (the rule of tuning)
    assert new["skipped"] == 5 and new["records"] == N_RECORDS - 5
    assert other.count_records() == N_RECORDS
    assert other.count_records(key) == 40
    assert other.best(key, target=TARGET_A).median_secs == pytest.approx(1.02e-7)
    # a job that finished on the other machine after an earlier export is updated, not duplicated
    job2 = info["jobs"][1]
    db.finish_job(job2, "cancelled")
    db.export(tmp_path / "e2.jsonl")
    assert other.import_(tmp_path / "e2.jsonl")["jobs"] == 0
    assert other.jobs().set_index("name").loc["tune-relu-B", "status"] == "cancelled"


def _with_last_record(tmp_path, lines: list[str], name: str, change) -> str:
    last = json.loads(lines[-1])
    change(last)
    (tmp_path / name).write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    return str(tmp_path / name)


def test_bad_lines_are_rejected_atomically(real_study, tmp_path):
    db, _ = real_study
    db.export(tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    bad = _with_last_record(tmp_path, lines, "bad.jsonl", lambda r: r.update(trace=[["Split", "not-a-list", [], []]]))
    fresh = Database(tmp_path / "fresh.sqlite")
    with pytest.raises(InvalidTraceError, match=f"bad.jsonl:{len(lines)}"):
        fresh.import_(bad)
    assert fresh.count_records() == 0 and len(fresh.workloads()) == 0  # nothing half-imported

    (tmp_path / "dangling.jsonl").write_text(lines[0] + "\n" + lines[-1] + "\n")
    with pytest.raises(InvalidRecordError, match="unknown workload"):
        fresh.import_(tmp_path / "dangling.jsonl")
    (tmp_path / "notours.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(InvalidRecordError, match="not a tunefarm export"):
        fresh.import_(tmp_path / "notours.jsonl")
    (tmp_path / "garbage.jsonl").write_text(lines[0] + "\n{not json\n")
    with pytest.raises(InvalidRecordError, match="garbage.jsonl:2"):
        fresh.import_(tmp_path / "garbage.jsonl")


def _assert_refused(db: Database, path: str, error, pattern: str) -> None:
    before = db.records()
    with pytest.raises(error, match=pattern) as info:
        db.import_(path)
    assert "\n" not in str(info.value)  # one line
    pd.testing.assert_frame_equal(db.records(), before)


def test_records_that_are_not_their_programs_are_refused(real_study, tmp_path):
    """What the hardening drill imported: an unknown instruction kind, a hash the trace does not produce,
    a trace that does not replay, an ok record without a real time. Each is refused; nothing changes."""
    db, info = real_study
    db.export(tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    target = Database(tmp_path / "target.sqlite")
    populate_real(target, seed=3)  # the same workloads and programs, measured separately (other uids)

    def unknown_kind(r):
        insts = r["trace"]["insts"] if isinstance(r["trace"], dict) else r["trace"]
        insts.append(["MakeItFast", [], [], []])

    _assert_refused(target, _with_last_record(tmp_path, lines, "kind.jsonl", unknown_kind), InvalidTraceError,
                    "unknown instruction kind 'MakeItFast'")
    _assert_refused(target, _with_last_record(tmp_path, lines, "hash.jsonl", lambda r: r.update(program_hash="1234")),
                    InvalidRecordError, "program_hash '1234' does not match")
    _assert_refused(target, _with_last_record(tmp_path, lines, "replay.jsonl", lambda r: r.update(
        trace=[["GetBlock", [], ["no_such_block", "main"], ["b0"]]])), InvalidTraceError, "does not replay")
    _assert_refused(target, _with_last_record(tmp_path, lines, "zero.jsonl", lambda r: r.update(
        status="ok", run_secs=[0.0], error=None)), InvalidRecordError, "positive run times")
    first_workload = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "workload")
    w = json.loads(lines[first_workload])
    w["key"] = "0" * 64
    (tmp_path / "key.jsonl").write_text("\n".join(lines[:first_workload] + [json.dumps(w)]) + "\n")
    _assert_refused(target, str(tmp_path / "key.jsonl"), InvalidRecordError, "workload key is")
    # a record without a hash gets the hash of its program
    no_hash = _with_last_record(tmp_path, lines, "nohash.jsonl", lambda r: r.update(program_hash=None))
    fresh = Database(tmp_path / "fresh.sqlite")
    fresh.import_(no_hash)
    df = fresh.records()
    last = json.loads(lines[-1])
    assert df.set_index("record_id").loc[df.record_id.max(), "program_hash"] == last["program_hash"]


def test_binary_and_deeply_nested_files_are_one_line_errors(real_study, tmp_path):
    db, _ = real_study
    (tmp_path / "binary.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe" * 50)
    _assert_refused(db, str(tmp_path / "binary.jsonl"), InvalidRecordError, "binary.jsonl:1: not UTF-8")
    header = json.dumps({"type": "tunefarm-db-export", "version": 1})
    (tmp_path / "deep.jsonl").write_text(header + "\n" + "[" * 200000 + "]" * 200000 + "\n")
    _assert_refused(db, str(tmp_path / "deep.jsonl"), InvalidRecordError, "deep.jsonl:2: .*nested too deeply")


def test_export_of_an_empty_database(tmp_path):
    db = Database(tmp_path / "empty.sqlite")
    assert db.export(tmp_path / "e.jsonl") == {"workloads": 0, "jobs": 0, "batches": 0, "records": 0}
    fresh = Database(tmp_path / "fresh.sqlite")
    assert fresh.import_(tmp_path / "e.jsonl")["records"] == 0


def test_round_trip_of_a_second_study(tmp_path):
    a = Database(tmp_path / "a.sqlite")
    populate_real(a, seed=7)
    a.export(tmp_path / "a.jsonl")
    b = Database(tmp_path / "b.sqlite")
    b.import_(tmp_path / "a.jsonl")
    pd.testing.assert_frame_equal(a.records(target=TARGET_A), b.records(target=TARGET_A))
