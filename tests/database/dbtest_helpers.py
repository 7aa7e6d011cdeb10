"""Shared helpers for the database tests: synthetic studies and a writer process.

Run as a script (``python dbtest_helpers.py writer DB TAG N_BATCHES BATCH_SIZE PAD_BYTES``) it is the writer used by
the multi-process and crash tests: it commits batches and prints ``committed <batch id>`` after each one.
"""
from __future__ import annotations

import math
import os
import random
import sqlite3
import sys

from host_targets import not_this_host, this_host
from tunefarm.database import Database, Record, is_url
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET_A = this_host()  # as the label spells it: its canonical form lists every feature of this machine
TARGET_B = not_this_host("+avx2,+fma", num_cores=4)
EVIL_NAME = ("dense'); DROP TABLE workloads; -- <script>document.title='pwned'</script>"
             "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">")


def repo_env() -> dict:
    """Environment for child Python processes: the repo and the tests' shared helpers importable, nothing else
    changed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([REPO, os.path.join(REPO, "tests"), env.get("PYTHONPATH", "")])
    return env


def store_name(db) -> str:
    """What opens ``db`` again: its file, or its URL with the password (``path`` hides it)."""
    return getattr(db, "_url", db.path)


def raw_sql(db, sql: str, params=()) -> list[tuple]:
    """Run one statement on a store behind tunefarm's back (as another program could); returns its rows.
    ``sql`` uses ``?`` parameters on either kind."""
    name = db if isinstance(db, str) else store_name(db)
    if is_url(name):
        import psycopg  # only the postgres tests come here
        from tunefarm.database.pg_connection import to_pg

        with psycopg.connect(name, autocommit=True) as conn:
            cur = conn.execute(to_pg(sql), tuple(params))
            return cur.fetchall() if cur.description else []
    with sqlite3.connect(name) as conn:
        return conn.execute(sql, params).fetchall()


def make_trace(i: int, wrapped: bool = False):
    insts = [
        ["GetBlock", [], ["C", "main"], ["b0"]],
        ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
        ["SamplePerfectTile", ["l1"], {"n": 2, "max_innermost_factor": 64}, ["v4", "v5"]],
        ["Split", ["l1", "v4", "v5"], [], ["l6", "l7"]],
    ]
    if not wrapped:
        return insts
    return {"insts": insts, "decisions": [[2, [2 ** (i % 6), 128 // 2 ** (i % 6)]]]}


def make_record(key: str, i: int, *, target: str = TARGET_A, job: int | None = None, secs: float | None = None,
                status: MeasureStatus = MeasureStatus.OK, created: float | None = None, host: str = "w1") -> Record:
    if status is MeasureStatus.OK:
        base = secs if secs is not None else 1e-4 * (1 + (i * 7919 % 97) / 10)
        result = MeasureResult(status, [base * f for f in (1.02, 1.0, 1.05)], 0.02, None, host)
    else:
        error = f"{status.value}: candidate failed (<{i % 2}> & more)\nTraceback ..."
        result = MeasureResult(status, [], 0.01, error, host)
    return Record(key, make_trace(i, wrapped=i % 2 == 1), f"hash-{key}-{target[-1]}-{i}", target, result, job, i,
                  created)


def populate(db: Database, *, seed: int = 0, start: float = 1_750_000_000.0) -> dict:
    """A small but realistic study: 3 workloads (one with an SQL/HTML name), 2 targets, 2 jobs, failures."""
    rng = random.Random(seed)
    keys = {
        "dense": db.commit_workload("wk-dense", "dense_128x128x128", '{"op":"dense"}', 2 * 128 ** 3),
        "relu": db.commit_workload("wk-relu", "relu_1024", '{"op":"relu"}', 1024),
        "evil": db.commit_workload("wk-evil", EVIL_NAME, '{"op":"evil"}', None),
    }
    job1 = db.start_job("tune-dense", {"trials": 200, "target": TARGET_A})
    job2 = db.start_job("tune-relu-B", {"trials": 120, "target": TARGET_B})
    statuses = [MeasureStatus.OK] * 8 + [MeasureStatus.BUILD_ERROR, MeasureStatus.RUN_ERROR,
                                         MeasureStatus.TIMEOUT, MeasureStatus.WRONG_RESULT]
    plan = [("wk-dense", TARGET_A, job1, 200, 1.2e-3), ("wk-relu", TARGET_A, job1, 60, 8e-6),
            ("wk-relu", TARGET_B, job2, 120, 5e-6), ("wk-evil", TARGET_A, None, 30, 3e-5)]
    for key, target, job, n, base in plan:
        batch = []
        for i in range(n):
            status = rng.choice(statuses)
            improve = base * (0.35 + 0.65 * math.exp(-i / (n / 4)))  # search gets better over time
            secs = improve * rng.uniform(1.0, 1.6)
            created = start + i * 9.0 + rng.uniform(0, 3)  # ~7 trials per minute
            batch.append(make_record(key, i, target=target, job=job, secs=secs, status=status, created=created,
                                     host=f"worker-{i % 3}"))
            if len(batch) == 16:
                db.commit_records(batch)
                batch = []
        db.commit_records(batch)
    db.finish_job(job1, "finished")
    return {"jobs": (job1, job2), "workloads": keys}


def writer_main(path: str, tag: str, n_batches: int, batch_size: int, pad_bytes: int = 2000) -> None:
    db = Database(path)
    key = "wk-" + tag
    db.commit_workload(key, "workload_" + tag, '{"tag":"%s"}' % tag, 1e6)
    job = db.start_job("writer-" + tag, {"tag": tag})
    pad = "x" * pad_bytes  # batches bigger than SQLite's page cache spill into the WAL before they commit
    for b in range(n_batches):
        recs = []
        for i in range(batch_size):
            r = make_record(key, b * batch_size + i, job=job)
            r.trace_json = [["Annotate", [], {"pad": pad, "i": i}, []]] + make_trace(i)
            r.program_hash = f"{tag}-{b}-{i}"
            recs.append(r)
        batch_id = db.commit_records(recs)
        print(f"committed {batch_id}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "writer":
        writer_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))


def commit_batches(db: Database, tag: str, n_batches: int, batch_size: int, barrier=None) -> list[int]:
    """Commit ``n_batches`` batches through a Database received by pickling (so: by path); returns batch ids."""
    key = "wk-" + tag
    db.commit_workload(key, "workload_" + tag, "{}", 1e6)
    job = db.start_job("writer-" + tag, {"tag": tag})
    if barrier is not None:
        barrier.wait(timeout=60)  # start writing at the same moment as the other process
    ids = []
    for b in range(n_batches):
        recs = [make_record(key, b * batch_size + i, job=job) for i in range(batch_size)]
        for i, r in enumerate(recs):
            r.program_hash = f"{tag}-{b}-{i}"
        ids.append(db.commit_records(recs))
    return ids


def spawn_writer(db: Database, tag: str, n_batches: int, batch_size: int, barrier, queue) -> None:
    """multiprocessing target: report the committed batch ids (or the error) through ``queue``."""
    try:
        queue.put((tag, commit_batches(db, tag, n_batches, batch_size, barrier)))
    except BaseException as e:  # surfaced by the parent test
        queue.put((tag, repr(e)))
        raise


def real_programs(workload: str) -> tuple[object, list[tuple[object, str]]]:
    """A built-in workload and distinct schedules of it: ``(func, [(trace json, program hash), ...])``.

    The innermost block's loops are split by every factor pair (and, for the elementwise workload, the inner
    loop vectorized or not), so each trace replays to a different scheduled function."""
    from tunefarm.ir.structural import program_hash
    from tunefarm.schedule import Schedule
    from tunefarm.schedule.tree import block_names
    from tunefarm.search.workloads import load_workload

    _, func = load_workload(workload)
    block = block_names(func)[-1]
    out, seen = [], set()
    for outer in (1, 2, 4, 8):
        for inner in (1, 2, 4, 8, 16):
            for vectorize in (False, True):
                sch = Schedule(func)
                loops = sch.get_loops(sch.get_block(block))
                loops[0], _ = sch.split(loops[0], factors=[None, outer])
                _, j1 = sch.split(loops[1], factors=[None, inner])
                if vectorize:
                    if len(loops) > 2:
                        continue  # a reduction block: its inner spatial loop is not innermost
                    sch.vectorize(j1)
                h = program_hash(sch.mod["main"])
                if h not in seen:
                    seen.add(h)
                    out.append((sch.trace.as_json(), h))
    return func, out


def populate_real(db: Database, *, seed: int = 0, start: float = 1_750_000_000.0) -> dict:
    """A study of real programs (their traces replay, their hashes are their programs'), as an import needs:
    matmul 16^3 on two targets, relu 32x32 under an SQL/HTML name, two jobs, failed trials among them."""
    from tunefarm.ir.serialize import dumps
    from tunefarm.ir.structural import workload_key

    rng = random.Random(seed)
    statuses = [MeasureStatus.OK] * 6 + [MeasureStatus.BUILD_ERROR, MeasureStatus.TIMEOUT, MeasureStatus.RUN_ERROR]
    job1 = db.start_job("tune-matmul", {"trials": 40, "target": TARGET_A})
    job2 = db.start_job("tune-relu-B", {"trials": 20, "target": TARGET_B})
    keys = {}
    for workload, name, plan in (("matmul-16", "matmul_16", ((TARGET_A, job1), (TARGET_B, job2))),
                                 ("relu-32", EVIL_NAME, ((TARGET_A, None),))):
        func, programs = real_programs(workload)
        key = workload_key(func)
        keys[workload] = key
        db.commit_workload(key, name, dumps(func), 1e5)
        for target, job in plan:
            batch = []
            for i, (trace, h) in enumerate(programs):
                status = rng.choice(statuses)
                secs = 1e-5 * rng.uniform(1.0, 3.0)
                result = (MeasureResult(status, [secs * f for f in (1.02, 1.0, 1.05)], 0.02, None, f"worker-{i % 3}")
                          if status is MeasureStatus.OK else
                          MeasureResult(status, [], 0.01, f"{status.value}: trial {i} failed", f"worker-{i % 3}"))
                batch.append(Record(key, trace, h, target, result, job, i, start + i * 9.0))
                if len(batch) == 8:
                    db.commit_records(batch)
                    batch = []
            db.commit_records(batch)
    db.finish_job(job1, "finished")
    return {"jobs": (job1, job2), "workloads": keys}
