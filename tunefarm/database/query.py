"""pandas views of the database, with stable column names and dtypes.

One SQL statement per view (one consistent snapshot), converted column by column with explicit dtypes so
that an empty result has the same schema as a full one and downstream code (reports, notebooks, the CLI)
can rely on it. Latencies are microseconds; failures have NaN latencies; times are naive UTC.
"""
from __future__ import annotations

import contextlib
import gc
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from tunefarm.database import liveness
from tunefarm.database.decisions import decision_columns
from tunefarm.runtime.measure_result import MeasureStatus

STATUS_DTYPE = pd.CategoricalDtype([s.value for s in MeasureStatus])

# column name -> dtype, in order; records_frame() documents their meaning
RECORD_COLUMNS: dict[str, Any] = {
    "record_id": "int64",
    "workload": "str",
    "workload_key": "str",
    "target": "str",
    "status": STATUS_DTYPE,
    "median_us": "float64",
    "mean_us": "float64",
    "min_us": "float64",
    "gflops": "float64",
    "trial": "int64",
    "job_id": "Int64",
    "job": "str",
    "job_status": "str",
    "host": "str",
    "created": "datetime64[ns]",
    "build_secs": "float64",
    "error": "str",
    "program_hash": "str",
    "trace_json": "str",
    "repeats": "int64",
    "model_version": "Int64",
    "confirmed_us": "float64",
    "confirmed_p10_us": "float64",
    "confirmed_p90_us": "float64",
    "cpu_model": "str",
    "tunefarm_version": "str",
    "llvmlite_version": "str",
    "llvm_version": "str",
}

_RECORDS_SQL = (
    "SELECT r.id, w.name, w.key, t.target, r.status, r.median_secs, r.mean_secs, r.min_secs, w.flop, r.trial, "
    "r.job_id, j.name, r.host, r.created_us, r.build_secs, r.error, r.program_hash, r.trace_json, "
    "json_array_length(r.run_secs_json), r.model_version, r.confirmed_secs, r.confirmed_p10_secs, "
    "r.confirmed_p90_secs, r.cpu_model, j.tunefarm_version, j.llvmlite_version, j.llvm_version "
    "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id "
    "LEFT JOIN jobs j ON j.id = r.job_id")


@contextlib.contextmanager
def _gc_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _columns(rows: list[tuple], n: int) -> list[tuple]:
    return list(zip(*rows)) if rows else [()] * n


def _floats(col: Iterable) -> np.ndarray:
    return np.array(col, dtype="float64") if len(col) else np.empty(0, "float64")  # None -> NaN


def _times(col: Iterable, nullable: bool = False) -> np.ndarray:
    if nullable:
        us = np.array([-2**63 if v is None else v for v in col], dtype="int64")  # int64 min is NaT
    else:
        us = np.array(col, dtype="int64")
    return us.astype("datetime64[us]").astype("datetime64[ns]")


def _strs(col: Iterable) -> pd.Series:
    return pd.Series(list(col), dtype="str")


def _statuses(status: Any) -> list[str]:
    if isinstance(status, (str, MeasureStatus)):
        status = [status]
    return [MeasureStatus(s).value for s in status]


def records_frame(conn: sqlite3.Connection, workload_id: int | None = None, target: str | None = None,
                  status: Any = None, decisions: bool = True) -> pd.DataFrame:
    """Records in commit order, one row each, with the columns of ``RECORD_COLUMNS``:

    ``workload`` (name) / ``workload_key``, ``target``, ``status`` (categorical of MeasureStatus values),
    ``median_us`` / ``mean_us`` / ``min_us`` (NaN unless ok), ``gflops`` (flop / median seconds / 1e9;
    NaN if unknown), ``trial`` (trial index given by the search), ``job_id`` / ``job`` (name), ``host``,
    ``job_status`` (the job's state: running, finished, killed, stale, ...; see ``Database.jobs``),
    ``created`` (naive UTC), ``build_secs``, ``error``, ``program_hash``, ``trace_json`` (compact JSON text;
    ``json.loads`` it, or use ``Database.top_k`` for parsed traces), ``repeats`` (timing repeats recorded:
    fewer than asked when the early stop cut a slow candidate short), ``model_version`` (the cost model version
    that chose the candidate: 0 before the first model was trained; empty for records written without one),
    ``confirmed_us`` / ``confirmed_p10_us`` / ``confirmed_p90_us`` (its re-timing among its workload's best on a
    quiet host, ``tuning/confirm.py``; NaN if never confirmed), ``cpu_model`` (the timing host's CPU model name)
    and the code generator that built it: ``tunefarm_version``, ``llvmlite_version``, ``llvm_version`` (its job's).
    ``status`` may be one value or several.
    With ``decisions`` one more column per sampling decision follows, e.g. ``decision_2_sample_perfect_tile``
    (see ``decisions.py``).
    """
    where, params = [], []
    if workload_id is not None:
        where.append("r.workload_id = ?")
        params.append(workload_id)
    if target is not None:
        where.append("t.target = ?")
        params.append(target)
    if status is not None:
        wanted = _statuses(status)
        where.append(f"r.status IN ({', '.join('?' * len(wanted))})" if wanted else "0 = 1")
        params.extend(wanted)
    sql = _RECORDS_SQL + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY r.id"
    with _gc_paused():  # 100k rows of tuples: the cyclic GC would rescan them over and over
        rows = conn.execute(sql, params).fetchall()
        (rid, wname, wkey, tgt, st, med, mean, mn, flop, trial, job_id, job, host, created, build, error, phash,
         trace, repeats, version, conf, conf10, conf90, cpu, tf_v, llvmlite_v, llvm_v) = _columns(rows, 27)
        del rows
    states = _job_states(conn)
    med_s = _floats(med)
    with np.errstate(divide="ignore", invalid="ignore"):
        gflops = _floats(flop) / med_s / 1e9
    data = {
        "record_id": np.array(rid, dtype="int64"),
        "workload": _strs(wname),
        "workload_key": _strs(wkey),
        "target": _strs(tgt),
        "status": pd.Categorical(list(st), dtype=STATUS_DTYPE),
        "median_us": med_s * 1e6,
        "mean_us": _floats(mean) * 1e6,
        "min_us": _floats(mn) * 1e6,
        "gflops": gflops,
        "trial": np.array(trial, dtype="int64"),
        "job_id": pd.array(list(job_id), dtype="Int64"),
        "job": _strs(job),
        "job_status": _strs(None if j is None else states.get(j) for j in job_id),
        "host": _strs(host),
        "created": _times(created),
        "build_secs": _floats(build),
        "error": _strs(error),
        "program_hash": _strs(phash),
        "trace_json": _strs(trace),
        "repeats": np.array(repeats, dtype="int64"),
        "model_version": pd.array(list(version), dtype="Int64"),
        "confirmed_us": _floats(conf) * 1e6,
        "confirmed_p10_us": _floats(conf10) * 1e6,
        "confirmed_p90_us": _floats(conf90) * 1e6,
        "cpu_model": _strs(cpu),
        "tunefarm_version": _strs(tf_v),
        "llvmlite_version": _strs(llvmlite_v),
        "llvm_version": _strs(llvm_v),
    }
    frame = pd.DataFrame(data, columns=list(RECORD_COLUMNS))
    if decisions:
        for name, values in decision_columns(trace).items():
            frame[name] = pd.Series(values, dtype=object)
    return frame


def workloads_frame(conn: sqlite3.Connection) -> pd.DataFrame:
    """One row per workload: ``workload_id``, ``key``, ``name``, ``flop``, ``n_records``, ``n_ok``,
    ``created`` and ``ir_json`` (canonical IR JSON text)."""
    rows = conn.execute(
        "SELECT w.id, w.key, w.name, w.flop, coalesce(c.n, 0), coalesce(c.n_ok, 0), w.created_us, w.ir_json "
        "FROM workloads w LEFT JOIN (SELECT workload_id, count(*) AS n, sum(CASE WHEN status = 'ok' THEN 1 ELSE 0 END) AS n_ok "
        "FROM records GROUP BY workload_id) c ON c.workload_id = w.id ORDER BY w.id").fetchall()
    wid, key, name, flop, n, n_ok, created, ir = _columns(rows, 8)
    return pd.DataFrame({
        "workload_id": np.array(wid, dtype="int64"),
        "key": _strs(key),
        "name": _strs(name),
        "flop": _floats(flop),
        "n_records": np.array(n, dtype="int64"),
        "n_ok": np.array(n_ok, dtype="int64"),
        "created": _times(created),
        "ir_json": _strs(ir),
    })




def _job_states(conn: sqlite3.Connection) -> dict[int, str]:
    """Job id -> its state as ``liveness.job_state`` decides it now (a killed driver's job is ``killed``)."""
    now = time.time_ns() // 1000
    return {jid: liveness.job_state(*state, now)
            for jid, *state in conn.execute("SELECT j.id, " + liveness.JOB_STATE_SQL + " FROM jobs j")}


def jobs_frame(conn: sqlite3.Connection) -> pd.DataFrame:
    """One row per job: ``job_id``, ``uid``, ``name``, ``status``, ``started``, ``finished`` (NaT while
    running), ``n_records``, ``config_json``, the driver's ``host``, ``pid`` and last ``heartbeat``, and the versions
    of the code generator it ran (``tunefarm_version``, ``llvmlite_version``, ``llvm_version``; see provenance).

    ``status`` is the job's state now (``liveness.job_state``): a job whose driver died without finishing it
    reads ``killed`` (``stale`` when that cannot be checked from here and it has not been heard of lately),
    although the stored row still says ``running``."""
    now = time.time_ns() // 1000
    rows = conn.execute(
        "SELECT j.id, j.uid, j.name, " + liveness.JOB_STATE_SQL + ", j.finished_us, "
        "(SELECT count(*) FROM records r WHERE r.job_id = j.id), j.config_json, j.host, j.tunefarm_version, "
        "j.llvmlite_version, j.llvm_version FROM jobs j ORDER BY j.id").fetchall()
    states = [liveness.job_state(*r[3:9], now) for r in rows]
    (jid, uid, name, _status, pid, _space, _start, heartbeat, started, finished, n, config,
     host, tf_v, llvmlite_v, llvm_v) = _columns(rows, 16)
    return pd.DataFrame({
        "job_id": np.array(jid, dtype="int64"),
        "uid": _strs(uid),
        "name": _strs(name),
        "status": _strs(states),
        "started": _times(started),
        "finished": _times(finished, nullable=True),
        "n_records": np.array(n, dtype="int64"),
        "config_json": _strs(config),
        "host": _strs(host),
        "pid": pd.array(list(pid), dtype="Int64"),
        "heartbeat": _times(heartbeat, nullable=True),
        "tunefarm_version": _strs(tf_v),
        "llvmlite_version": _strs(llvmlite_v),
        "llvm_version": _strs(llvm_v),
    })
