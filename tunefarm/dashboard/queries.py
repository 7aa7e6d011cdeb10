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
from collections.abc import Sequence
from typing import Any

from tunefarm.database import liveness
from tunefarm.database.base import URL_SCHEMES
from tunefarm.database.connection import open_connection
from tunefarm.database.errors import DatabaseError
from tunefarm.database.provenance import TRUSTED_ORDER

BUSY_TIMEOUT_S = 30.0
# ids mixed before sampling: ids of interleaved tasks fall in arithmetic progressions that a plain modulo
# would sample unevenly (every 4th id is one task's); the product stays below 2**63 for ids below 3 * 10**9
_MIX_MUL, _MIX_MOD = 2654435761, 1000003
_MIX_SQL = f"(id * {_MIX_MUL}) % {_MIX_MOD}"
# the values a host's medians are taken over: (column, which records), each along a host index
BUILD_TIMES = ("build_secs", "build_secs IS NOT NULL")  # build_secs is NOT NULL: every record of a host has one
RUN_TIMES = ("median_secs", "status = 'ok' AND median_secs IS NOT NULL")


# one task's best-so-far steps over the whole study, along ``records_task_order`` (workload, target, id): from
# the task's first ok record, each step is the next id whose latency beats the last step's, and ``n`` adds the
# task's records in between (``n`` as the window query counts it). Each index entry is visited about twice, in
# the database; parameters: (workload_id, target_id) four times.
_WALK = """WITH RECURSIVE walk(id, med, n) AS (
    SELECT f.id, f.median_secs,
           (SELECT count(*) FROM records WHERE workload_id = ? AND target_id = ? AND id <= f.id)
    FROM (SELECT id, median_secs FROM records WHERE workload_id = ? AND target_id = ? AND status = 'ok'
          AND median_secs IS NOT NULL ORDER BY id LIMIT 1) f
    UNION ALL
    SELECT nx.id, nx.median_secs, walk.n + (SELECT count(*) FROM records WHERE workload_id = ? AND target_id = ?
           AND id > walk.id AND id <= nx.id)
    FROM walk JOIN records nx ON nx.id = (SELECT id FROM records WHERE workload_id = ? AND target_id = ?
         AND id > walk.id AND status = 'ok' AND median_secs < walk.med ORDER BY id LIMIT 1))
SELECT walk.n, r.created_us, walk.med FROM walk JOIN records r ON r.id = walk.id"""


# one job's throughput bins over the whole study: from its first bin, each step seeks the first record at or
# after the next bin's start and counts that bin's records (times are after 1970: SQL's integer division
# truncates toward zero, as Python's floors, only for non-negative numbers)
_BIN_WALK = """WITH RECURSIVE b(k) AS (
    SELECT (SELECT min(created_us) FROM records WHERE {job}) / {bin}
    UNION ALL
    SELECT (SELECT min(created_us) FROM records WHERE {job} AND created_us >= (b.k + 1) * {bin}) / {bin}
    FROM b WHERE b.k IS NOT NULL)
SELECT k, (SELECT count(*) FROM records WHERE {job} AND created_us >= k * {bin} AND created_us < (k + 1) * {bin})
FROM b WHERE k IS NOT NULL"""


def mixed_id(record_id: int) -> int:
    """What ``sample_ids`` tests the stride against, computed in Python."""
    return record_id * _MIX_MUL % _MIX_MOD


class Span:
    """The record ids a refresh reads: a union of ranges ``lo < id <= hi`` (SQL's ``WHERE`` and its parameters).

    The first read of a study is *whole*: every id up to the snapshot's largest, so it needs no ``WHERE`` at all
    (``reading`` holds one snapshot): without a range on ``id`` the database answers from the narrow indexes of
    the records' columns (schema migration 6) in their order, instead of the wide rows in id order."""

    def __init__(self, ranges: Sequence[tuple[int, int]]):
        self.ranges = [(int(lo), int(hi)) for lo, hi in ranges if hi > lo]
        self.whole = len(self.ranges) == 1 and self.ranges[0][0] == 0

    def __bool__(self) -> bool:
        return bool(self.ranges)

    @property
    def sql(self) -> str:
        if self.whole:
            return "1 = 1"
        return "(" + " OR ".join(["(id > ? AND id <= ?)"] * len(self.ranges)) + ")"

    @property
    def params(self) -> tuple[int, ...]:
        return () if self.whole else tuple(v for r in self.ranges for v in r)


class StudyQueries:
    """The dashboard's read-only queries over one open connection (used by one thread at a time)."""

    paramstyle = "qmark"  # the DB-API parameter style of the connection: "format" has ``?`` rewritten

    def __init__(self, conn: Any, name: str):
        self.conn = conn
        self.name = name  # how the study is named in output (never a password)

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

    @contextlib.contextmanager
    def reading(self):
        """Around the statements of one refresh: one read transaction, so that a whole read (``Span.whole``)
        sees no record above the largest id it read first. (Every id up to a visible one is committed on SQLite,
        so the ranges of later refreshes would need none.)"""
        self._rows("BEGIN")
        try:
            yield
        finally:
            self._rows("COMMIT")

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
        """``(host, status, count, count with a median latency)``."""
        return self._rows(f"SELECT host, status, count(*), count(median_secs) FROM records WHERE {span.sql} "
                          "GROUP BY host, status", span.params)

    def bins(self, span: Span, bin_us: int, jobs: Sequence[int | None]) -> list[tuple]:
        """``(job_id, created_us // bin_us, count)``: throughput bins. A whole read walks each of ``jobs``
        (``None``: records of no job) from bin to bin along ``records_job_time``, instead of sorting the study."""
        if not span.whole:
            return self._rows(f"SELECT job_id, created_us / {int(bin_us)} AS b, count(*) FROM records "
                              f"WHERE {span.sql} GROUP BY job_id, b", span.params)
        out = []
        for job in jobs:
            sql = _BIN_WALK.format(job="job_id IS NULL" if job is None else "job_id = ?", bin=int(bin_us))
            out += [(job, b, n) for b, n in self._rows(sql, () if job is None else (job,) * 3)]
        return out

    def improvements(self, span: Span, tasks: Sequence[tuple[int, int]]) -> list[tuple]:
        """``(workload_id, target_id, n, created_us, median_secs)`` of the ok records that beat every earlier
        one of their task within the span; ``n`` counts the task's records of the span up to it. A whole read
        walks each of ``tasks`` (``_walk``); a refresh's few new records go through one window query."""
        if span.whole:  # each walk's steps in their order (n grows with id): sorted here, not by a temporary index
            return [(wid, tid, *row) for wid, tid in tasks for row in sorted(self._rows(_WALK, (wid, tid) * 4))]
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
        rows = self._rows(f"SELECT workload_id, target_id, id FROM records WHERE {span.sql} "
                          f"AND status = 'ok' AND median_secs IS NOT NULL AND {_MIX_SQL} % ? = 0",
                          span.params + (stride,))
        return sorted(rows, key=lambda r: r[2])  # sorted here: an ORDER BY id would read the rows, not an index

    def host_medians(self, counts: dict[str, tuple[int, int]]) -> list[tuple]:
        """``(host, median build_secs, median run median_secs of ok records)`` over the whole study (the
        lower median: a value that was measured), given each host's ``(records, ok records with a median)``
        in the same snapshot. Each is the value at offset ``(count - 1) / 2`` along the host's index
        (``records_host_build``, ``records_host_status``): half a host's entries, no sort."""
        def median_at(column: str, where: str, host: str, n: int) -> float | None:
            if not n:
                return None
            return self._rows(f"SELECT {column} FROM records WHERE host = ? AND {where} ORDER BY {column} "
                              "LIMIT 1 OFFSET ?", (host, (n - 1) // 2))[0][0]
        return [(h, median_at(*BUILD_TIMES, h, n), median_at(*RUN_TIMES, h, timed))
                for h, (n, timed) in sorted(counts.items())]

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

    def top_k(self, workload_id: int, target_id: int, k: int) -> list[tuple]:
        """``(id, trace_json, median_secs, job_id, host, created_us, program_hash, confirmed_secs,
        confirmed_p10_secs, confirmed_p90_secs)`` of the ``k`` best ok records, ranked as the store's ``top_k``
        ranks them (``provenance.TRUSTED_ORDER``: confirmed records first, by their confirmed median), along the
        ``records_trusted`` index."""
        return self._rows(
            "SELECT r.id, r.trace_json, r.median_secs, r.job_id, r.host, r.created_us, r.program_hash, "
            "r.confirmed_secs, r.confirmed_p10_secs, r.confirmed_p90_secs FROM records r "
            f"WHERE r.workload_id = ? AND r.target_id = ? AND r.status = 'ok' ORDER BY {TRUSTED_ORDER} LIMIT ?",
            (workload_id, target_id, k))

    def job_uids(self) -> dict[int, str]:
        """Each job's id and uid (a job imported into another study keeps its uid there)."""
        return dict(self._rows("SELECT id, uid FROM jobs"))

    def values_around(self, host: str, column: str, where: str, lo: float, hi: float) -> tuple[int, list[float]]:
        """How many of a host's values of ``column`` (among the records ``where`` picks) are below ``lo``, and
        those from ``lo`` to ``hi``: along the host's index, in one snapshot (``reading``)."""
        with self.reading():
            below = self._rows(f"SELECT count(*) FROM records WHERE host = ? AND {where} AND {column} < ?",
                               (host, lo))[0][0]
            inside = self._rows(f"SELECT {column} FROM records WHERE host = ? AND {where} AND {column} >= ? "
                                f"AND {column} <= ?", (host, lo, hi))
        return below, [v for (v,) in inside]

    def traces_of(self, record_ids: Sequence[int]) -> list[tuple]:
        """``(id, trace_json, median_secs)`` of the given records (primary-key lookups, in chunks)."""
        out: list[tuple] = []
        ids = list(record_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out += self._rows(f"SELECT id, trace_json, median_secs FROM records WHERE id IN "
                              f"({', '.join('?' * len(chunk))})", chunk)
        return out
