"""Claims: how concurrent jobs on one workload and target share its budget and never measure a program twice.

A job *claims* a program (by its program hash) before it sends it to the farm; the claim lives in the
``claims`` table, one row per (workload, target, program hash), so two jobs cannot both hold one. A claim
ends when:

* the program's record is committed (a trigger on ``records`` deletes it, in the commit's transaction),
* the job releases it (``Database.release_claims``: a candidate it decided not to measure after all),
* the job finishes (``finish_job`` deletes what it still holds), or
* the job dies: claims of a job that is not ``running`` by ``liveness.job_state`` (killed, stale, ended)
  count for nothing and are taken over by the next job that claims the same program.

The *budget used* of a workload on a target is its stored records (any status: failures are trials too)
plus the live claims not yet recorded. ``claim(..., budget=N)`` grants claims only while that sum stays at
most ``N``, in the same transaction that checks and writes them, so jobs started together end with exactly
``N`` trials between them.

Each function here is the body of one write (or read) transaction on an open connection; ``Database``
wraps them. They touch a handful of rows through primary keys and indexes (``record_counts`` keeps the
record count, so no call scans the records).
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from tunefarm.database import liveness
from tunefarm.database.errors import InvalidRecordError, JobNotRunningError, UnknownJobError



def program_hashes(hashes: Iterable[str]) -> list[str]:
    """The hashes, validated, duplicates dropped, in the given order."""
    if isinstance(hashes, (str, bytes)):
        raise InvalidRecordError("program_hashes must be a list of hashes, not one string")
    out: dict[str, None] = {}
    for h in hashes:
        if not isinstance(h, str) or not h:
            raise InvalidRecordError(f"a program hash must be a non-empty string, got {h!r}")
        out[h] = None
    return list(out)


def job_state(conn: sqlite3.Connection, job_id: int, now_us: int) -> str:
    row = conn.execute("SELECT " + liveness.JOB_STATE_SQL + " FROM jobs j WHERE j.id = ?", (job_id,)).fetchone()
    if row is None:
        raise UnknownJobError(f"no job with id {job_id!r}")
    return liveness.job_state(*row, now_us)


def live_claims(conn: sqlite3.Connection, workload_id: int, target_id: int, now_us: int,
                exclude_job: int | None = None) -> tuple[int, list[int]]:
    """(claims of live jobs other than ``exclude_job``, ids of the dead jobs that still hold claims here)."""
    live, dead = 0, []
    for job_id, n, *state in conn.execute(
            "SELECT c.job_id, count(*), " + liveness.JOB_STATE_SQL + " "
            "FROM claims c JOIN jobs j ON j.id = c.job_id WHERE c.workload_id = ? AND c.target_id = ? "
            "GROUP BY c.job_id, " + liveness.JOB_STATE_SQL, (workload_id, target_id)):
        if liveness.job_state(*state, now_us) != liveness.RUNNING:
            dead.append(job_id)
        elif job_id != exclude_job:
            live += n
    return live, dead


def record_count(conn: sqlite3.Connection, workload_id: int, target_id: int) -> int:
    row = conn.execute("SELECT n FROM record_counts WHERE workload_id = ? AND target_id = ?",
                       (workload_id, target_id)).fetchone()
    return row[0] if row else 0


def budget_used(conn: sqlite3.Connection, workload_id: int, target_id: int, now_us: int,
                exclude_job: int | None = None) -> int:
    """Stored records plus live claims of jobs other than ``exclude_job`` (all jobs when None)."""
    return record_count(conn, workload_id, target_id) + live_claims(conn, workload_id, target_id, now_us,
                                                                    exclude_job)[0]


def claim(conn: sqlite3.Connection, job_id: int, workload_id: int, target_id: int, hashes: list[str],
          budget: int | None, now_us: int) -> list[str]:
    """The body of ``Database.claim`` (one write transaction): which of ``hashes`` ``job_id`` now holds.

    A handful of statements whatever the number of hashes (each is a round trip to a server store)."""
    returning = ", ".join(liveness.JOB_STATE_COLUMNS)
    row = conn.execute("UPDATE jobs SET heartbeat_us = ? WHERE id = ? RETURNING " + returning,
                       (now_us, job_id)).fetchone()
    if row is None:
        raise UnknownJobError(f"no job with id {job_id!r}")
    state = liveness.job_state(*row, now_us)  # a stale job that claims is alive again: its heartbeat is now
    if state != liveness.RUNNING:  # the transaction rolls back: the heartbeat is not written
        raise JobNotRunningError(f"job {job_id} is {state!r}, not running: it cannot claim programs")
    live, dead = live_claims(conn, workload_id, target_id, now_us)
    if dead:
        conn.executemany("DELETE FROM claims WHERE job_id = ? AND workload_id = ? AND target_id = ?",
                         [(d, workload_id, target_id) for d in dead])
    room = None if budget is None else budget - record_count(conn, workload_id, target_id) - live
    holders, measured = _taken(conn, workload_id, target_id, hashes)
    owned, new = [], []
    for h in hashes:
        if h in holders:
            if holders[h] == job_id:
                owned.append(h)  # already ours: counted in ``live`` above
            continue  # a live job's (dead jobs' claims were deleted above)
        if (room is not None and room <= 0) or h in measured:
            continue  # no budget left, or measured already (by any job, or imported)
        new.append((workload_id, target_id, h, job_id, now_us))
        owned.append(h)
        if room is not None:
            room -= 1
    if new:
        conn.execute("INSERT INTO claims (workload_id, target_id, program_hash, job_id, created_us) VALUES "
                     + ", ".join(["(?, ?, ?, ?, ?)"] * len(new)), [v for row in new for v in row])
    return owned


def _taken(conn: sqlite3.Connection, workload_id: int, target_id: int,
           hashes: list[str]) -> tuple[dict[str, int], set[str]]:
    """(hash -> job holding a claim on it, hashes already measured) among ``hashes``, in one statement."""
    if not hashes:
        return {}, set()
    marks = ", ".join("?" * len(hashes))  # placeholders only: the hashes travel as parameters
    sql = (f"SELECT program_hash, job_id FROM claims WHERE workload_id = ? AND target_id = ? AND program_hash IN "
           f"({marks}) UNION ALL SELECT DISTINCT program_hash, CAST(NULL AS INTEGER) FROM records WHERE "
           f"workload_id = ? AND target_id = ? AND program_hash IN ({marks})")
    holders, measured = {}, set()
    for h, job in conn.execute(sql, (workload_id, target_id, *hashes, workload_id, target_id, *hashes)):
        if job is None:
            measured.add(h)
        else:
            holders[h] = job
    return holders, measured


def release(conn: sqlite3.Connection, job_id: int, hashes: list[str] | None) -> int:
    """Delete claims of ``job_id`` (those of ``hashes``, or all); returns how many were held."""
    if hashes is None:
        return conn.execute("DELETE FROM claims WHERE job_id = ?", (job_id,)).rowcount
    return sum(conn.execute("DELETE FROM claims WHERE job_id = ? AND program_hash = ?", (job_id, h)).rowcount
               for h in hashes)
