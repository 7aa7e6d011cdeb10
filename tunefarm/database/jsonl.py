"""JSON-lines export/import: how tuning results move between machines.

One JSON object per line, tagged by ``"type"``: a header, then workloads, jobs, batches and records (in
that order, so a reader can resolve references as it goes). Rows carry stable identities (workload key,
job/batch/record ``uid``), so importing the same file twice adds nothing the second time. An export is
untrusted input: results are validated like freshly measured ones, and every workload and trace must prove
it is a real program (``import_check``); a record may not join a batch stored before (batches are stored
whole); a record of a program already measured on its target is skipped (and counted). One bad line, or one
longer than ``MAX_LINE_BYTES``, refuses the whole file with a one-line reason naming the line, and leaves the
database as it was.
"""
from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

from tunefarm.database import confirmed as confirmed_figures
from tunefarm.database import import_check, prune
from tunefarm.database.errors import DatabaseError, InvalidRecordError, InvalidTraceError
from tunefarm.database.records import Record, nonempty_str, opt_int, prepare_row
from tunefarm.database.provenance import JOB_COLUMNS
from tunefarm.database.schema import CURRENT_VERSION, INSERT_RECORD_OR_IGNORE
from tunefarm.runtime.measure_result import MeasureResult

FORMAT = "tunefarm-db-export"
FORMAT_VERSION = 1
_CHUNK = 2000
# one line of an export (a workload's IR JSON, a record's trace): the largest built-in workload's line is under
# 100 kB; a longer line is refused unread
MAX_LINE_BYTES = 8 << 20
# who ran a job (``liveness``): optional in a job line; a pid means something only in its own ``pid_space``
_JOB_DRIVER = ("pid", "host", "pid_space", "pid_start", "heartbeat_us")
_JOB_DRIVER_TYPES = (int, str, str, int, int)
_CONFIRMED = ("confirmed_secs", "confirmed_p10_secs", "confirmed_p90_secs")  # optional in a record line
_MAX_VERSION_TEXT = 100  # a version string or a CPU model name longer than this is not one


def _dump(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def export_jsonl(conn: sqlite3.Connection, path: str, top_k: int | None = None) -> dict[str, int]:
    """Write the whole database to ``path`` from one consistent snapshot (a read transaction); with ``top_k``
    only the ``top_k`` best records of each workload and target, their workloads and jobs (``prune.py``)."""
    counts = {"workloads": 0, "jobs": 0, "batches": 0, "records": 0}
    where = prune.filters(top_k)
    conn.execute("BEGIN")
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(_dump({"type": FORMAT, "version": FORMAT_VERSION, "schema_version": CURRENT_VERSION}))
            for key, name, ir, flop, created in conn.execute(
                    "SELECT key, name, ir_json, flop, created_us FROM workloads" + where["workloads"][0]
                    + " ORDER BY id", where["workloads"][1]):
                f.write(_dump({"type": "workload", "key": key, "name": name, "ir_json": ir, "flop": flop,
                               "created_us": created}))
                counts["workloads"] += 1
            for uid, name, config, started, finished, status, *driver in conn.execute(
                    "SELECT uid, name, config_json, started_us, finished_us, status, "
                    + ", ".join(_JOB_DRIVER + JOB_COLUMNS) + " FROM jobs" + where["jobs"][0] + " ORDER BY id",
                    where["jobs"][1]):
                f.write(_dump({"type": "job", "uid": uid, "name": name, "config": json.loads(config),
                               "started_us": started, "finished_us": finished, "status": status,
                               **dict(zip(_JOB_DRIVER + JOB_COLUMNS, driver))}))
                counts["jobs"] += 1
            for uid, job, n, created in conn.execute(
                    "SELECT b.uid, j.uid, b.n_records, b.created_us FROM batches b "
                    "LEFT JOIN jobs j ON j.id = b.job_id " + ("WHERE 0 = 1 " if top_k else "") + "ORDER BY b.id"):
                f.write(_dump({"type": "batch", "uid": uid, "job": job, "n_records": n, "created_us": created}))
                counts["batches"] += 1
            for (uid, wkey, target, job, batch, trial, trace, phash, status, run_json, build, error, host,
                 created, version, cpu, *confirmed) in conn.execute(
                    "SELECT r.uid, w.key, t.target, j.uid, b.uid, r.trial, r.trace_json, r.program_hash, r.status, "
                    "r.run_secs_json, r.build_secs, r.error, r.host, r.created_us, r.model_version, r.cpu_model, "
                    + ", ".join("r." + c for c in _CONFIRMED) + " FROM records r "
                    "JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id "
                    "LEFT JOIN jobs j ON j.id = r.job_id LEFT JOIN batches b ON b.id = r.batch_id"
                    + where["records"][0] + " ORDER BY r.id", where["records"][1]):
                line = _dump({"type": "record", "uid": uid, "workload": wkey, "target": target, "job": job,
                              "batch": None if top_k else batch, "trial": trial, "program_hash": phash,
                              "status": status, "build_secs": build, "error": error, "host": host,
                              "created_us": created, "model_version": version, "cpu_model": cpu,
                              **dict(zip(_CONFIRMED, confirmed))})
                # stored trace / run-time texts are already compact JSON: splice them instead of re-encoding
                f.write(f'{line[:-2]},"run_secs":{run_json},"trace":{trace}}}\n')
                counts["records"] += 1
    finally:
        conn.execute("COMMIT")
    return counts


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_result_fields(d: dict) -> None:
    """A record's result fields have their exported types (nothing is converted: a record is stored as written)."""
    for field, ok in (("error", lambda v: v is None or isinstance(v, str)),
                      ("host", lambda v: v is None or isinstance(v, str)),
                      ("build_secs", lambda v: v is None or _is_number(v)),
                      ("run_secs", lambda v: v is None or isinstance(v, list) and all(map(_is_number, v)))):
        if not ok(d.get(field)):
            raise InvalidRecordError(f"{field} has the wrong type: {d.get(field)!r}"[:200])


_CONFIRM_BY_UID = ("UPDATE records SET confirmed_secs = ?, confirmed_p10_secs = ?, confirmed_p90_secs = ? "
                   "WHERE uid = ? AND confirmed_secs IS NULL")


class _Importer:
    """Resolves references line by line and inserts with ON CONFLICT DO NOTHING (idempotent)."""

    def __init__(self, conn: sqlite3.Connection, path: str):
        self.conn, self.path = conn, path
        self.new = {"workloads": 0, "jobs": 0, "batches": 0, "records": 0, "skipped": 0}
        self.new_batches: set[str] = set()   # batches this import created: the only ones records may join
        self.programs: set[tuple] = set()    # (workload id, target id, program hash) this import stores
        self.workloads: dict[str, int] = {}
        self.jobs: dict[str, int] = {}
        self.batches: dict[str, int] = {}
        self.targets: dict[str, int] = {}
        self.ir_texts: dict[str, str] = {}  # workload key -> its IR JSON text (this file's, or the stored one)
        self.pending: list[tuple] = []
        self.confirmed: list[tuple] = []     # (median, p10, p90, record uid) of the records this import stores

    # references: rows of this file, or rows already in the database
    def _ref(self, cache: dict, sql: str, value: Any, what: str, lineno: int) -> int | None:
        if value is None:
            return None
        if value not in cache:
            row = self.conn.execute(sql, (value,)).fetchone()
            if row is None:
                raise InvalidRecordError(f"{self.path}:{lineno}: unknown {what} {value!r} (not defined above)")
            cache[value] = row[0]
        return cache[value]

    def workload(self, d: dict, lineno: int) -> None:
        key, name = nonempty_str(d.get("key"), "workload key"), nonempty_str(d.get("name"), "workload name")
        ir = d.get("ir_json")
        if not isinstance(ir, str):
            raise InvalidRecordError("ir_json must be JSON text")
        import_check.workload_func(key, ir)
        self.ir_texts[key] = ir
        flop = d.get("flop")
        if flop is not None and (isinstance(flop, bool) or not isinstance(flop, (int, float))
                                 or not math.isfinite(flop) or flop < 0):
            raise InvalidRecordError(f"flop must be a finite number >= 0 or null, got {flop!r}")
        cur = self.conn.execute(
            "INSERT INTO workloads (key, name, ir_json, flop, created_us) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (key, name, ir, None if flop is None else float(flop), int(d["created_us"])))
        self.new["workloads"] += cur.rowcount
        self.workloads.pop(key, None)

    def job(self, d: dict, lineno: int) -> None:
        uid = nonempty_str(d.get("uid"), "job uid")
        finished = d.get("finished_us")
        known = self.conn.execute("SELECT 1 FROM jobs WHERE uid = ?", (uid,)).fetchone() is not None
        config = json.dumps(d.get("config") or {}, sort_keys=True, separators=(",", ":"), allow_nan=False)
        # a job seen running elsewhere and finished since: take the newer state, never the older
        driver = [d.get(k) for k in _JOB_DRIVER + JOB_COLUMNS]  # versions: absent from older exports
        for k, v, t in zip(_JOB_DRIVER + JOB_COLUMNS, driver, _JOB_DRIVER_TYPES + (str,) * len(JOB_COLUMNS)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, t)):
                raise InvalidRecordError(f"job {k} must be {t.__name__} or null, got {v!r}"[:200])
        for k, v in zip(JOB_COLUMNS, driver[len(_JOB_DRIVER):]):
            if v is not None and not 0 < len(v) <= _MAX_VERSION_TEXT:
                raise InvalidRecordError(f"job {k} must be a version string, got {v!r}"[:200])
        self.conn.execute(
            "INSERT INTO jobs (uid, name, config_json, started_us, finished_us, status, "
            + ", ".join(_JOB_DRIVER + JOB_COLUMNS) + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(uid) DO UPDATE SET finished_us = excluded.finished_us, status = excluded.status "
            "WHERE jobs.finished_us IS NULL AND excluded.finished_us IS NOT NULL",
            (uid, nonempty_str(d.get("name"), "job name"), config, int(d["started_us"]),
             None if finished is None else int(finished), nonempty_str(d.get("status"), "job status"), *driver))
        self.new["jobs"] += not known

    def batch(self, d: dict, lineno: int) -> None:
        uid = nonempty_str(d.get("uid"), "batch uid")
        job = self._ref(self.jobs, "SELECT id FROM jobs WHERE uid = ?", d.get("job"), "job", lineno)
        n = d.get("n_records")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidRecordError(f"n_records must be a positive integer, got {n!r}")
        cur = self.conn.execute(
            "INSERT INTO batches (uid, job_id, n_records, created_us) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (uid, job, n, int(d["created_us"])))
        self.new["batches"] += cur.rowcount
        if cur.rowcount:
            self.new_batches.add(uid)

    def record(self, d: dict, lineno: int) -> None:
        uid = nonempty_str(d.get("uid"), "record uid")
        _check_result_fields(d)
        result = MeasureResult.from_dict(d)
        created = d.get("created_us")
        if opt_int(created, "created_us") is None:
            raise InvalidRecordError("created_us must be an integer, got null")
        cpu = d.get("cpu_model")  # absent from older exports
        if cpu is not None and (not isinstance(cpu, str) or not 0 < len(cpu) <= _MAX_VERSION_TEXT):
            raise InvalidRecordError(f"cpu_model must be a CPU model name or null, got {cpu!r}"[:200])
        row = prepare_row(Record(d.get("workload"), d.get("trace"), d.get("program_hash"), d.get("target"),
                                 result, None, d.get("trial"), model_version=d.get("model_version"),
                                 cpu_model=cpu), created)
        if row[3] is None:
            raise InvalidRecordError("trial must be an integer >= 0, got null")
        wid = self._ref(self.workloads, "SELECT id FROM workloads WHERE key = ?", row[0], "workload", lineno)
        import_check.check_run_secs(result.status.value, result.run_secs)
        import_check.check_no_run_secs_on_build_error(result.status.value, result.run_secs)
        import_check.check_latency(row[0], self._ir_text(row[0]), row[1], result.run_secs)
        phash = import_check.checked_program_hash(row[0], self._ir_text(row[0]), row[4], row[5])
        row = (*row[:5], phash, *row[6:])
        if row[1] not in self.targets:
            self.conn.execute("INSERT INTO targets (target) VALUES (?) ON CONFLICT DO NOTHING", (row[1],))
        tid = self._ref(self.targets, "SELECT id FROM targets WHERE target = ?", row[1], "target", lineno)
        job = self._ref(self.jobs, "SELECT id FROM jobs WHERE uid = ?", d.get("job"), "job", lineno)
        batch = self._ref(self.batches, "SELECT id FROM batches WHERE uid = ?", d.get("batch"), "batch", lineno)
        if self._measured(wid, tid, phash):  # the rule of tuning: a program is measured once per target
            self.new["skipped"] += 1
            return
        if batch is not None and d["batch"] not in self.new_batches:
            raise InvalidRecordError(f"record {uid!r} joins batch {d['batch']!r}, which is already stored with "
                                     "its records (a batch is stored whole, in one transaction)"[:300])
        figure = self._confirmed(d, result.status.value)
        if figure is not None:
            import_check.check_latency(row[0], self._ir_text(row[0]), row[1], list(figure))
            self.confirmed.append((*figure, uid))
        self.programs.add((wid, tid, phash))
        self.pending.append((uid, wid, tid, job, batch, *row[3:]))
        if len(self.pending) >= _CHUNK:
            self.flush()

    @staticmethod
    def _confirmed(d: dict, status: str) -> tuple | None:
        """A record line's confirmed figure (all three fields or none; only on an ok record), checked."""
        values = [d.get(k) for k in _CONFIRMED]
        if all(v is None for v in values):
            return None
        if status != "ok" or not all(_is_number(v) for v in values):
            raise InvalidRecordError(f"a confirmed figure needs an ok record and three numbers, got {values!r}"[:200])
        return confirmed_figures.checked(*values)

    def _measured(self, wid: int, tid: int, phash: str) -> bool:
        """Whether the database, or this import, already holds a record of the program on the target."""
        return (wid, tid, phash) in self.programs or self.conn.execute(
            "SELECT 1 FROM records WHERE workload_id = ? AND target_id = ? AND program_hash = ? LIMIT 1",
            (wid, tid, phash)).fetchone() is not None

    def _ir_text(self, key: str) -> str:
        if key not in self.ir_texts:
            self.ir_texts[key] = self.conn.execute("SELECT ir_json FROM workloads WHERE key = ?", (key,)).fetchone()[0]
        return self.ir_texts[key]

    def flush(self) -> None:
        if self.pending:
            # rowcount counts the inserted rows only (total_changes would add the rows the triggers update)
            self.new["records"] += self.conn.executemany(INSERT_RECORD_OR_IGNORE, self.pending).rowcount
            self.pending.clear()
        if self.confirmed:  # figures of the records just stored (a record already here keeps its own)
            self.conn.executemany(_CONFIRM_BY_UID, self.confirmed)
            self.confirmed.clear()


def _lines(f, path: str):
    """The file's lines, each taken with a bounded read: a line over ``MAX_LINE_BYTES`` is refused before it is
    held whole or parsed (a 150 MB line took 626 MB of memory to refuse)."""
    lineno = 0
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidRecordError(f"{path}:{lineno}: line longer than {MAX_LINE_BYTES >> 20} MiB, the limit of "
                                     "one line of an export")
        yield raw


def import_jsonl(conn: sqlite3.Connection, path: str) -> dict[str, int]:
    """Merge an export into the database; the caller holds the write transaction (all or nothing). Returns the
    new rows per kind, and ``skipped``: records of programs already measured on their target (here or earlier in
    the file), left out as tuning would never measure them again."""
    imp = _Importer(conn, path)
    handlers = {"workload": imp.workload, "job": imp.job, "batch": imp.batch, "record": imp.record}
    try:
        f = open(path, "rb")
    except OSError as e:
        raise DatabaseError(f"cannot read export {path!r}: {e}") from None
    with f:
        header_seen = False
        for lineno, raw in enumerate(_lines(f, path), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidRecordError(f"{path}:{lineno}: not UTF-8 text (a binary file?)") from None
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except ValueError as e:
                raise InvalidRecordError(f"{path}:{lineno}: not a JSON line ({e})") from None
            except RecursionError:
                raise InvalidRecordError(f"{path}:{lineno}: JSON nested too deeply") from None
            if not isinstance(d, dict):
                raise InvalidRecordError(f"{path}:{lineno}: expected a JSON object")
            if "\\ud" in line.lower():  # an escaped surrogate: only a pair of them is a character SQLite can store
                try:
                    json.dumps(d, ensure_ascii=False).encode("utf-8")
                except UnicodeEncodeError:
                    raise InvalidRecordError(f"{path}:{lineno}: text with a lone surrogate (\\ud800-\\udfff)") from None
            if not header_seen:
                if d.get("type") != FORMAT:
                    raise InvalidRecordError(f"{path}:{lineno}: not a tunefarm export (no {FORMAT!r} header)")
                if not isinstance(d.get("version"), int) or d["version"] > FORMAT_VERSION:
                    raise InvalidRecordError(
                        f"{path}: export format version {d.get('version')!r} is newer than this tunefarm reads")
                header_seen = True
                continue
            kind = d.get("type")
            handler = handlers.get(kind) if isinstance(kind, str) else None
            if handler is None:
                raise InvalidRecordError(f"{path}:{lineno}: unknown line type {kind!r}"[:300])
            try:
                handler(d, lineno)
            except (InvalidRecordError, InvalidTraceError) as e:
                msg = str(e)
                raise type(e)(msg if msg.startswith(path) else f"{path}:{lineno}: {msg}") from None
            except (KeyError, TypeError, ValueError, OverflowError, RecursionError) as e:
                raise InvalidRecordError(f"{path}:{lineno}: bad {d.get('type')} line: {e!r}"[:400]) from None
        if not header_seen:
            raise InvalidRecordError(f"{path}: empty file, not a tunefarm export")
    imp.flush()
    return imp.new
