"""Every SQL statement the dashboard runs, in one place, over a study's DB-API connection.

The statements are portable SQL (no SQLite pragmas, no JSON functions, no ``rowid``): plain ``SELECT``s over the
tables of ``tunefarm/database/schema.py``, with ``?`` placeholders, all run through ``StudyQueries._rows``, so
another store with the same schema is a new ``open_*`` and a placeholder rewrite in one method, not a new
module. Incremental reads key on the tables' integer ids: records, workloads and targets are
only ever appended, so "rows with an id above the last one seen" is every row that is new since then. New
records are folded in as aggregates computed by the database (``GROUP BY`` and window functions over the id
range), so neither the first view of a big study nor a refresh builds a Python object per record. Jobs are
few and their rows change (status, heartbeat), so they are read whole.

Nothing here writes: the connection is opened read-only (``mode=ro``), and a ``SELECT`` is all it is given.

Moving to a server store (PostgreSQL): a connection from the store, ``?`` rewritten to ``%s`` in ``_rows``
(and ``%`` to ``%%``); the SQL stands as written (``substr``, integer ``/``, window functions and ``%`` are
common to both). One thing differs: SQLite has one writer, so once ``max(id)`` is visible every smaller id is
committed; with concurrent transactions drawing ids from a sequence, a smaller id can commit later, so there a
refresh must re-read its last range (or stop below the ids still in flight).
"""
from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Sequence
from typing import Any

from tunefarm.database import liveness
from tunefarm.database.connection import open_connection

BUSY_TIMEOUT_S = 30.0
# ids mixed before sampling: ids of interleaved tasks fall in arithmetic progressions that a plain modulo
# would sample unevenly (every 4th id is one task's); the product stays below 2**63 for ids below 3 * 10**9
_MIX_MUL, _MIX_MOD = 2654435761, 1000003
_MIX_SQL = f"(id * {_MIX_MUL}) % {_MIX_MOD}"


def mixed_id(record_id: int) -> int:
    """What ``sample_ids`` tests the stride against, computed in Python."""
    return record_id * _MIX_MUL % _MIX_MOD


class StudyQueries:
    """The dashboard's read-only queries over one open connection (used by one thread at a time)."""

    def __init__(self, conn: Any):
        self.conn = conn
        self._confirmed: tuple[str, ...] | None = None

    @classmethod
    def open_sqlite(cls, path: str) -> "StudyQueries":
        """A read-only connection to an SQLite study (refuses a missing or non-tunefarm file)."""
        return cls(open_connection(path, create=False, timeout=BUSY_TIMEOUT_S, readonly=True))

    @classmethod
    def open_sqlite_again(cls, path: str) -> "StudyQueries":
        """One more read-only connection to a study this process already opened with ``open_sqlite``.

        Straight through SQLite, with no Python ``open()`` of the file: closing any descriptor of a file drops
        every POSIX lock the process holds on it, the first connection's included, and a writer that then
        closes last would checkpoint and delete the WAL under it (the first connection reads stale pages)."""
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        return cls(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None))

    def close(self) -> None:
        self.conn.close()

    def _rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """Every statement runs here: the one place a driver with another parameter style adapts them."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql, tuple(params))
            return cur.fetchall()
        finally:
            cur.close()

    def max_record_id(self) -> int:
        """The newest record's id (0 for an empty study)."""
        return self._rows("SELECT max(id) FROM records")[0][0] or 0

    # -- aggregates of the records with lo < id <= hi: what a refresh folds in -----------------------------
    def tallies(self, lo: int, hi: int) -> list[tuple]:
        """``(job_id, workload_id, target_id, status, count, min median_secs, max created_us)`` per group."""
        return self._rows("SELECT job_id, workload_id, target_id, status, count(*), min(median_secs), "
                          "max(created_us) FROM records WHERE id > ? AND id <= ? "
                          "GROUP BY job_id, workload_id, target_id, status", (lo, hi))

    def errors(self, lo: int, hi: int, chars: int) -> list[tuple]:
        """``(job_id, workload_id, target_id, status, error head, count)`` of failed records, by error text."""
        return self._rows(f"SELECT job_id, workload_id, target_id, status, substr(error, 1, {int(chars)}) AS e, "
                          "count(*) FROM records WHERE id > ? AND id <= ? AND status <> 'ok' "
                          "GROUP BY job_id, workload_id, target_id, status, e", (lo, hi))

    def host_statuses(self, lo: int, hi: int) -> list[tuple]:
        """``(host, status, count)``."""
        return self._rows("SELECT host, status, count(*) FROM records WHERE id > ? AND id <= ? "
                          "GROUP BY host, status", (lo, hi))

    def bins(self, lo: int, hi: int, bin_us: int) -> list[tuple]:
        """``(job_id, created_us // bin_us, count)``: throughput bins."""
        return self._rows(f"SELECT job_id, created_us / {int(bin_us)} AS b, count(*) FROM records "
                          "WHERE id > ? AND id <= ? GROUP BY job_id, b", (lo, hi))

    def improvements(self, lo: int, hi: int) -> list[tuple]:
        """``(workload_id, target_id, n, created_us, median_secs)`` of the ok records that beat every earlier
        one of their task within the range; ``n`` counts the task's records of the range up to it."""
        return self._rows(
            "SELECT workload_id, target_id, n, created_us, median_secs FROM (SELECT workload_id, target_id, "
            "created_us, median_secs, status, ROW_NUMBER() OVER w AS n, "
            "MIN(CASE WHEN status = 'ok' THEN median_secs END) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING "
            "AND 1 PRECEDING) AS prev FROM records WHERE id > ? AND id <= ? "
            "WINDOW w AS (PARTITION BY workload_id, target_id ORDER BY id)) t "
            "WHERE status = 'ok' AND median_secs IS NOT NULL AND (prev IS NULL OR median_secs < prev) "
            "ORDER BY workload_id, target_id, n", (lo, hi))

    def sample_ids(self, lo: int, hi: int, stride: int) -> list[tuple]:
        """``(workload_id, target_id, id)`` of ok records whose mixed id is a multiple of ``stride``
        (``mixed_id``: the same test in Python keeps a sample consistent when its stride doubles)."""
        return self._rows(f"SELECT workload_id, target_id, id FROM records WHERE id > ? AND id <= ? "
                          f"AND status = 'ok' AND median_secs IS NOT NULL AND {_MIX_SQL} % ? = 0 ORDER BY id",
                          (lo, hi, stride))

    def host_medians(self) -> list[tuple]:
        """``(host, median build_secs, median run median_secs of ok records)`` over the whole study (the
        lower median: a value that was measured)."""
        def median_of(column: str, where: str) -> dict:
            rows = self._rows(
                f"SELECT host, v FROM (SELECT host, {column} AS v, ROW_NUMBER() OVER (PARTITION BY host ORDER BY "
                f"{column}) AS r, COUNT(*) OVER (PARTITION BY host) AS c FROM records WHERE {where}) t "
                "WHERE r = (c + 1) / 2")
            return dict(rows)
        build = median_of("build_secs", "build_secs IS NOT NULL")
        run = median_of("median_secs", "status = 'ok' AND median_secs IS NOT NULL")
        return [(h, build.get(h), run.get(h)) for h in sorted(set(build) | set(run))]

    def workloads_after(self, after_id: int) -> list[tuple]:
        """``(id, key, name, flop)`` of workloads newer than ``after_id``."""
        return self._rows("SELECT id, key, name, flop FROM workloads WHERE id > ? ORDER BY id", (after_id,))

    def targets_after(self, after_id: int) -> list[tuple]:
        """``(id, target)`` of targets newer than ``after_id``."""
        return self._rows("SELECT id, target FROM targets WHERE id > ? ORDER BY id", (after_id,))

    def jobs(self) -> list[tuple]:
        """``(id, name, config_json, finished_us, host, <liveness.JOB_STATE_SQL columns>)`` of every job."""
        return self._rows("SELECT j.id, j.name, j.config_json, j.finished_us, j.host, "
                          + liveness.JOB_STATE_SQL + " FROM jobs j ORDER BY j.id")

    def confirmed_columns(self) -> tuple[str, ...]:
        """Record columns named ``confirmed*`` (figures re-measured after tuning), where the schema has any."""
        if self._confirmed is None:
            cur = self.conn.cursor()
            try:
                cur.execute("SELECT * FROM records WHERE 1 = 0")
                names = [d[0] for d in cur.description]
            finally:
                cur.close()
            self._confirmed = tuple(n for n in names if n.lower().startswith("confirmed"))
        return self._confirmed

    def top_k(self, workload_id: int, target_id: int, k: int) -> list[tuple]:
        """``(id, trace_json, median_secs, job_id, host, created_us, *confirmed)`` of the ``k`` fastest ok records."""
        extra = "".join(f", {c}" for c in self.confirmed_columns())
        return self._rows(
            f"SELECT id, trace_json, median_secs, job_id, host, created_us{extra} FROM records "
            "WHERE workload_id = ? AND target_id = ? AND status = 'ok' ORDER BY median_secs, id LIMIT ?",
            (workload_id, target_id, k))

    def traces_of(self, record_ids: Sequence[int]) -> list[tuple]:
        """``(id, trace_json, median_secs)`` of the given records (primary-key lookups, in chunks)."""
        out: list[tuple] = []
        ids = list(record_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out += self._rows(f"SELECT id, trace_json, median_secs FROM records WHERE id IN "
                              f"({', '.join('?' * len(chunk))})", chunk)
        return out
