"""Resume: a job on a database that already holds records of its workloads continues them.

Known programs are never measured again (their hashes seed each task's dedup), the fastest stored programs
become the population's measured parents, and the cost model learns from the stored records before the first
pick. The stored traces are replayed, postprocessed and featurized by the workers (search requests with
``designs``), not by the driver.
"""
from __future__ import annotations

import logging
import math

import pandas as pd

from ..farm import DoneStatus
from ..search.strategy import Candidate
from .job_task import JobTask

log = logging.getLogger("tunefarm.tuning")

WARM_START_LIMIT = 2000   # stored records replayed per task (dedup still uses every stored hash)
CHUNK = 32                # stored traces per search request


def stored_rows(db, t: JobTask, target: str) -> pd.DataFrame:
    """The records a task resumes from: all of them, or the fastest half of the limit and a random rest."""
    df = db.records(t.key, target=target, decisions=False)  # only traces and latencies are read
    if len(df) > WARM_START_LIMIT:  # replaying every stored trace would take minutes
        best = df.sort_values("min_us").head(WARM_START_LIMIT // 2)
        rest = df.drop(best.index).sample(WARM_START_LIMIT // 2, random_state=0)
        df = pd.concat([best, rest])
    return df


def warm_start(tasks: list[JobTask], db, target: str, farm, model) -> int:
    """Seed every task from the database (see module doc); returns the number of stored records."""
    total, batches = 0, []
    for t in tasks:
        t.search.mark_known(db.measured_hashes(t.key, target))
        n = db.count_records(t.key, target)
        t.state.trials = n
        total += n
        if n:
            batches.append((t, list(stored_rows(db, t, target).itertuples(index=False))))
    replay_stored(batches, farm, lambda t, chunk, reply, worker: _take(t, chunk, reply, worker, model))
    for t in tasks:
        if t.state.trials:
            log.info("task %s: resuming from %d stored records (best %.3f us)", t.name, t.state.trials,
                     t.state.best_latency * 1e6 if math.isfinite(t.state.best_latency) else math.nan)
    return total


def replay_stored(batches: list, farm, take) -> None:
    """Replay stored traces on the workers, ``CHUNK`` per search request (the resume here, ``transfer.py``'s
    other workloads): ``batches`` is ``[(task, rows)]``, and ``take(task, rows, reply, worker)`` gets each
    answer (``worker`` "" when the task searched in the driver). A chunk that cannot be replayed is logged and
    left out: stored records give the search a head start, never a requirement."""
    for t, rows in batches:
        for k in range(0, len(rows), CHUNK):
            chunk = rows[k:k + CHUNK]
            work = t.search_request_for_designs([r.trace_json for r in chunk])
            if isinstance(work, dict):  # searched here
                take(t, chunk, work, "")
            else:
                work.tag = (t, chunk)
                farm.put(work)
    while farm.pending:
        for d in farm.poll(5.0):
            t, chunk = d.work.tag
            t.requests_in_flight -= 1
            if d.status is DoneStatus.OK and not d.value.get("unavailable"):
                take(t, chunk, d.value, d.worker)
            else:
                log.warning("task %s: %d stored records could not be replayed: %s", t.name, len(chunk),
                            d.error or d.value.get("unavailable"))


def _take(t: JobTask, chunk: list, reply: dict, worker: str, model) -> None:
    programs = reply.get("programs", [])
    for row, index in zip(chunk, reply.get("evaluated", [])):
        if index is None:
            continue
        e = Candidate.from_reply(programs[index], worker)
        ok = str(row.status) == "ok" and row.min_us == row.min_us
        lat = row.min_us / 1e6 if ok else None
        t.search.mark_known([e.hash])
        t.search.measured_result(e, lat)
        model.add([e.features], [t.key], [lat])
        if ok:
            t.state.best_latency = min(t.state.best_latency, row.median_us / 1e6)
