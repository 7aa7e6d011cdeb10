"""``Database``: the SQLite trace database (the default ``TraceDatabase``) every tuning process of a study shares;
``SqlDatabase``: its queries, which the PostgreSQL store (``postgres_database.py``) runs too.

Each process (and each thread) opens its own connection lazily; the object itself only holds the path, so
it pickles by path and can be handed to worker processes. Every write is one ``BEGIN IMMEDIATE``
transaction (a measured batch is all-or-nothing), retried while other writers hold the lock.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import math
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from tunefarm.database import claims, liveness, provenance
from tunefarm.database.base import TraceDatabase
from tunefarm.database.confirmed import ConfirmedFigures
from tunefarm.database.connection import open_connection, sqlite_errors, write_transaction
from tunefarm.database.errors import (AmbiguousTargetError, DatabaseError, InvalidRecordError, UnknownJobError,
                                      UnknownWorkloadError)
from tunefarm.database.records import TuningRecord, nonempty_str, opt_int, prepare_row
from tunefarm.database.schema import ROWS_PER_INSERT, insert_records
from tunefarm.database.trace_format import trace_from_text
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.ir.function import PrimFunc
from tunefarm.ir.module import IRModule
from tunefarm.ir.structural import workload_key

SHORT_KEY = 10  # characters of a workload key that tables show; a unique prefix of 6 or more finds the workload
_KEY_PREFIX = re.compile(r"[0-9a-f]{6,63}")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_INHERITED: list = []  # connections inherited through fork(): kept alive, never used

_SELECT_RECORD = (
    "SELECT r.id, r.trace_json, r.program_hash, r.status, r.run_secs_json, r.build_secs, r.error, r.host, "
    "r.job_id, r.trial, r.created_us, " + provenance.RECORD_SQL + " FROM records r LEFT JOIN jobs j ON j.id = r.job_id ")


def now_us() -> int:
    return time.time_ns() // 1000


def us_to_datetime(us: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(microseconds=us)


@dataclasses.dataclass(frozen=True)
class WorkloadInfo:
    """A stored workload: its stable key, display name, canonical IR JSON text and FLOP count."""

    workload_id: int
    key: str
    name: str
    ir_json: str
    flop: float | None


def _the_prim_func(workload: Any) -> PrimFunc:
    """The tuned function of a PrimFunc or an IRModule: its ``main``, or its only PrimFunc."""
    if isinstance(workload, PrimFunc):
        return workload
    main = workload.main_prim_func()
    if main is None:
        prims = workload.prim_funcs()
        raise UnknownWorkloadError(f"the IRModule has {len(prims)} PrimFuncs ({', '.join(prims) or 'none'}) and "
                                   "none named 'main': pass the PrimFunc that was tuned")
    return main


def _translated(method):
    """Run a public method through the store's ``_call``: its errors become a tunefarm DatabaseError naming the
    store (and the server store reconnects and runs it again when its connection was lost)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return self._call(method, args, kwargs)

    return wrapper


class SqlDatabase(ConfirmedFigures, TraceDatabase):
    """The trace database over SQL, for every store that speaks it (``Database``: SQLite; ``PostgresDatabase``).

    ``workload`` arguments accept a workload key (or a unique prefix of at least 6 of its characters), a workload
    name (if unique), a workload id, or the workload
    itself: a PrimFunc or an IRModule (its ``main``, or its only PrimFunc), as TVM's ``query_tuning_record``.
    Queries are target-aware: with ``target=None``, :meth:`best` and :meth:`top_k` raise
    :class:`AmbiguousTargetError` when the workload has records under more than one target, so a latency
    measured on one CPU is never silently used for another.

    The SQL is written once, in SQLite's dialect (``?`` parameters, ``ON CONFLICT``, ``RETURNING``) that the
    server store's connection passes on to PostgreSQL; a subclass says how to connect (``_conn``), how to run
    one write transaction (``_write``) and how to run a public method (``_call``: error translation).
    """

    path: str

    def _init_connections(self) -> None:
        """No connection yet (they are per process and per thread, opened on first use); empty id caches."""
        self._local = threading.local()
        self._pid = os.getpid()
        self._workload_ids: dict[str, int] = {}
        self._target_ids: dict[str, int] = {}

    def _open(self):
        raise NotImplementedError

    def _conn(self):
        """This thread's connection, opened on first use (``_open``)."""
        if self._pid != os.getpid():  # forked child: never use, nor close, the parent's connection
            _INHERITED.append(self._local)  # closing it here could drop the parent's file locks or end its session
            self._local = threading.local()
            self._pid = os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (others close when their thread's store is collected)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._pid == os.getpid():
            conn.close()
        self._local.conn = None

    def _write(self, fn):
        raise NotImplementedError

    def _call(self, method, args, kwargs):
        raise NotImplementedError

    def _store_dead_jobs(self) -> None:
        """Store ``killed`` for running jobs whose driver is gone (see ``liveness``), when this file is writable."""
        if self._readonly or not liveness.dead_jobs(self._conn()):
            return
        try:
            self._write(lambda conn: liveness.store_killed(conn, liveness.dead_jobs(conn)))
        except (sqlite3.Error, DatabaseError, OSError):
            pass  # a file this process cannot write: readers still decide the state from the row

    # -- lookups -----------------------------------------------------------------------------------------
    def _workload(self, conn: sqlite3.Connection, workload: Any) -> WorkloadInfo:
        cols = "SELECT id, key, name, ir_json, flop FROM workloads "
        if isinstance(workload, (PrimFunc, IRModule)):
            workload = workload_key(_the_prim_func(workload))
        if isinstance(workload, int) and not isinstance(workload, bool):
            rows = conn.execute(cols + "WHERE id = ?", (workload,)).fetchall()
        elif isinstance(workload, str):
            rows = conn.execute(cols + "WHERE key = ?", (workload,)).fetchall()
            if not rows:
                rows = conn.execute(cols + "WHERE name = ? LIMIT 3", (workload,)).fetchall()
            if not rows and _KEY_PREFIX.fullmatch(workload):  # the short key tables show
                rows = conn.execute(cols + "WHERE substr(key, 1, ?) = ? LIMIT 3",
                                    (len(workload), workload)).fetchall()
        else:
            raise TypeError(f"workload must be a key, a name, an id, a PrimFunc or an IRModule, "
                            f"got {type(workload).__name__}")
        if not rows:
            raise UnknownWorkloadError(f"no workload with key or name {workload!r} in {self.path!r}")
        if len(rows) > 1:
            keys = ", ".join(r[1][:SHORT_KEY] for r in rows)
            raise UnknownWorkloadError(
                f"several workloads are named {workload!r} in {self.path!r} (keys {keys}, ...); pass the key "
                f"(its first {SHORT_KEY} characters are enough)")
        return WorkloadInfo(*rows[0])

    def _target_id(self, conn: sqlite3.Connection, target: str) -> int | None:
        if not isinstance(target, str):
            raise TypeError(f"target must be a string, got {type(target).__name__}")
        tid = self._target_ids.get(target)
        if tid is None:
            row = conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()
            tid = row and row[0]
        return tid

    def _query_target(self, conn: sqlite3.Connection, w: WorkloadInfo,
                      target: str | None) -> tuple[int | None, str | None]:
        """(target id, target) to answer a best/top-k query; infers it when the workload has exactly one."""
        if target is not None:
            return self._target_id(conn, target), target
        lo, hi = conn.execute(
            "SELECT (SELECT min(target_id) FROM records WHERE workload_id = ?), "
            "(SELECT max(target_id) FROM records WHERE workload_id = ?)", (w.workload_id, w.workload_id)).fetchone()
        if lo is None:
            return None, None
        if lo != hi:
            targets = self.targets(w.workload_id)
            raise AmbiguousTargetError(
                f"workload {w.name!r} ({w.key}) has records for {len(targets)} targets: "
                + "; ".join(repr(t) for t in targets) + ". Pass target=... to choose one.")
        (t,) = conn.execute("SELECT target FROM targets WHERE id = ?", (lo,)).fetchone()
        return lo, t

    # -- workloads and jobs ------------------------------------------------------------------------------
    @_translated
    def commit_workload(self, key: str, name: str, ir_json: Any, flop: float | None = None) -> int:
        """Store a workload (idempotent by ``key``) and return its id. ``ir_json`` is JSON text (or a JSON value)."""
        nonempty_str(key, "workload key")
        nonempty_str(name, "workload name")
        if isinstance(ir_json, str):
            try:
                json.loads(ir_json)
            except ValueError as e:
                raise InvalidRecordError(f"ir_json of workload {name!r} is not valid JSON: {e}") from None
        else:
            try:
                ir_json = json.dumps(ir_json, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError) as e:
                raise InvalidRecordError(f"ir_json of workload {name!r} is not JSON data: {e}") from None
        if flop is not None:
            flop = float(flop)
            if not math.isfinite(flop) or flop < 0:
                raise InvalidRecordError(f"flop must be finite and >= 0, got {flop!r}")

        def txn(conn):
            conn.execute(
                "INSERT INTO workloads (key, name, ir_json, flop, created_us) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET flop = coalesce(workloads.flop, excluded.flop)",
                (key, name, ir_json, flop, now_us()))
            return conn.execute("SELECT id FROM workloads WHERE key = ?", (key,)).fetchone()[0]

        wid = self._write(txn)
        self._workload_ids[key] = wid
        return wid

    @_translated
    def get_workload(self, workload: Any) -> WorkloadInfo:
        """The stored workload (key, name, IR JSON text, FLOP count) for a key, name or id."""
        return self._workload(self._conn(), workload)

    @_translated
    def start_job(self, name: str, config: Mapping | None = None) -> int:
        """Record the start of a tuning job with its JSON configuration; returns the job id.

        The calling process is recorded as the job's driver (pid, host, process space; see ``liveness``):
        readers show the job ``killed`` once that process is gone without calling :meth:`finish_job`.
        """
        nonempty_str(name, "job name")
        try:
            config_json = json.dumps(dict(config or {}), sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidRecordError(f"job config must be JSON data: {e}") from None
        pid, host, space, start = liveness.this_process()
        now = now_us()
        self._store_dead_jobs()
        versions = provenance.code_versions()  # what built and measured its records (compile checks it)
        return self._write(lambda conn: conn.execute(
            "INSERT INTO jobs (uid, name, config_json, started_us, status, pid, host, pid_space, pid_start, "
            "heartbeat_us, " + ", ".join(provenance.JOB_COLUMNS) + ") VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, "
            "?, ?, ?) RETURNING id", (uuid.uuid4().hex, name, config_json, now, pid, host, space, start, now,
                                      *versions)).fetchone()[0])

    @_translated
    def finish_job(self, job_id: int, status: str = "finished") -> None:
        """Mark a job finished (``status`` is free text, e.g. finished / failed / cancelled); its claims end."""
        nonempty_str(status, "job status")

        def txn(conn):
            cur = conn.execute("UPDATE jobs SET finished_us = ?, status = ? WHERE id = ?", (now_us(), status, job_id))
            if cur.rowcount == 0:
                raise UnknownJobError(f"no job with id {job_id!r} in {self.path!r}")
            claims.release(conn, job_id, None)

        self._write(txn)

    @_translated
    def job_state(self, job_id: int) -> str:
        """``running``, ``killed``, ``stale`` (see ``liveness``) or the status a finished job ended with."""
        self._store_dead_jobs()
        try:
            return claims.job_state(self._conn(), opt_int(job_id, "job_id"), now_us())
        except UnknownJobError:
            raise UnknownJobError(f"no job with id {job_id!r} in {self.path!r}") from None

    # -- sharing a budget between concurrent jobs (see claims.py) ----------------------------------------
    @_translated
    def heartbeat(self, job_id: int) -> None:
        """Tell readers the job's driver is alive (``claim`` and ``commit_records`` do it too)."""
        def txn(conn):
            if conn.execute("UPDATE jobs SET heartbeat_us = ? WHERE id = ?", (now_us(), job_id)).rowcount == 0:
                raise UnknownJobError(f"no job with id {job_id!r} in {self.path!r}")

        self._write(txn)

    def _claim_ids(self, conn: sqlite3.Connection, workload: Any, target: str) -> tuple[int, int]:
        wid = self._workload_ids.get(workload) if isinstance(workload, str) else None
        if wid is None:
            wid = self._workload(conn, workload).workload_id
        tid = self._target_id(conn, nonempty_str(target, "target"))
        if tid is None:
            conn.execute("INSERT INTO targets (target) VALUES (?) ON CONFLICT DO NOTHING", (target,))
            tid = conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()[0]
        return wid, tid

    @_translated
    def claim(self, job_id: int, workload: Any, target: str, program_hashes: Iterable[str],
              budget: int | None = None) -> list[str]:
        """Claim programs for measuring: the subset of ``program_hashes`` (given order, no duplicates) that job
        ``job_id`` now holds, in one transaction. A hash is refused when its program is already recorded for
        this workload and target, or held by another live job; with ``budget``, also once records plus live
        claims of all jobs would exceed it. Hashes the job already held are returned again. Heartbeats the
        job; raises :class:`JobNotRunningError` for a job that finished or was killed."""
        hashes = claims.program_hashes(program_hashes)
        job_id = opt_int(job_id, "job_id")
        return self._write(lambda conn: self._claim_in(conn, job_id, workload, target, hashes, budget))

    def _claim_in(self, conn: sqlite3.Connection, job_id: int, workload: Any, target: str, hashes: list[str],
                  budget: int | None) -> list[str]:
        if budget is not None and (opt_int(budget, "budget") < 0):
            raise InvalidRecordError(f"budget must be >= 0, got {budget!r}")
        wid, tid = self._claim_ids(conn, workload, target)
        try:
            return claims.claim(conn, job_id, wid, tid, hashes, budget, now_us())
        except UnknownJobError:
            raise UnknownJobError(f"no job with id {job_id!r} in {self.path!r}") from None

    @_translated
    def release_claims(self, job_id: int, program_hashes: Iterable[str] | None = None) -> int:
        """End claims of ``job_id`` it will not measure (all of them when ``program_hashes`` is None);
        returns how many it held. Committing a program's record ends its claim without this call."""
        hashes = None if program_hashes is None else claims.program_hashes(program_hashes)
        return self._write(lambda conn: claims.release(conn, opt_int(job_id, "job_id"), hashes))

    @_translated
    def budget_used(self, workload: Any, target: str, exclude_job: int | None = None) -> int:
        """Trials of a workload on a target: stored records (any status) plus the live claims of jobs other
        than ``exclude_job`` (of every job when None). What ``claim(..., budget=N)`` keeps at most ``N``."""
        conn = self._conn()
        wid = self._workload(conn, workload).workload_id
        tid = self._target_id(conn, target)
        if tid is None:
            return 0
        conn.execute("BEGIN")  # one snapshot: a commit between the two counts would move a trial across them
        try:
            return claims.budget_used(conn, wid, tid, now_us(), opt_int(exclude_job, "exclude_job"))
        finally:
            conn.execute("COMMIT")

    # -- records -----------------------------------------------------------------------------------------
    @_translated
    def commit_records(self, records: Iterable[Any]) -> int | None:
        """Store one measured batch in one transaction; returns the batch id (None for an empty batch).

        Each item is a :class:`Record` (or a mapping/tuple of its fields). Everything is validated before
        the transaction starts; the batch is then stored completely or not at all.
        """
        rows = [prepare_row(r, now_us()) for r in records]
        if not rows:
            return None
        batch_id, wids, tids = self._write(lambda conn: self._store_rows(conn, rows))
        # cache ids only once committed: a rolled-back insert must not leave a dangling target id behind
        self._workload_ids.update(wids)
        self._target_ids.update(tids)
        return batch_id

    @_translated
    def commit_and_claim(self, records: Iterable[Any], job_id: int, wanted: Iterable[tuple]) -> list[list[str]]:
        """One step of a tuning driver in one write transaction: store the ``records`` that arrived (as
        ``commit_records``) and claim the programs it is about to measure (as ``claim``), ``wanted`` being
        ``(workload, target, program_hashes, budget)`` tuples. Returns the hashes granted, per tuple.
        (Two transactions per measured trial were a third of the driver's CPU per trial.)"""
        rows = [prepare_row(r, now_us()) for r in records]
        asks = [(w, t, claims.program_hashes(h), b) for w, t, h, b in wanted]
        job_id = opt_int(job_id, "job_id")

        def txn(conn):
            stored = self._store_rows(conn, rows) if rows else (None, {}, {})
            return stored, [self._claim_in(conn, job_id, w, t, h, b) for w, t, h, b in asks]

        (_, wids, tids), granted = self._write(txn)
        self._workload_ids.update(wids)
        self._target_ids.update(tids)
        return granted

    def _store_rows(self, conn: sqlite3.Connection, rows: list[tuple]) -> tuple[int, dict, dict]:
        """Insert prepared rows as one batch; returns (batch id, workload ids, target ids) it used."""
        job_ids = {r[2] for r in rows}
        wids, tids = {}, {}
        for key in {r[0] for r in rows}:
            wid = self._workload_ids.get(key)
            if wid is None:
                row = conn.execute("SELECT id FROM workloads WHERE key = ?", (key,)).fetchone()
                if row is None:
                    raise UnknownWorkloadError(
                        f"workload key {key!r} is not in {self.path!r}; call commit_workload first")
                wid = row[0]
            wids[key] = wid
        for target in {r[1] for r in rows}:
            tid = self._target_ids.get(target)
            if tid is None:
                conn.execute("INSERT INTO targets (target) VALUES (?) ON CONFLICT DO NOTHING", (target,))
                tid = conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()[0]
            tids[target] = tid
        for job in job_ids - {None}:  # a commit is a sign of life; a job that does not exist refuses the batch
            if conn.execute("UPDATE jobs SET heartbeat_us = CASE WHEN status = 'running' THEN ? ELSE heartbeat_us "
                            "END WHERE id = ?", (now_us(), job)).rowcount == 0:
                raise UnknownJobError(f"no job with id {job!r} in {self.path!r}; call start_job first")
        batch_job = next(iter(job_ids)) if len(job_ids) == 1 else None
        batch_id = conn.execute(
            "INSERT INTO batches (uid, job_id, n_records, created_us) VALUES (?, ?, ?, ?) RETURNING id",
            (uuid.uuid4().hex, batch_job, len(rows), now_us())).fetchone()[0]
        trials = self._number_trials(conn, [(wids[r[0]], tids[r[1]], r[3]) for r in rows])
        values = [(uuid.uuid4().hex, wids[r[0]], tids[r[1]], r[2], batch_id, t, *r[4:]) for r, t in zip(rows, trials)]
        for i in range(0, len(values), ROWS_PER_INSERT):  # one statement (one round trip) per chunk of rows
            chunk = values[i:i + ROWS_PER_INSERT]
            conn.execute(insert_records(len(chunk)), [v for row in chunk for v in row])
        return batch_id, wids, tids

    @staticmethod
    def _number_trials(conn, rows: list[tuple]) -> list[int]:
        """Trial numbers of ``(workload id, target id, trial or None)`` rows in commit order: a None takes the
        count of records of its workload and target so far (``record_counts``, read inside the write
        transaction, so concurrent jobs number their trials uniquely), each row before it counting one."""
        counts: dict[tuple[int, int], int] = {}
        out = []
        for wid, tid, trial in rows:
            if (wid, tid) not in counts:
                row = conn.execute("SELECT n FROM record_counts WHERE workload_id = ? AND target_id = ?",
                                   (wid, tid)).fetchone()
                counts[wid, tid] = row[0] if row else 0
            out.append(counts[wid, tid] if trial is None else trial)
            counts[wid, tid] += 1
        return out

    def _tuning_record(self, row: tuple, w: WorkloadInfo, target: str) -> TuningRecord:
        rid, trace, phash, status, run_json, build, error, host, job, trial, created = row[:11]
        result = MeasureResult(MeasureStatus(status), json.loads(run_json), build, error, host)
        return TuningRecord(rid, w.key, w.name, target, trace_from_text(trace), phash, result, job, trial,
                            us_to_datetime(created), w.flop, *provenance.record_fields(row[11:]))

    @_translated
    def top_k(self, workload: Any, k: int = 10, target: str | None = None) -> list[TuningRecord]:
        """The ``k`` fastest successful records of a workload on one target, fastest first.

        With ``target=None`` the workload's only target is used; if it has records under several targets,
        :class:`AmbiguousTargetError` is raised (a latency from one CPU must not be applied to another).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be an integer >= 0, got {k!r}")
        conn = self._conn()
        w = self._workload(conn, workload)
        tid, target = self._query_target(conn, w, target)
        if tid is None or k == 0:
            return []
        rows = conn.execute(
            _SELECT_RECORD + "WHERE r.workload_id = ? AND r.target_id = ? AND r.status = 'ok' "
            "ORDER BY " + provenance.TRUSTED_ORDER + " LIMIT ?", (w.workload_id, tid, k)).fetchall()
        return [self._tuning_record(r, w, target) for r in rows]

    def best(self, workload: Any, target: str | None = None) -> TuningRecord | None:
        """The fastest successful record of a workload on one target (failures never count), or None.

        ``target=None`` works as in :meth:`top_k`: inferred if unique, else :class:`AmbiguousTargetError`.
        """
        top = self.top_k(workload, 1, target=target)
        return top[0] if top else None

    @_translated
    def measured_hashes(self, workload: Any, target: str) -> set[str]:
        """Program hashes already measured (any status) for a workload on a target: a resumed job skips them."""
        conn = self._conn()
        w = self._workload(conn, workload)
        tid = self._target_id(conn, target)
        if tid is None:
            return set()
        return {h for (h,) in conn.execute(
            "SELECT DISTINCT program_hash FROM records WHERE workload_id = ? AND target_id = ? "
            "AND program_hash IS NOT NULL", (w.workload_id, tid))}

    @_translated
    def count_records(self, workload: Any = None, target: str | None = None, job: int | None = None) -> int:
        """Number of stored records, optionally of one workload, target and/or job id."""
        conn = self._conn()
        where, params = [], []
        if workload is not None:
            where.append("workload_id = ?")
            params.append(self._workload(conn, workload).workload_id)
        if target is not None:
            tid = self._target_id(conn, target)
            if tid is None:
                return 0
            where.append("target_id = ?")
            params.append(tid)
        if job is not None:
            where.append("job_id = ?")
            params.append(opt_int(job, "job"))
        sql = "SELECT count(*) FROM records" + (" WHERE " + " AND ".join(where) if where else "")
        return conn.execute(sql, params).fetchone()[0]

    @_translated
    def targets(self, workload: Any = None) -> list[str]:
        """Targets that have records (of one workload, if given), sorted."""
        conn = self._conn()
        if workload is None:
            return [t for (t,) in conn.execute("SELECT target FROM targets ORDER BY target")]
        wid = self._workload(conn, workload).workload_id
        return [t for (t,) in conn.execute(
            "SELECT t.target FROM targets t WHERE EXISTS "
            "(SELECT 1 FROM records r WHERE r.workload_id = ? AND r.target_id = t.id) ORDER BY t.target", (wid,))]

    # -- pandas views ------------------------------------------------------------------------------------
    @_translated
    def records(self, workload: Any = None, target: str | None = None, status: Any = None, decisions: bool = True):
        """All matching records as a typed ``pandas.DataFrame`` (see :func:`tunefarm.database.query.records_frame`),
        with a ``decision_<index>_<instruction>`` column per sampling decision unless ``decisions=False``."""
        from tunefarm.database import query  # on use: pandas stays out of `import tunefarm.database`

        self._store_dead_jobs()
        conn = self._conn()
        wid = None if workload is None else self._workload(conn, workload).workload_id
        return query.records_frame(conn, workload_id=wid, target=target, status=status, decisions=decisions)

    @_translated
    def workloads(self):
        """Workloads as a ``pandas.DataFrame`` (key, name, FLOP count, record counts, IR JSON)."""
        from tunefarm.database import query  # on use: pandas stays out of `import tunefarm.database`

        return query.workloads_frame(self._conn())

    @_translated
    def jobs(self):
        """Jobs as a ``pandas.DataFrame`` (name, status, start/finish times, config JSON, record count)."""
        from tunefarm.database import query  # on use: pandas stays out of `import tunefarm.database`

        self._store_dead_jobs()
        return query.jobs_frame(self._conn())

    # -- moving results between machines -----------------------------------------------------------------
    @_translated
    def export(self, path: str | os.PathLike, top_k: int | None = None) -> dict[str, int]:
        """Write workloads, jobs, batches and records as JSON lines (with ``top_k``: only the ``top_k`` best
        records per workload and target, their workloads and jobs); returns counts per kind."""
        from tunefarm.database import jsonl  # on use: jsonl checks traces with the schedule layer

        return jsonl.export_jsonl(self._conn(), os.fspath(path), top_k)

    @_translated
    def import_(self, path: str | os.PathLike) -> dict[str, int]:
        """Merge a JSON-lines export (one transaction, idempotent); returns counts of *new* rows per kind."""
        from tunefarm.database import jsonl  # on use: jsonl checks traces with the schedule layer

        out = self._write(lambda conn: jsonl.import_jsonl(conn, os.fspath(path)))
        self._target_ids.clear()
        return out


class Database(SqlDatabase):
    """The SQLite trace database (WAL mode, versioned schema) at ``path`` (see ``SqlDatabase`` for the arguments
    every method accepts).

    ``create=False`` refuses to create a missing file. ``readonly=True`` (the commands that only read) never
    writes, and also reads a database on a read-only filesystem; every write then fails with a DatabaseError.
    Connections are per process and per thread; pickling keeps only the path and options.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = True, timeout: float = 60.0,
                 readonly: bool = False):
        self.path = os.fspath(path)
        if not isinstance(self.path, str) or not self.path.strip():
            raise DatabaseError(f"a database path must name a file, got {self.path!r}")
        self.timeout = float(timeout)
        self._create = create and not readonly
        self._readonly = readonly
        self._init_connections()
        self._conn()  # open now: a bad file fails here, not at the first query

    def _open(self) -> sqlite3.Connection:
        return open_connection(self.path, create=self._create, timeout=self.timeout, readonly=self._readonly)

    def __getstate__(self) -> dict:
        return {"path": self.path, "timeout": self.timeout, "create": self._create, "readonly": self._readonly}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"], create=state["create"], timeout=state["timeout"],
                      readonly=state.get("readonly", False))

    def __repr__(self) -> str:
        return f"Database({self.path!r})"

    def _write(self, fn):
        return write_transaction(self._conn(), fn, self.timeout)

    def _call(self, method, args, kwargs):
        with sqlite_errors(self.path):
            return method(self, *args, **kwargs)
