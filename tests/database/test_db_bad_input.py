"""Bad input: corrupt or truncated files, malformed traces, hostile names, no code execution."""
from __future__ import annotations

import os
import re
import sqlite3

import pytest

from dbtest_helpers import EVIL_NAME, TARGET_A, make_record, raw_sql
from tunefarm.database import (CorruptDatabaseError, Database, DatabaseError, InvalidTraceError, Record,
                               validate_trace)
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tunefarm", "database")


def _filled(path, n=2000) -> None:
    db = Database(path)
    db.commit_workload("k", "w", "{}", 1.0)
    for b in range(n // 200):
        db.commit_records([make_record("k", 200 * b + i) for i in range(200)])
    db.close()  # last connection: checkpoints the WAL into the main file
    assert not os.path.exists(str(path) + "-wal") or os.path.getsize(str(path) + "-wal") == 0


def _open_and_query(path):
    db = Database(path)
    db.records()
    db.best("k")
    return db


def test_garbage_file_is_a_clear_error(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not a database at all\n" * 100)
    with pytest.raises(CorruptDatabaseError, match="not a tunefarm database"):
        Database(path)


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_file_is_a_clear_error(tmp_path, keep):
    path = tmp_path / "t.sqlite"
    _filled(path)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(int(size * keep) // 4096 * 4096 + 100)
    with pytest.raises(CorruptDatabaseError, match="truncated"):
        _open_and_query(path)


def test_truncated_header_is_a_clear_error(tmp_path):
    path = tmp_path / "t.sqlite"
    _filled(path, 200)
    with open(path, "r+b") as f:
        f.truncate(50)
    with pytest.raises(CorruptDatabaseError):
        Database(path)


def test_damaged_pages_are_a_clear_error(tmp_path):
    path = tmp_path / "d.sqlite"
    _filled(path)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # keep the header page, scribble over every other page
        f.seek(4096)
        f.write(b"\xa5" * (size - 4096))
    with pytest.raises(DatabaseError) as err:
        _open_and_query(path)
    assert not isinstance(err.value, sqlite3.Error)
    assert "d.sqlite" in str(err.value)


BAD_TRACES = [
    "not json",
    42,
    None,
    {"insts": "x"},
    {"instructions": []},
    {"insts": [], "decisions": [], "extra": 1},
    [["Split"]],
    [[1, [], [], []]],
    [["", [], [], []]],
    [["Split", "l0", [], []]],
    [["Split", [], "attrs", []]],
    [["Split", [], [], {"o": 1}]],
    [["Split", [], [float("nan")], []]],
    [["Split", [], [{1, 2}], []]],
    {"insts": [["A", [], [], []]], "decisions": [[1, 4]]},
    {"insts": [["A", [], [], []]], "decisions": [[True, 4]]},
    {"insts": [["A", [], [], []]], "decisions": [[0]]},
    {"insts": [["A", [], [], []]], "decisions": [[0, 1], [0, 2]]},
    {"insts": [["A", [], [], []]], "decisions": {"0": 1}},
    '[["Split", [], [NaN], []]]',            # text is stored as given only when it is standard JSON
    '[["Split", [], [Infinity], []]]',
    b'[["Split", [], [-Infinity], []]]',
    b"\xff\xfe[]",
    '{"insts": [["A", [], [], []]], "decisions": [[3, 1]]}',
]


@pytest.mark.parametrize("trace", BAD_TRACES, ids=range(len(BAD_TRACES)))
def test_malformed_traces_are_rejected(db, trace):
    db.commit_workload("k", "w", "{}", 1.0)
    rec = Record("k", trace, None, TARGET_A, MeasureResult(MeasureStatus.OK, [1e-3]))
    with pytest.raises(InvalidTraceError):
        db.commit_records([make_record("k", 0), rec])
    assert db.count_records() == 0


def test_wellformed_traces_are_accepted():
    for trace in ([], [["A", [], [], []]], [["A", ["b0"], {"n": 2}, ["l1"]]],
                  {"insts": [["A", [], [], []]]}, {"insts": [["A", [], [], ["v0"]]], "decisions": [[0, [4, 8]]]}):
        validate_trace(trace)


def test_trace_text_is_stored_as_given_and_reads_back_as_its_value(db):
    db.commit_workload("k", "w", "{}", 1.0)
    text = '{"insts": [["A", ["b0"], {"n": 2}, ["l1"]]], "decisions": [[0, [4, 8]]]}'
    db.commit_records([Record("k", text, "h1", TARGET_A, MeasureResult(MeasureStatus.OK, [1e-3]), trial=0),
                       Record("k", text.encode(), "h2", TARGET_A, MeasureResult(MeasureStatus.OK, [2e-3]), trial=1)])
    stored = [r.trace_json for r in db.top_k("k", 2)]
    assert stored == [{"insts": [["A", ["b0"], {"n": 2}, ["l1"]]], "decisions": [[0, [4, 8]]]}] * 2


def test_hostile_workload_name_is_stored_verbatim(db):
    db.commit_workload("k", EVIL_NAME, "{}", 1.0)
    db.commit_records([make_record("k", 0)])
    assert db.get_workload(EVIL_NAME).name == EVIL_NAME
    assert db.records(EVIL_NAME)["workload"].tolist() == [EVIL_NAME]
    assert raw_sql(db, "SELECT count(*) FROM workloads") == [(1,)]  # no table was dropped
    assert [raw_sql(db, f"SELECT count(*) FROM {t}")[0][0] for t in ("records", "jobs", "meta")] == [1, 0, 1]


def test_no_code_execution_or_formatted_sql_in_the_package():
    sources = {f: open(os.path.join(PACKAGE, f), encoding="utf-8").read()
               for f in os.listdir(PACKAGE) if f.endswith(".py")}
    assert sources
    for name, src in sources.items():
        assert not re.search(r"^\s*(import|from)\s+(pickle|marshal|shelve)\b|\beval\(|\bexec\(", src, re.M), name
        # SQL is never built from values: no f-strings or %-formatting inside execute() calls
        assert not re.search(r"\.execute(many)?\(\s*f[\"']", src), name
        assert not re.search(r"\.execute(many)?\([^)]*[\"']\s*%", src), name
