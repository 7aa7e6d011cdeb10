"""A study of any size, written through the database's own API, for the dashboard's tests and benchmark.

Traces are real: a few hundred schedules of a matmul sampled with ``sample_perfect_tile`` (so each has
decisions, replays and prints as ``sch.*`` calls), reused across records under distinct program hashes.
Latencies follow the decisions (some tilings are faster), improve over trials, and a share of trials fail
with the statuses a real job produces, on a few hosts; records arrive in batches as a job's steps commit them.
"""
from __future__ import annotations

import math
import random

from tunefarm.database import Database, Record
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.schedule import Schedule
from tunefarm.schedule.tree import block_names
from tunefarm.search.workloads import builtin_workload

TARGET = "llvm -mcpu=znver3 -mattr=+avx2,+fma -num-cores=1"
START = 1_750_000_000.0  # unix seconds of the first record; records are 50 ms apart
BATCH = 64  # records per commit, as a job's step stores them
FAILURES = (MeasureStatus.BUILD_ERROR, MeasureStatus.RUN_ERROR, MeasureStatus.TIMEOUT, MeasureStatus.WRONG_RESULT)


def sampled_traces(n: int, seed: int) -> list[tuple[str, float]]:
    """``n`` traces of a 64x64x64 matmul (tiles of two loops sampled) and a latency factor each tiling implies."""
    func = builtin_workload("matmul-64")
    out = []
    for i in range(n):
        sch = Schedule(func, seed=seed * 100_003 + i)
        block = sch.get_block(block_names(func)[-1])
        i_loop, j_loop = sch.get_loops(block)[:2]
        ti = sch.sample_perfect_tile(i_loop, n=2, max_innermost_factor=16)
        tj = sch.sample_perfect_tile(j_loop, n=2, max_innermost_factor=16)
        sch.split(i_loop, factors=ti)
        sch.split(j_loop, factors=tj)
        inner = [int(d[1]) for _, d in sch.trace.as_json()["decisions"]]
        factor = 1.0 + abs(math.log2(inner[0] * max(1, inner[1]) / 32)) / 2  # 32-element tiles are best
        out.append((sch.trace.as_json(), factor))
    return out


def build_study(db: Database, n_records: int, *, n_workloads: int, n_jobs: int, seed: int = 0) -> dict:
    """Write ``n_records`` records over ``n_workloads`` workloads and ``n_jobs`` finished jobs into ``db``."""
    rng = random.Random(seed)
    traces = sampled_traces(64, seed)
    keys = []
    for w in range(n_workloads):
        keys.append(f"synthetic-{seed}-{w}")
        db.commit_workload(keys[-1], f"matmul_{64 * (w + 1)}", '{"synthetic": %d}' % w, 2.0 * (64 * (w + 1)) ** 3)
    jobs = [db.start_job(f"job-{j}", {"max_trials": n_records // n_jobs, "target": TARGET,
                                      "tasks": [[f"matmul_{64 * (w + 1)}", k, 1.0] for w, k in enumerate(keys)]})
            for j in range(n_jobs)]
    pending = []
    for i in range(n_records):
        w = i % n_workloads
        trace, factor = traces[rng.randrange(len(traces))]
        status = rng.choice(FAILURES) if rng.random() < 0.12 else MeasureStatus.OK
        host = f"worker-{rng.randrange(3)}"
        base = 1e-5 * 8 ** w * factor * (0.4 + 0.6 * math.exp(-i / (n_records / 3)))
        secs = base * rng.uniform(1.0, 1.3)
        result = (MeasureResult(status, [secs, secs * 1.01, secs * 0.99], rng.uniform(0.05, 0.3), None, host)
                  if status is MeasureStatus.OK else
                  MeasureResult(status, [], rng.uniform(0.05, 0.3), f"{status.value}: trial {i} failed\ndetail", host))
        job = jobs[i * n_jobs // n_records]
        pending.append(Record(keys[w], trace, f"p{seed}-{i}", TARGET, result, job, i, START + i * 0.05))
        if len(pending) == BATCH:
            db.commit_records(pending)
            pending = []
    if pending:
        db.commit_records(pending)
    for job in jobs:
        db.finish_job(job, "finished")
    return {"keys": keys, "jobs": jobs}
