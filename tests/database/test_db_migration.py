"""Schema migrations: a file written by schema version 1 opens, upgrades in place and keeps its data."""
from __future__ import annotations

import json
import sqlite3

import pytest

from dbtest_helpers import TARGET_A, make_record
from tunefarm.database import SCHEMA_VERSION, Database, DatabaseError, JobNotRunningError, SchemaVersionError
from tunefarm.database.schema import MIGRATIONS

# Frozen copy of what tunefarm schema version 1 wrote; kept literal on purpose so that editing a
# published migration (instead of appending a new one) breaks this test.
V1_DDL = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE workloads (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
    "ir_json TEXT NOT NULL, flop REAL, created_us INTEGER NOT NULL)",
    "CREATE INDEX workloads_name ON workloads(name)",
    "CREATE TABLE targets (id INTEGER PRIMARY KEY, target TEXT NOT NULL UNIQUE)",
    "CREATE TABLE jobs (id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
    "config_json TEXT NOT NULL, started_us INTEGER NOT NULL, finished_us INTEGER, status TEXT NOT NULL)",
    "CREATE TABLE records (id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, "
    "workload_id INTEGER NOT NULL REFERENCES workloads(id), target_id INTEGER NOT NULL REFERENCES targets(id), "
    "job_id INTEGER REFERENCES jobs(id), trial INTEGER NOT NULL, trace_json TEXT NOT NULL, status TEXT NOT NULL, "
    "run_secs_json TEXT NOT NULL, median_secs REAL, mean_secs REAL, min_secs REAL, build_secs REAL NOT NULL, "
    "error TEXT, host TEXT NOT NULL, created_us INTEGER NOT NULL)",
    "CREATE INDEX records_best ON records(workload_id, target_id, median_secs) WHERE status = 'ok'",
    "INSERT INTO meta VALUES ('schema_version', '1')",
]


def _normalize(sql: str) -> str:
    return " ".join(sql.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split())


def write_v1_file(path) -> None:
    conn = sqlite3.connect(path)
    for stmt in V1_DDL:
        conn.execute(stmt)
    t0 = 1_700_000_000_000_000  # created_us
    conn.execute("INSERT INTO workloads VALUES (1, 'wk-old', 'old_dense', '{\"op\":\"dense\"}', 2e6, ?)", (t0,))
    conn.execute("INSERT INTO targets VALUES (1, ?)", (TARGET_A,))
    conn.execute("INSERT INTO jobs VALUES (1, 'job-uid-1', 'old-job', '{}', ?, ?, 'finished')", (t0, t0 + 10**8))
    rows = [("uid-1", 0, '[["A",[],[],[]]]', "ok", "[0.002,0.001,0.003]", 0.002, 0.002, 0.001, None),
            ("uid-2", 1, '[["B",[],[],[]]]', "ok", "[0.0005]", 0.0005, 0.0005, 0.0005, None),
            ("uid-3", 2, '[["C",[],[],[]]]', "build_error", "[]", None, None, None, "boom")]
    conn.executemany(
        "INSERT INTO records (uid, workload_id, target_id, job_id, trial, trace_json, status, run_secs_json, "
        "median_secs, mean_secs, min_secs, build_secs, error, host, created_us) "
        "VALUES (?, 1, 1, 1, ?, ?, ?, ?, ?, ?, ?, 0.1, ?, 'h', ?)",
        [(*r, t0 + 10**6 * (i + 1)) for i, r in enumerate(rows)])
    conn.commit()
    conn.close()


def test_first_migration_is_frozen():
    v1 = [s for s in V1_DDL if not s.startswith("INSERT")]
    assert [_normalize(s) for s in MIGRATIONS[0].statements] == [_normalize(s) for s in v1]
    assert [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


def test_v1_file_is_migrated_and_keeps_its_records(tmp_path):
    path = tmp_path / "old.sqlite"
    write_v1_file(path)
    db = Database(path)
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert {"program_hash", "batch_id"} <= {r[1] for r in raw.execute("PRAGMA table_info(records)")}
    assert "records_hash" in {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    df = db.records()
    assert df["trial"].tolist() == [0, 1, 2]
    assert df["program_hash"].isna().all()
    assert df["median_us"].tolist()[:2] == pytest.approx([2000.0, 500.0])
    best = db.best("old_dense")
    assert best.trial == 1 and best.trace_json == [["B", [], [], []]] and best.job_id == 1
    # the upgraded file is a normal current file: new records, hashes and batches work
    db.commit_records([make_record("wk-old", 7, job=1, secs=1e-4)])
    assert db.best("wk-old").trial == 7
    assert db.measured_hashes("wk-old", TARGET_A) == {make_record("wk-old", 7).program_hash}
    assert json.loads(db.jobs()["config_json"][0]) == {}
    db.close()
    assert Database(path).count_records() == 4  # reopening does not migrate again


def test_v1_file_gains_liveness_counts_and_claims(tmp_path):
    """Migration 3: the old jobs have no driver recorded (a 'running' one long ago reads stale), the record
    counts the budget uses start from the stored records, and claims work on the old workload."""
    path = tmp_path / "old.sqlite"
    write_v1_file(path)
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO jobs VALUES (2, 'job-uid-2', 'killed-long-ago', '{}', 1700000000000000, NULL, "
                "'running')")
    raw.commit()
    db = Database(path)
    assert db.jobs().set_index("name")["status"].to_dict() == {"old-job": "finished", "killed-long-ago": "stale"}
    assert db.records()["job_status"].tolist() == ["finished"] * 3
    assert db.budget_used("wk-old", TARGET_A) == 3
    job = db.start_job("new")
    assert db.claim(job, "wk-old", TARGET_A, ["a", "b"], budget=4) == ["a"]
    assert db.budget_used("wk-old", TARGET_A) == 4
    with pytest.raises(JobNotRunningError, match="'finished', not running"):
        db.claim(1, "wk-old", TARGET_A, ["c"])


def test_partial_migration_rolls_back(tmp_path, monkeypatch):
    from tunefarm.database import schema

    path = tmp_path / "old.sqlite"
    write_v1_file(path)
    broken = schema.Migration(2, "broken", MIGRATIONS[1].statements + ("CREATE TABLE records (x)",))
    monkeypatch.setattr(schema, "MIGRATIONS", (MIGRATIONS[0], broken))
    monkeypatch.setattr(schema, "CURRENT_VERSION", 2)
    with pytest.raises(DatabaseError):
        Database(path)
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"
    assert "program_hash" not in {r[1] for r in raw.execute("PRAGMA table_info(records)")}


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite"
    Database(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    raw.commit()
    raw.close()
    with pytest.raises(SchemaVersionError, match="newer"):
        Database(path)


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE customers (id INTEGER)")
    raw.commit()
    raw.close()
    with pytest.raises(SchemaVersionError, match="not a tunefarm database"):
        Database(path)
