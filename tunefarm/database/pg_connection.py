"""A psycopg 3 connection that speaks the store's SQL, and PostgreSQL errors in tunefarm's words.

``SqlDatabase`` writes its SQL once with SQLite's ``?`` parameters; ``PgConnection.execute`` passes it on with
psycopg's ``%s`` (a literal ``%`` doubled), translated once per statement text. A bare ``BEGIN`` (a read that
must see one snapshot: budget_used, export) starts a REPEATABLE READ transaction. The connection runs in
autocommit mode: a statement outside ``BEGIN`` ... ``COMMIT`` is its own transaction, as in SQLite.
A driver's step (``pg_step``) skips psycopg's cursor: ``quick`` and ``call_json`` go straight through libpq.

A URL's password is secret: ``redact`` replaces it with ``***`` wherever a store names itself (``path``,
``repr``, errors, logs), and ``translate`` scrubs it from any server or client message.
"""
from __future__ import annotations

import functools
import json
import select
import urllib.parse
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import DiagnosticField, ExecStatus, TransactionStatus

from tunefarm.database import pg_schema
from tunefarm.database.base import URL_SCHEMES
from tunefarm.database.errors import DatabaseError, DatabaseLockedError, SchemaVersionError

# how a connection attempt fails while the server restarts (anything else: a wrong URL, password or role)
_TRANSIENT = ("connection refused", "starting up", "shutting down", "timeout expired", "server closed the connection",
              "could not receive", "recovery mode", "no route to host", "network is unreachable", "terminating")


def redact(url: str) -> str:
    """The URL with its password (in the authority or a ``password=`` parameter) replaced by ``***``."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        auth, host = netloc.rsplit("@", 1)
        if ":" in auth:
            netloc = auth.split(":", 1)[0] + ":***@" + host
    query = "&".join(("password=***" if q.lower().startswith("password=") else q) for q in parts.query.split("&")
                     if q)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def secrets_of(url: str) -> list[str]:
    """The password of a URL as it may appear in messages (as written and percent-decoded)."""
    parts = urllib.parse.urlsplit(url)
    found = {v for k, v in urllib.parse.parse_qsl(parts.query) if k.lower() == "password"}
    if parts.password:
        found |= {parts.password, urllib.parse.unquote(parts.password)}
    return [s for s in found if s]


@functools.lru_cache(maxsize=512)
def to_pg(sql: str) -> str:
    """The store's SQL (``?`` parameters) as psycopg's (``%s``)."""
    if sql == "BEGIN":
        return "BEGIN ISOLATION LEVEL REPEATABLE READ"
    return sql.replace("%", "%%").replace("?", "%s")


class _Result:
    """The rows of one statement, read whole (so the connection's one cursor is free for the next statement,
    even while a caller still iterates these rows)."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, cur: psycopg.Cursor):
        self.rows = cur.fetchall() if cur.description is not None else []
        self.rowcount = cur.rowcount

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list:
        return self.rows

    def __iter__(self):
        return iter(self.rows)


class PgConnection:
    """The part of ``sqlite3.Connection`` the store uses (``execute``, ``executemany``, ``in_transaction``),
    on a psycopg connection (``raw``). One cursor serves every statement: a new cursor per statement was a third
    of the client's CPU per statement."""

    def __init__(self, raw: psycopg.Connection):
        self.raw = raw
        self._cur = raw.cursor()
        self._encoding = raw.info.encoding

    def execute(self, sql: str, params=()) -> _Result:
        return _Result(self._cur.execute(to_pg(sql), tuple(params)))

    def command(self, sql: str) -> None:
        """Statements without parameters or rows (several may be joined by ``;``)."""
        self._cur.execute(sql)

    def quick(self, sql: bytes) -> None:
        """A statement that never waits for another session (``BEGIN``, ``COMMIT``, ``ROLLBACK``) straight through
        libpq: a fifth of what psycopg's cursor costs the driver's CPU (the call blocks, without the GIL)."""
        self._check(self.raw.pgconn.exec_(sql))

    def call_json(self, sql: bytes, params: tuple) -> Any:
        """The one JSON value of one statement (``$n`` parameters, sent as text), through libpq with a wait of our
        own: psycopg's cursor costs the driver some 100 us of CPU per millisecond the server works on a statement,
        a poll() nothing. An interrupted wait (Ctrl-C) closes the connection: the server rolls back."""
        pg = self.raw.pgconn
        try:
            pg.send_query_params(sql, [None if p is None else str(p).encode(self._encoding) for p in params])
            poller = select.poll()
            poller.register(pg.socket, select.POLLIN | select.POLLOUT)
            while pg.flush():  # a long query may not leave in one go
                poller.poll()
                pg.consume_input()
            poller.modify(pg.socket, select.POLLIN)
            results = []
            while True:
                while pg.is_busy():
                    poller.poll()
                    pg.consume_input()
                res = pg.get_result()
                if res is None:
                    break
                results.append(res)
        except BaseException:
            if not self.raw.broken:
                self.raw.close()
            raise
        for res in results:
            self._check(res)
        return json.loads(results[-1].get_value(0, 0).decode(self._encoding))

    def _check(self, res) -> None:
        """Raise what psycopg would for a failed result."""
        if res.status in (ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK):
            return
        if self.raw.broken or not res.error_field(DiagnosticField.SQLSTATE):  # as psycopg says a lost server
            raise psycopg.OperationalError(res.get_error_message(self._encoding))
        raise pg_errors.error_from_result(res, self._encoding)

    def executemany(self, sql: str, rows) -> _Result:
        self._cur.executemany(to_pg(sql), list(rows))
        return _Result(self._cur)

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


def connect(url: str, *, create: bool, readonly: bool, timeout: float) -> PgConnection:
    """A connection whose database has the current schema (created or migrated here, unless ``readonly``)."""
    options = f"-c lock_timeout={int(timeout * 1000)}" + (" -c default_transaction_read_only=on" if readonly else "")
    # prepare_threshold=None: statements are not prepared on the server (preparing cost the client more CPU than
    # it saved; the driver's CPU is what a tuning job pays for)
    raw = psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(min(timeout, 30))),
                          application_name="tunefarm", options=options, prepare_threshold=None)
    try:
        try:
            version = pg_schema.read_version(raw)
        except SchemaVersionError:
            if readonly or not create:
                raise
            version = -1  # maybe another driver's schema in the making: migrate() reads again under the lock
        pg_schema.check_supported(version)
        if version == 0 and not create:
            raise DatabaseError("the database holds no tunefarm study yet" + (" (it is opened read-only)"
                                                                            if readonly else ""))
        if version < pg_schema.CURRENT_VERSION:
            if readonly:
                raise SchemaVersionError(f"the study has schema version {version}; open it once writable to upgrade "
                                         f"it to {pg_schema.CURRENT_VERSION}")
            pg_schema.migrate(raw)
    except BaseException:
        raw.close()
        raise
    return PgConnection(raw)


def lost(exc: BaseException, conn: PgConnection | None) -> bool:
    """Whether ``exc`` says the server went away (restart, network): worth reconnecting, not a wrong request."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    if conn is not None and conn.raw.broken:
        return True
    if isinstance(exc, (pg_errors.AdminShutdown, pg_errors.CrashShutdown, pg_errors.CannotConnectNow)):
        return True
    return exc.sqlstate is None and any(t in str(exc).lower() for t in _TRANSIENT)


def first_line(exc: BaseException, secrets: list[str]) -> str:
    text = str(exc).strip().splitlines()
    line = text[0].strip() if text else type(exc).__name__
    for s in secrets:
        line = line.replace(s, "***")
    return line[:300]


def translate(exc: psycopg.Error, path: str, secrets: list[str]) -> DatabaseError:
    """A one-line tunefarm error naming the store (password never included)."""
    line = first_line(exc, secrets)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return DatabaseError(f"tunefarm database {path!r}: this role may not do that ({line}); a read-only role can "
                             f"query, report and compile, not tune or import")
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return DatabaseError(f"tunefarm database {path!r} is open read-only: {line}")
    if isinstance(exc, pg_errors.LockNotAvailable):
        return DatabaseLockedError(f"tunefarm database {path!r} stayed locked by other writers past the timeout "
                                   f"({line})")
    if isinstance(exc, psycopg.OperationalError):
        return DatabaseError(f"cannot reach tunefarm database {path!r}: {line}")
    return DatabaseError(f"tunefarm database {path!r}: {line}")
