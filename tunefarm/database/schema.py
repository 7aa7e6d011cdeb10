"""Schema of the trace database, as an ordered list of migrations.

A fresh file and an old file take the same path: every migration from the file's version up to
``CURRENT_VERSION`` runs, in order, inside one write transaction (so a crash mid-migration leaves the old
version intact, and two processes opening the same new file migrate it once). The version lives in the
``meta`` table under ``schema_version``. To change the schema, append a ``Migration``; never edit a
published one (files in the wild were created by it).
"""
from __future__ import annotations

import dataclasses
import functools
import sqlite3

from tunefarm.database.errors import SchemaVersionError


@dataclasses.dataclass(frozen=True)
class Migration:
    """Statements that take the schema from ``version - 1`` to ``version``."""

    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "workloads, targets, jobs, records; best-latency index", (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE workloads (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            ir_json TEXT NOT NULL,
            flop REAL,
            created_us INTEGER NOT NULL)""",
        "CREATE INDEX workloads_name ON workloads(name)",
        "CREATE TABLE targets (id INTEGER PRIMARY KEY, target TEXT NOT NULL UNIQUE)",
        """CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            config_json TEXT NOT NULL,
            started_us INTEGER NOT NULL,
            finished_us INTEGER,
            status TEXT NOT NULL)""",
        """CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            workload_id INTEGER NOT NULL REFERENCES workloads(id),
            target_id INTEGER NOT NULL REFERENCES targets(id),
            job_id INTEGER REFERENCES jobs(id),
            trial INTEGER NOT NULL,
            trace_json TEXT NOT NULL,
            status TEXT NOT NULL,
            run_secs_json TEXT NOT NULL,
            median_secs REAL,
            mean_secs REAL,
            min_secs REAL,
            build_secs REAL NOT NULL,
            error TEXT,
            host TEXT NOT NULL,
            created_us INTEGER NOT NULL)""",
        "CREATE INDEX records_best ON records(workload_id, target_id, median_secs) WHERE status = 'ok'",
    )),
    Migration(2, "program hashes (search dedup / resume) and measured batches (crash atomicity)", (
        "ALTER TABLE records ADD COLUMN program_hash TEXT",
        """CREATE TABLE batches (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            job_id INTEGER REFERENCES jobs(id),
            n_records INTEGER NOT NULL,
            created_us INTEGER NOT NULL)""",
        "ALTER TABLE records ADD COLUMN batch_id INTEGER REFERENCES batches(id)",
        "CREATE INDEX records_hash ON records(workload_id, target_id, program_hash)",
        "CREATE INDEX records_job ON records(job_id)",
        "CREATE INDEX records_batch ON records(batch_id)",
    )),
    Migration(3, "job liveness (pid, host, heartbeat); claims of programs being measured; record counts", (
        "ALTER TABLE jobs ADD COLUMN pid INTEGER",
        "ALTER TABLE jobs ADD COLUMN host TEXT",
        "ALTER TABLE jobs ADD COLUMN pid_space TEXT",
        "ALTER TABLE jobs ADD COLUMN pid_start INTEGER",
        "ALTER TABLE jobs ADD COLUMN heartbeat_us INTEGER",
        """CREATE TABLE claims (
            workload_id INTEGER NOT NULL REFERENCES workloads(id),
            target_id INTEGER NOT NULL REFERENCES targets(id),
            program_hash TEXT NOT NULL,
            job_id INTEGER NOT NULL REFERENCES jobs(id),
            created_us INTEGER NOT NULL,
            PRIMARY KEY (workload_id, target_id, program_hash)) WITHOUT ROWID""",
        "CREATE INDEX claims_job ON claims(job_id)",
        """CREATE TABLE record_counts (
            workload_id INTEGER NOT NULL,
            target_id INTEGER NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (workload_id, target_id)) WITHOUT ROWID""",
        "INSERT INTO record_counts (workload_id, target_id, n) "
        "SELECT workload_id, target_id, count(*) FROM records GROUP BY workload_id, target_id",
        # every writer (commits, imports, older code paths) keeps the counts and retires the claims it measured
        """CREATE TRIGGER records_inserted AFTER INSERT ON records BEGIN
            INSERT INTO record_counts (workload_id, target_id, n) VALUES (NEW.workload_id, NEW.target_id, 1)
                ON CONFLICT (workload_id, target_id) DO UPDATE SET n = n + 1;
            DELETE FROM claims WHERE NEW.program_hash IS NOT NULL AND workload_id = NEW.workload_id
                AND target_id = NEW.target_id AND program_hash = NEW.program_hash;
        END""",
        """CREATE TRIGGER records_deleted AFTER DELETE ON records BEGIN
            UPDATE record_counts SET n = n - 1 WHERE workload_id = OLD.workload_id AND target_id = OLD.target_id;
        END""",
    )),
    Migration(4, "the cost model version that chose each record (0: before the model was trained)", (
        "ALTER TABLE records ADD COLUMN model_version INTEGER",
    )),
    # PostgreSQL runs a driver's step as one server function (pg_step.py; pg_schema adds it); SQLite needs none
    Migration(5, "a driver's step as one server-side call (PostgreSQL only)", ()),
    # what a live view of a big study aggregates (counts, bests, curves, per-host medians) is read from these
    # narrow indexes, in their order, instead of from the records' rows, whose traces make them wide
    Migration(6, "covering indexes for aggregates over a study's records", (
        "CREATE INDEX records_job_task ON records(job_id, workload_id, target_id, status, median_secs, created_us)",
        "CREATE INDEX records_task_order ON records(workload_id, target_id, id, status, median_secs)",
        "CREATE INDEX records_host_status ON records(host, status, median_secs)",
        "CREATE INDEX records_host_build ON records(host, build_secs)",
        "CREATE INDEX records_failed ON records(job_id, workload_id, target_id, status) WHERE status <> 'ok'",
        "CREATE INDEX records_job_time ON records(job_id, created_us)",
    )),
    Migration(7, "provenance (code generator versions per job, CPU model per record); confirmed timings", (
        "ALTER TABLE jobs ADD COLUMN tunefarm_version TEXT",
        "ALTER TABLE jobs ADD COLUMN llvmlite_version TEXT",
        "ALTER TABLE jobs ADD COLUMN llvm_version TEXT",
        "ALTER TABLE records ADD COLUMN cpu_model TEXT",
        # a record's re-timing among its workload's best on a quiet host (tuning/confirm.py): median, p10, p90
        "ALTER TABLE records ADD COLUMN confirmed_secs REAL",
        "ALTER TABLE records ADD COLUMN confirmed_p10_secs REAL",
        "ALTER TABLE records ADD COLUMN confirmed_p90_secs REAL",
        "CREATE INDEX records_trusted ON records(workload_id, target_id, (confirmed_secs IS NULL), "
        "(coalesce(confirmed_secs, median_secs))) WHERE status = 'ok'",
    )),
    # PostgreSQL draws a record's id only after its transaction holds an xid (pg_schema.py; why: the dashboard's
    # pg_queries.py); SQLite commits one writer at a time and needs nothing
    Migration(8, "record ids drawn after the writing transaction's xid (PostgreSQL only)", ()),
)

CURRENT_VERSION = MIGRATIONS[-1].version

# the columns written for each record, in the order of the value tuples built by the writers
RECORD_COLUMNS = ("uid", "workload_id", "target_id", "job_id", "batch_id", "trial", "trace_json", "program_hash",
                  "status", "run_secs_json", "median_secs", "mean_secs", "min_secs", "build_secs", "error", "host",
                  "created_us", "model_version", "cpu_model")
_RECORD_VALUES = f"({', '.join(RECORD_COLUMNS)}) VALUES ({', '.join('?' * len(RECORD_COLUMNS))})"
INSERT_RECORD = "INSERT INTO records " + _RECORD_VALUES
INSERT_RECORD_OR_IGNORE = INSERT_RECORD + " ON CONFLICT DO NOTHING"  # imports: idempotent by uid
ROWS_PER_INSERT = 100  # rows of one multi-row INSERT (19 parameters each: far below SQLite's 32766)


@functools.lru_cache(maxsize=ROWS_PER_INSERT)
def insert_records(n: int) -> str:
    """One INSERT of ``n`` records (a statement per step, not a statement per record: a server store pays a round
    trip per statement)."""
    row = f"({', '.join('?' * len(RECORD_COLUMNS))})"
    return f"INSERT INTO records ({', '.join(RECORD_COLUMNS)}) VALUES " + ", ".join([row] * n)


def read_version(conn: sqlite3.Connection) -> int:
    """Schema version of an open file: 0 for an empty file."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return 0
    if "meta" not in tables:
        raise SchemaVersionError("the file is an SQLite database but not a tunefarm database (no 'meta' table)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise SchemaVersionError("the tunefarm database has no schema_version in its 'meta' table")
    try:
        return int(row[0])
    except ValueError:
        raise SchemaVersionError(f"the tunefarm database has a bad schema_version {row[0]!r}") from None


def check_supported(version: int) -> None:
    if version > CURRENT_VERSION:
        raise SchemaVersionError(
            f"the database has schema version {version}, newer than this tunefarm supports "
            f"({CURRENT_VERSION}); upgrade tunefarm to open it")


def apply_migrations(conn: sqlite3.Connection) -> int:
    """Run the pending migrations on ``conn``; the caller holds a write transaction. Returns the old version."""
    old = read_version(conn)
    check_supported(old)
    for m in MIGRATIONS:
        if old < m.version:
            for stmt in m.statements:
                conn.execute(stmt)
    if CURRENT_VERSION > old:
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                     "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(CURRENT_VERSION),))
    return old
