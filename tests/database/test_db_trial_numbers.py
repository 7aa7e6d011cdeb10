"""Trial numbers are assigned at commit, inside the commit's transaction: unique per workload and target and in
commit order, however many processes commit at once (each job used to number from the count it read at its
start, so concurrent jobs repeated numbers and tuning curves sorted by trial interleaved them). On every kind of
store: SQLite, and PostgreSQL (where a step is one server call) under its marker."""
from __future__ import annotations

import multiprocessing as mp

from tunefarm.database import Record, open_database
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus

TARGET = "llvm -mcpu=generic -num-cores=1"
WRITERS, STEPS = 4, 15


def _writer(path: str, k: int, start) -> None:
    db = open_database(path)
    job = db.start_job(f"writer-{k}")
    start.wait()
    for step in range(STEPS):  # one small transaction per step, as a tuning driver commits
        recs = [Record("wk", [["A", [], [k, step, i], []]], f"h{k}-{step}-{i}", TARGET,
                       MeasureResult(MeasureStatus.OK, [1e-3]), job, None) for i in range(1 + step % 2)]
        db.commit_records(recs)
    db.finish_job(job)


def test_concurrent_writers_get_unique_trial_numbers_in_commit_order(new_store):
    path = new_store("t")
    db = open_database(path)
    db.commit_workload("wk", "w", "{}", 1.0)
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(path, k, start)) for k in range(WRITERS)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    df = db.records().sort_values("record_id")
    n = WRITERS * sum(1 + s % 2 for s in range(STEPS))
    assert len(df) == n and df.job_id.nunique() == WRITERS
    assert df.trial.tolist() == list(range(n))  # unique, and in the order the records were committed


def test_numbers_continue_per_workload_and_target_and_explicit_numbers_are_kept(new_store):
    db = open_database(new_store("t"))
    db.commit_workload("wk", "w", "{}", 1.0)
    db.commit_workload("wk2", "w2", "{}", 1.0)
    ok = MeasureResult(MeasureStatus.OK, [1e-3])
    other = "llvm -mcpu=generic -num-cores=2"
    db.commit_records([Record("wk", [["A", [], [0], []]], "a", TARGET, ok, None, 7)])  # kept as given
    db.commit_records([Record("wk", [["A", [], [1], []]], "b", TARGET, ok, None, None),
                       Record("wk2", [["A", [], [2], []]], "c", TARGET, ok, None, None),
                       Record("wk", [["A", [], [3], []]], "d", other, ok, None, None),
                       Record("wk", [["A", [], [4], []]], "e", TARGET, ok, None, None)])
    got = {r.program_hash: r.trial for r in db.records().itertuples()}
    assert got == {"a": 7, "b": 1, "c": 0, "d": 0, "e": 2}
