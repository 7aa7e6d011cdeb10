"""Every SQL statement the dashboard runs, in one place, over a study's DB-API connection.

The statements are portable SQL (no SQLite pragmas, no JSON functions, no ``rowid``): plain ``SELECT``s over the
tables of ``tunefarm/database/schema.py``, with ``?`` placeholders, all run through ``StudyQueries._rows``.
Incremental reads key on the tables' integer ids: records, workloads and targets are only ever appended, so
"rows with an id above the last one seen" is every row that is new since then (on SQLite; see below). New
records are folded in as aggregates computed by the database (``GROUP BY`` and window functions over the id
range), so neither the first view of a big study nor a refresh builds a Python object per record. Jobs are
few and their rows change (status, heartbeat), so they are read whole.

Nothing here writes: the connection is opened read-only (SQLite's ``mode=ro``; on PostgreSQL every
transaction is read-only, and a role granted only ``SELECT`` is enough), and a ``SELECT`` is all it is given.

A PostgreSQL study (``pg_queries.py``) runs the same SQL with ``?`` rewritten to ``%s`` in ``_rows`` (and
``%`` to ``%%``): ``substr``, integer ``/``, window functions and ``%`` are common to both. One thing differs:
SQLite has one writer, so once ``max(id)`` is visible every smaller id is committed; with transactions drawing
ids from a sequence, a smaller id can commit later. So which ids a refresh reads is a ``Span`` (ranges of ids)
that the store's kind decides (``new_span`` / ``mark_read``): here, the ids above the last one read.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from collections.abc import Sequence
from typing import Any

from tunefarm.database import liveness
from tunefarm.database.base import URL_SCHEMES
from tunefarm.database.connection import open_connection
from tunefarm.database.errors import DatabaseError

BUSY_TIMEOUT_S = 30.0
# ids mixed before sampling: ids of interleaved tasks fall in arithmetic progressions that a plain modulo
# would sample unevenly (every 4th id is one task's); the product stays below 2**63 for ids below 3 * 10**9
_MIX_MUL, _MIX_MOD = 2654435761, 1000003
_MIX_SQL = f"(id * {_MIX_MUL}) % {_MIX_MOD}"


def mixed_id(record_id: int) -> int:
    """What ``sample_ids`` tests the stride against, computed in Python."""
    return record_id * _MIX_MUL % _MIX_MOD


class Span:
    """The record ids a refresh reads: a union of ranges ``lo < id <= hi`` (SQL's ``WHERE`` and its parameters)."""

    def __init__(self, ranges: Sequence[tuple[int, int]]):
        self.ranges = [(int(lo), int(hi)) for lo, hi in ranges if hi > lo]

    def __bool__(self) -> bool:
        return bool(self.ranges)

    @property
    def sql(self) -> str:
        return "(" + " OR ".join(["(id > ? AND id <= ?)"] * len(self.ranges)) + ")"

    @property
    def params(self) -> tuple[int, ...]:
        return tuple(v for r in self.ranges for v in r)


class StudyQueries:
    """The dashboard's read-only queries over one open connection (used by one thread at a time)."""

    paramstyle = "qmark"  # the DB-API parameter style of the connection: "format" has ``?`` rewritten

    def __init__(self, conn: Any, name: str):
        self.conn = conn
        self.name = name  # how the study is named in output (never a password)
        self._confirmed: tuple[str, ...] | None = None

    @classmethod
    def open(cls, name: str) -> "StudyQueries":
        """A read-only view of the study at a path (SQLite) or a ``postgresql://`` URL."""
        if name.startswith(URL_SCHEMES):
            try:
                # psycopg is optional: only a PostgreSQL study loads it
                from tunefarm.dashboard.pg_queries import PgStudyQueries
            except ImportError as e:
                raise DatabaseError(f"a postgresql:// study needs the PostgreSQL client ({e.msg}): "
                                    'pip install "tunefarm[postgres]"') from None
            return PgStudyQueries(name)
        return cls.open_sqlite(name)

    def again(self) -> "StudyQueries":
        """A second connection to the same study (for another thread)."""
        return StudyQueries.open_sqlite_again(self.name)

    @contextlib.contextmanager
    def reading(self):
        """Around the statements of one refresh. SQLite: every id up to a visible one is committed, so each
        statement may see its own moment; nothing to hold."""
        yield

    def new_span(self, last_id: int) -> tuple[Span, int]:
        """The ids a refresh reads after having read up to ``last_id``, and the highest id it will have read."""
        hi = max(self.max_record_id(), last_id)
        return Span([(last_id, hi)]), hi

    def mark_read(self, span: Span, hi: int) -> None:
        """Called once the refresh folded ``span`` in (SQLite keeps no state beyond ``Study.last_id``)."""

    def forget(self) -> None:
        """Forget what was read (the totals start over); SQLite keeps nothing here."""

    @classmethod
    def open_sqlite(cls, path: str) -> "StudyQueries":
        """A read-only connection to an SQLite study (refuses a missing or non-tunefarm file)."""
        return cls(open_connection(path, create=False, timeout=BUSY_TIMEOUT_S, readonly=True), path)

    @classmethod
    def open_sqlite_again(cls, path: str) -> "StudyQueries":
        """One more read-only connection to a study this process already opened with ``open_sqlite``.

        Straight through SQLite, with no Python ``open()`` of the file: closing any descriptor of a file drops
        every POSIX lock the process holds on it, the first connection's included, and a writer that then
        closes last would checkpoint and delete the WAL under it (the first connection reads stale pages)."""
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        return cls(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None), path)

    def close(self) -> None:
        self.conn.close()

    def _rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """Every statement runs here: the one place a driver with another parameter style adapts them."""
        if self.paramstyle == "format":
            sql = sql.replace("%", "%%").replace("?", "%s")
        cur = self.conn.cursor()
        try:
            cur.execute(sql, tuple(params))
            return cur.fetchall() if cur.description is not None else []
        finally:
            cur.close()

    def max_record_id(self) -> int:
        """The newest record's id (0 for an empty study)."""
        return self._rows("SELECT max(id) FROM records")[0][0] or 0

    # -- aggregates of the records of a span (``new_span``): what a refresh folds in ---------------------------
    def tallies(self, span: Span) -> list[tuple]:
        """``(job_id, workload_id, target_id, status, count, min median_secs, max created_us)`` per group."""
        return self._rows("SELECT job_id, workload_id, target_id, status, count(*), min(median_secs), "
                          f"max(created_us) FROM records WHERE {span.sql} "
                          "GROUP BY job_id, workload_id, target_id, status", span.params)

    def errors(self, span: Span, chars: int) -> list[tuple]:
        """``(job_id, workload_id, target_id, status, error head, count)`` of failed records, by error text."""
        return self._rows(f"SELECT job_id, workload_id, target_id, status, substr(error, 1, {int(chars)}) AS e, "
                          f"count(*) FROM records WHERE {span.sql} AND status <> 'ok' "
                          "GROUP BY job_id, workload_id, target_id, status, e", span.params)

    def host_statuses(self, span: Span) -> list[tuple]:
        """``(host, status, count)``."""
        return self._rows(f"SELECT host, status, count(*) FROM records WHERE {span.sql} GROUP BY host, status",
                          span.params)

    def bins(self, span: Span, bin_us: int) -> list[tuple]:
        """``(job_id, created_us // bin_us, count)``: throughput bins."""
        return self._rows(f"SELECT job_id, created_us / {int(bin_us)} AS b, count(*) FROM records "
                          f"WHERE {span.sql} GROUP BY job_id, b", span.params)

    def improvements(self, span: Span) -> list[tuple]:
        """``(workload_id, target_id, n, created_us, median_secs)`` of the ok records that beat every earlier
        one of their task within the span; ``n`` counts the task's records of the span up to it."""
        return self._rows(
            "SELECT workload_id, target_id, n, created_us, median_secs FROM (SELECT workload_id, target_id, "
            "created_us, median_secs, status, ROW_NUMBER() OVER w AS n, "
            "MIN(CASE WHEN status = 'ok' THEN median_secs END) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING "
            f"AND 1 PRECEDING) AS prev FROM records WHERE {span.sql} "
            "WINDOW w AS (PARTITION BY workload_id, target_id ORDER BY id)) t "
            "WHERE status = 'ok' AND median_secs IS NOT NULL AND (prev IS NULL OR median_secs < prev) "
            "ORDER BY workload_id, target_id, n", span.params)

    def sample_ids(self, span: Span, stride: int) -> list[tuple]:
        """``(workload_id, target_id, id)`` of ok records whose mixed id is a multiple of ``stride``
        (``mixed_id``: the same test in Python keeps a sample consistent when its stride doubles)."""
        return self._rows(f"SELECT workload_id, target_id, id FROM records WHERE {span.sql} "
                          f"AND status = 'ok' AND median_secs IS NOT NULL AND {_MIX_SQL} % ? = 0 ORDER BY id",
                          span.params + (stride,))

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
