"""``PostgresDatabase``: the trace database on a PostgreSQL server, for a study that drivers on several hosts share.

It is ``SqlDatabase`` (the same SQL, claims, liveness and views as the SQLite store) on a psycopg 3 connection per
process and thread. Every write transaction takes one advisory lock first (``pg_schema.LOCK_SQL``): writers
take turns as they do on SQLite's file lock, so a claim's check of the budget and its insert see every other
job's claims, and budgets and dedup stay exact across hosts. Reads never wait for it. A driver's step
(``commit_and_claim``, ``commit_records``, ``claim``) is one call of a server function (``pg_step``) in that
transaction.

The server may restart under a running job. A call whose connection is lost before its transaction commits
rolled back as a whole (no half-written step), so the store reconnects with backoff (0.1 s doubling to 5 s)
and runs the call again, for at most ``reconnect_s`` (60 s by default); past that it raises a one-line
DatabaseError. A connection lost *during* ``COMMIT`` leaves unknown whether that step was stored: the call
raises at once (the job stops, losing at most that step; ``tune --resume`` continues it).
"""
from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable
from typing import Any

import psycopg

from tunefarm.database import claims, liveness, pg_connection, pg_step
from tunefarm.database.base import URL_SCHEMES
from tunefarm.database.errors import DatabaseError, InvalidRecordError, JobNotRunningError
from tunefarm.database.pg_connection import PgConnection
from tunefarm.database.pg_schema import LOCK_SQL
from tunefarm.database.records import nonempty_str, opt_int, prepare_row
from tunefarm.database.sqlite_database import SqlDatabase, _translated, now_us

log = logging.getLogger(__name__)
RECONNECT_S = 60.0


class InDoubtCommitError(DatabaseError):
    """The connection was lost while a transaction committed: whether it was stored is unknown."""


class _DeadJobs(Exception):
    """A step counted claims of jobs whose driver process is gone: it rolls back and runs again without them."""

    def __init__(self, jobs: set[int]):
        super().__init__(sorted(jobs))
        self.jobs = jobs


class PostgresDatabase(SqlDatabase):
    """The trace database at a ``postgresql://user:password@host:port/dbname`` URL (see the module doc).

    ``create=False`` refuses a database that holds no study yet; ``readonly=True`` opens every transaction
    read-only (a write fails with a one-line DatabaseError), as does a role granted only SELECT. ``timeout``
    bounds the wait for other writers and for a connection; ``reconnect_s`` how long a lost server is waited
    for. ``path`` is the URL without its password; pickling keeps the URL.
    """

    def __init__(self, url: str, *, create: bool = True, timeout: float = 60.0, readonly: bool = False,
                 reconnect_s: float = RECONNECT_S):
        if not isinstance(url, str) or not url.startswith(URL_SCHEMES):
            raise DatabaseError("a PostgreSQL store is named by a postgresql://user:password@host:port/dbname URL")
        self._url = url
        self.path = pg_connection.redact(url)
        self._secrets = pg_connection.secrets_of(url)
        self.timeout = float(timeout)
        self.reconnect_s = float(reconnect_s)
        self._create = create and not readonly
        self._readonly = readonly
        self._init_connections()
        try:
            self._conn()  # a wrong URL, password or server fails here, at once, not at the first query
        except psycopg.Error as e:
            raise pg_connection.translate(e, self.path, self._secrets) from None
        except DatabaseError as e:
            raise type(e)(f"{self.path!r}: {pg_connection.first_line(e, self._secrets)}") from None

    def _open(self) -> PgConnection:
        return pg_connection.connect(self._url, create=self._create, readonly=self._readonly, timeout=self.timeout)

    def __getstate__(self) -> dict:
        return {"url": self._url, "timeout": self.timeout, "create": self._create, "readonly": self._readonly,
                "reconnect_s": self.reconnect_s}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["url"], create=state["create"], timeout=state["timeout"], readonly=state["readonly"],
                      reconnect_s=state["reconnect_s"])

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.path!r})"

    def _conn(self) -> PgConnection:
        conn = super()._conn()
        if conn.raw.closed and not conn.raw.broken:  # closed by an interrupted call: open another
            self._local.conn = None
            conn = super()._conn()
        return conn

    def _write(self, fn, *, locks: bool = False):
        """``fn(conn)`` in one transaction holding the write lock (``fn`` takes it itself when ``locks``: the step
        function does); a failed commit's outcome is reported."""
        conn = self._conn()
        try:
            if locks:
                conn.quick(b"BEGIN")
            else:
                conn.command("BEGIN; " + LOCK_SQL)  # one round trip; the wait for the lock stays interruptible
            out = fn(conn)
        except BaseException:
            if not conn.raw.closed and conn.in_transaction:  # (an interrupted call closed it: nothing to undo)
                conn.quick(b"ROLLBACK")
            raise
        try:
            conn.quick(b"COMMIT")
        except psycopg.OperationalError as e:
            if not pg_connection.lost(e, conn):
                raise
            self._local.conn = None
            raise InDoubtCommitError(
                f"lost the connection to tunefarm database {self.path!r} while committing; that step may or may "
                f"not be stored ({pg_connection.first_line(e, self._secrets)}); resume the job to go on") from None
        return out

    def _call(self, method, args, kwargs):
        """Run a public method; on a lost server, reconnect with backoff and run it again (see the module doc)."""
        deadline, delay = None, 0.1
        while True:
            try:
                return method(self, *args, **kwargs)
            except psycopg.Error as e:
                conn = getattr(self._local, "conn", None)
                if not pg_connection.lost(e, conn):
                    raise pg_connection.translate(e, self.path, self._secrets) from None
                self._local.conn = None
                now = time.monotonic()
                deadline = deadline or now + self.reconnect_s
                line = pg_connection.first_line(e, self._secrets)
                if now >= deadline:
                    raise DatabaseError(f"lost the connection to tunefarm database {self.path!r} and could not "
                                        f"reconnect within {self.reconnect_s:g} s ({line})") from None
                log.warning("lost the connection to %s (%s); reconnecting in %.1f s", self.path, line, delay)
                time.sleep(min(delay, max(0.0, deadline - now)))
                delay = min(delay * 2, 5.0)

    # -- a driver's step in one server call (pg_step.py) ---------------------------------------------------
    @_translated
    def commit_records(self, records: Iterable[Any]) -> int | None:
        """As ``SqlDatabase.commit_records``, in one server call."""
        rows = [prepare_row(r, now_us()) for r in records]
        return self._step(rows, None, [])["batch"] if rows else None

    @_translated
    def claim(self, job_id: int, workload: Any, target: str, program_hashes: Iterable[str],
              budget: int | None = None) -> list[str]:
        """As ``SqlDatabase.claim``, in one server call."""
        hashes = claims.program_hashes(program_hashes)
        return self._step([], opt_int(job_id, "job_id"), [self._ask(workload, target, hashes, budget)])["granted"][0]

    @_translated
    def commit_and_claim(self, records: Iterable[Any], job_id: int, wanted: Iterable[tuple]) -> list[list[str]]:
        """As ``SqlDatabase.commit_and_claim``, in one server call."""
        rows = [prepare_row(r, now_us()) for r in records]
        asks = [(w, t, claims.program_hashes(h), b) for w, t, h, b in wanted]
        job_id = opt_int(job_id, "job_id")
        return self._step(rows, job_id, [self._ask(*a) for a in asks])["granted"]

    def _ask(self, workload: Any, target: str, hashes: list[str], budget: int | None) -> list:
        """A claim as the server function reads it: ``[workload id, target, hashes, budget]``."""
        if budget is not None and (opt_int(budget, "budget") < 0):
            raise InvalidRecordError(f"budget must be >= 0, got {budget!r}")
        nonempty_str(target, "target")
        wid = self._workload_ids.get(workload) if isinstance(workload, str) else None
        if wid is None:
            info = self._workload(self._conn(), workload)
            wid = info.workload_id
            self._workload_ids[info.key] = wid  # workloads are never deleted: an id found stays true
        return [wid, target, hashes, budget]

    def _step(self, rows: list[tuple], job_id: int | None, asks: list[list]) -> dict:
        """Store ``rows`` and claim ``asks`` in one write transaction of one server call. Claims of drivers on
        this host are counted alive by the server; their pids are checked here before the commit, and a step
        that counted a dead one runs again with it known dead (see ``pg_step``)."""
        text = pg_step.rows_json(rows, [uuid.uuid4().hex for _ in rows])
        asks_text = json.dumps(asks, separators=(",", ":"))
        batch_uid = uuid.uuid4().hex
        pid, space, start = liveness.own_process()
        stale_us = int(liveness.HEARTBEAT_TIMEOUT_S * 1e6)
        dead: set[int] = set()

        def txn(conn):
            out = pg_step.call(conn, text, asks_text, job_id, now_us(), (pid, space, start), stale_us, sorted(dead),
                               batch_uid, self.path)
            gone = {j for j, p, s in out["check"] if not liveness.pid_alive(p, s)}
            if job_id in gone:
                raise JobNotRunningError(f"job {job_id} is {liveness.KILLED!r}, not running: it cannot claim "
                                         f"programs")
            if gone:
                raise _DeadJobs(gone)
            return out

        while True:
            try:
                return self._write(txn, locks=True)
            except _DeadJobs as e:
                dead |= e.jobs
