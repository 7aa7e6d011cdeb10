"""The dashboard's queries over a PostgreSQL study, and which record ids a refresh must read there.

The SQL is ``queries.py``'s, run through psycopg with ``?`` rewritten to ``%s`` (``StudyQueries._rows``). What
differs is which ids are new. On SQLite one writer commits at a time, so once ``max(id)`` is visible every
smaller id is too. On PostgreSQL ids come from a sequence, and a transaction that drew a smaller id may commit
after one that drew a larger id: a refresh that only read above the last id seen would miss that row forever.
(The store's own writers take turns under an advisory lock, so they commit in id order; the dashboard does not
lean on that, a writer that skips the lock must not make it miscount.)

So each refresh runs in one REPEATABLE READ snapshot and keeps, besides the highest id read (``read_to``):

* ``final``: every id at or below it was read, or will never exist (a rolled-back insert);
* ``holes``: the id ranges between ``final`` and ``read_to`` that were not visible yet. The next refresh reads
  them again with the new ids, so a late commit is counted once, when it appears;
* ``checkpoints``: ``(read_to, xmax)`` of each snapshot. An id below a visible id was drawn before that
  snapshot, by a transaction whose xid is below the snapshot's ``xmax``; once a later snapshot's ``xmin`` passes
  that ``xmax``, all those transactions have ended, and ``final`` moves up to that ``read_to``.

The argument needs every id to be drawn by a transaction that already holds its xid. The server gives a
transaction its xid only when it first writes, after a column default has drawn the row's id: an insert caught
in between holds a small id that no snapshot's ``xmax`` covers yet. So the store's record ids come from a default
that takes the xid first (``pg_schema._RECORD_IDS``), whoever writes and whether or not they take the lock; an
uncached sequence keeps the ids in the order they are drawn.

The holes stay few (in-flight inserts and rolled-back ids), and the ids between ``final`` and ``read_to`` that
are scanned to find them are those of the last refresh or two, unless a long transaction elsewhere on the
server holds ``xmin`` back.
"""
from __future__ import annotations

import collections
import contextlib

# psycopg is an optional dependency: this module is imported only for a postgresql:// study
import psycopg

from tunefarm.dashboard.queries import BUSY_TIMEOUT_S, Span, StudyQueries
from tunefarm.database import pg_connection
from tunefarm.database.errors import DatabaseError


class PgStudyQueries(StudyQueries):
    """``StudyQueries`` on a read-only psycopg connection, with the id bookkeeping of the module docstring."""

    paramstyle = "format"

    def __init__(self, url: str):
        self.url, self.name = url, pg_connection.redact(url)
        self._secrets = pg_connection.secrets_of(url)
        super().__init__(self._connect(), self.name)
        self.forget()

    def forget(self) -> None:
        self.final = self.read_to = 0
        self.holes: list[tuple[int, int]] = []
        self.checkpoints: collections.deque = collections.deque()
        self._xmin = self._xmax = 0

    def _connect(self) -> psycopg.Connection:
        """A read-only connection without parallel plans: the aggregates read narrow indexes, where workers cost
        the server more CPU than they save in time, and the server's cores are the writers' first."""
        try:
            raw = pg_connection.connect(self.url, create=False, readonly=True, timeout=BUSY_TIMEOUT_S).raw
            try:
                raw.execute("SET max_parallel_workers_per_gather = 0")
            except BaseException:
                raw.close()
                raise
            return raw
        except psycopg.Error as e:
            raise pg_connection.translate(e, self.name, self._secrets) from None
        except DatabaseError as e:
            raise type(e)(f"tunefarm database {self.name!r}: {pg_connection.first_line(e, self._secrets)}") from None

    def _rows(self, sql, params=()):
        try:
            return super()._rows(sql, params)
        except psycopg.Error as e:
            raise pg_connection.translate(e, self.name, self._secrets) from None

    @contextlib.contextmanager
    def reading(self):
        """One snapshot for every statement of a refresh (counts, bests and holes agree with each other). A
        connection the server dropped (a restart) is opened again here, once, before anything is read."""
        try:
            self._rows("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except DatabaseError:
            if not self.conn.broken:
                raise
            self.conn.close()
            self.conn = self._connect()
            self._rows("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield
        finally:
            if not self.conn.broken:
                self._rows("COMMIT")

    def new_span(self, last_id: int) -> tuple[Span, int]:
        """The ids to read now: the holes, and the ids above ``read_to``; and the highest visible id."""
        # PostgreSQL 13 renamed the txid_* functions (kept, deprecated): the old names on a 12 server
        fn = "pg_{}" if self.conn.info.server_version >= 130000 else "txid_{}"
        hi, xmin, xmax = self._rows(
            f"SELECT (SELECT max(id) FROM records), {fn.format('snapshot_xmin')}(s)::text, "
            f"{fn.format('snapshot_xmax')}(s)::text FROM {fn.format('current_snapshot')}() s")[0]
        self._xmin, self._xmax = int(xmin), int(xmax)
        hi = max(hi or 0, self.read_to)
        return Span(self.holes + [(self.read_to, hi)]), hi

    def mark_read(self, span: Span, hi: int) -> None:
        """Move ``final`` up where the snapshot allows, then note the ids still missing below ``hi``."""
        self.checkpoints.append((hi, self._xmax))
        while self.checkpoints and self.checkpoints[0][1] <= self._xmin:
            self.final = max(self.final, self.checkpoints.popleft()[0])
        self.read_to = hi
        holes = [(prev, nxt - 1) for prev, nxt in self._rows(
            "SELECT prev, id FROM (SELECT id, LAG(id, 1, ?) OVER (ORDER BY id) AS prev FROM records "
            "WHERE id > ? AND id <= ?) t WHERE id > prev + 1", (self.final, self.final, hi))]
        top = self._rows("SELECT max(id) FROM records WHERE id > ? AND id <= ?", (self.final, hi))[0][0]
        top = self.final if top is None else top
        self.holes = holes + ([(top, hi)] if top < hi else [])
