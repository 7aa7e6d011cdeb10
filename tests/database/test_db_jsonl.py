"""JSON-lines export/import: round trip into a fresh file, idempotence, merging, validation."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from dbtest_helpers import TARGET_A, make_record, populate
from tunefarm.database import Database, InvalidRecordError, InvalidTraceError


def _frames(db: Database):
    return db.records(), db.workloads(), db.jobs()


def test_round_trip_into_a_fresh_file_gives_equal_frames(study, tmp_path):
    db, _ = study
    counts = db.export(tmp_path / "study.jsonl")
    assert counts["records"] == 410 and counts["workloads"] == 3 and counts["jobs"] == 2
    fresh = Database(tmp_path / "fresh.sqlite")
    new = fresh.import_(tmp_path / "study.jsonl")
    assert new == counts
    for a, b in zip(_frames(db), _frames(fresh)):
        pd.testing.assert_frame_equal(a, b)
    for target in fresh.targets("wk-relu"):
        assert [r.record_id for r in fresh.top_k("wk-relu", 5, target=target)] == \
               [r.record_id for r in db.top_k("wk-relu", 5, target=target)]
    assert fresh.best("wk-dense").trace_json == db.best("wk-dense").trace_json


def test_import_twice_adds_nothing(study, tmp_path):
    db, _ = study
    db.export(tmp_path / "e.jsonl")
    fresh = Database(tmp_path / "fresh.sqlite")
    fresh.import_(tmp_path / "e.jsonl")
    again = fresh.import_(tmp_path / "e.jsonl")
    assert again == {"workloads": 0, "jobs": 0, "batches": 0, "records": 0}
    assert fresh.count_records() == 410 and len(fresh.jobs()) == 2 and len(fresh.workloads()) == 3
    # importing into the source itself is also a no-op
    assert db.import_(tmp_path / "e.jsonl")["records"] == 0 and db.count_records() == 410


def test_import_merges_with_local_results(study, tmp_path):
    db, info = study
    db.export(tmp_path / "e.jsonl")
    other = Database(tmp_path / "other.sqlite")
    # the same task, also measured on this machine
    other.commit_workload("wk-dense", "dense_128x128x128", '{"op":"dense"}', 2 * 128 ** 3)
    other.commit_records([make_record("wk-dense", i, secs=1e-6) for i in range(5)])  # faster than anything imported
    other.import_(tmp_path / "e.jsonl")
    assert other.count_records() == 415
    assert other.count_records("wk-dense") == 205
    assert other.best("wk-dense").median_secs == pytest.approx(1.02e-6)
    # a job that finished on the other machine after an earlier export is updated, not duplicated
    job2 = info["jobs"][1]
    db.finish_job(job2, "cancelled")
    db.export(tmp_path / "e2.jsonl")
    assert other.import_(tmp_path / "e2.jsonl")["jobs"] == 0
    assert other.jobs().set_index("name").loc["tune-relu-B", "status"] == "cancelled"


def test_bad_lines_are_rejected_atomically(study, tmp_path):
    db, _ = study
    db.export(tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["trace"] = [["Split", "not-a-list", [], []]]
    (tmp_path / "bad.jsonl").write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    fresh = Database(tmp_path / "fresh.sqlite")
    with pytest.raises(InvalidTraceError, match=f"bad.jsonl:{len(lines)}"):
        fresh.import_(tmp_path / "bad.jsonl")
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


def test_export_of_an_empty_database(tmp_path):
    db = Database(tmp_path / "empty.sqlite")
    assert db.export(tmp_path / "e.jsonl") == {"workloads": 0, "jobs": 0, "batches": 0, "records": 0}
    fresh = Database(tmp_path / "fresh.sqlite")
    assert fresh.import_(tmp_path / "e.jsonl")["records"] == 0


def test_round_trip_of_a_second_study(tmp_path):
    a = Database(tmp_path / "a.sqlite")
    populate(a, seed=7)
    a.export(tmp_path / "a.jsonl")
    b = Database(tmp_path / "b.sqlite")
    b.import_(tmp_path / "a.jsonl")
    pd.testing.assert_frame_equal(a.records(target=TARGET_A), b.records(target=TARGET_A))
