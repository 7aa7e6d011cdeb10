"""Claims: concurrent jobs on one workload and target share its budget and never measure a program twice.

Several connections in one process, then several processes racing for the same programs, then claims of
jobs that finished, were SIGKILLed, or fell silent on another host.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from dbtest_helpers import TARGET_A, TARGET_B, make_record, raw_sql, repo_env
from tunefarm.database import InvalidRecordError, UnknownJobError, open_database
from tunefarm.database.errors import JobNotRunningError
from tunefarm.database.liveness import HEARTBEAT_TIMEOUT_S, pid_space

KEY = "wk-shared"


def _db(name):
    db = open_database(name)
    db.commit_workload(KEY, "one-workload", '{"op":"one-workload"}', 1e6)
    return db


def _measured(db, job: int, hashes: list[str], start: int = 0) -> None:
    """Commit a record for each claimed hash: what measuring it ends with."""
    recs = []
    for i, h in enumerate(hashes):
        r = make_record(KEY, start + i, job=job)
        r.program_hash = h
        recs.append(r)
    db.commit_records(recs)


def test_two_connections_never_hold_one_program(new_store):
    name = new_store("c")
    a, b = _db(name), open_database(name)  # two connections to one store
    ja, jb = a.start_job("A"), b.start_job("B")
    assert a.claim(ja, KEY, TARGET_A, ["h1", "h2", "h3", "h2"]) == ["h1", "h2", "h3"]
    assert b.claim(jb, KEY, TARGET_A, ["h3", "h2", "h4"]) == ["h4"]  # held by a live job: refused
    assert b.claim(jb, KEY, TARGET_B, ["h3"]) == ["h3"]  # another target is another budget
    assert a.claim(ja, KEY, TARGET_A, ["h1", "h5"]) == ["h1", "h5"]  # re-claiming what it holds is allowed
    assert a.budget_used(KEY, TARGET_A) == 5 and a.budget_used(KEY, TARGET_A, exclude_job=ja) == 1
    _measured(a, ja, ["h1"])  # the record ends the claim ...
    assert b.claim(jb, KEY, TARGET_A, ["h1"]) == []  # ... and the program stays taken: it is measured
    assert a.budget_used(KEY, TARGET_A) == 5 and a.count_records(KEY) == 1
    assert a.release_claims(ja, ["h2", "nothing"]) == 1
    assert b.claim(jb, KEY, TARGET_A, ["h2"]) == ["h2"]  # released: free for the other job
    a.finish_job(ja)  # a finished job holds nothing
    assert b.claim(jb, KEY, TARGET_A, ["h3", "h5"]) == ["h3", "h5"]
    assert b.release_claims(jb) == 5  # all of them: h3 and h4 (target A), h3 (target B), h2, h5
    with pytest.raises(JobNotRunningError, match="'finished'"):
        a.claim(ja, KEY, TARGET_A, ["h9"])
    with pytest.raises(UnknownJobError):
        a.claim(99, KEY, TARGET_A, ["h9"])
    with pytest.raises(InvalidRecordError):
        a.claim(jb, KEY, TARGET_A, "h9")  # one string is not a list of hashes


def test_a_driver_step_stores_results_and_claims_in_one_transaction(new_store):
    name = new_store("s")
    a, b = _db(name), open_database(name)
    ja, jb = a.start_job("A"), b.start_job("B")
    assert a.claim(ja, KEY, TARGET_A, ["h1", "h2"]) == ["h1", "h2"]
    r1 = make_record(KEY, 0, job=ja)
    r1.program_hash = "h1"
    # the result of h1 arrives; h3 and h4 are picked next, with a budget of 3 trials
    got = a.commit_and_claim([r1], ja, [(KEY, TARGET_A, ["h3"], 3), (KEY, TARGET_A, ["h4"], 3),
                                        (KEY, TARGET_B, ["h1"], None)])
    assert got == [["h3"], [], ["h1"]]  # h1 stored + h2, h3 held: the budget of 3 is used up; target B is apart
    assert a.count_records(KEY) == 1 and a.budget_used(KEY, TARGET_A) == 3
    assert b.commit_and_claim([], jb, [(KEY, TARGET_A, ["h3", "h5"], None)]) == [["h5"]]  # h3 is A's
    bad = make_record(KEY, 1, job=ja)
    bad.program_hash = "h2"
    bad.trial = -1  # refused: the whole step is refused, nothing stored and nothing claimed
    with pytest.raises(InvalidRecordError):
        a.commit_and_claim([bad], ja, [(KEY, TARGET_A, ["h6"], None)])
    assert a.count_records(KEY) == 1 and b.claim(jb, KEY, TARGET_A, ["h6"]) == ["h6"]


def test_the_budget_counts_records_and_live_claims_of_every_job(new_store):
    name = new_store("c")
    a, b = _db(name), open_database(name)
    ja, jb = a.start_job("A"), b.start_job("B")
    _measured(a, ja, ["old1", "old2"])  # stored trials (of any status) count
    assert a.claim(ja, KEY, TARGET_A, [f"a{i}" for i in range(5)], budget=6) == ["a0", "a1", "a2", "a3"]
    assert b.claim(jb, KEY, TARGET_A, ["b0"], budget=6) == []  # 2 records + 4 live claims
    a.release_claims(ja, ["a3"])
    assert b.claim(jb, KEY, TARGET_A, ["b0", "b1"], budget=6) == ["b0"]
    assert a.budget_used(KEY, TARGET_A) == 6 and b.budget_used(KEY, TARGET_A, exclude_job=jb) == 5
    _measured(a, ja, ["a0", "a1", "a2"], start=10)
    assert a.budget_used(KEY, TARGET_A) == 6 and a.count_records(KEY) == 5
    assert b.claim(jb, KEY, TARGET_A, ["b0", "b2"], budget=6) == ["b0"]  # its own claim is kept, no room
    with pytest.raises(InvalidRecordError, match="budget"):
        a.claim(ja, KEY, TARGET_A, ["x"], budget=-1)


def _race(path: str, tag: str, hashes: list[str], budget: int, barrier, queue) -> None:
    """One job's measuring loop: claim one program at a time (in its own order), 'measure' it, commit."""
    try:
        db = open_database(path)
        job = db.start_job("racer-" + tag)
        order = hashes[:]
        random.Random(tag).shuffle(order)
        barrier.wait(timeout=60)
        measured = []
        for h in order:
            if db.claim(job, KEY, TARGET_A, [h], budget=budget):
                time.sleep(0.01)  # measuring takes time: the others claim meanwhile, even on a loaded host
                _measured(db, job, [h], start=len(measured))
                measured.append(h)
        db.finish_job(job)
        queue.put((tag, measured))
    except BaseException as e:  # surfaced by the parent test
        queue.put((tag, repr(e)))
        raise


def test_processes_racing_for_one_workload_share_its_budget_exactly(new_store):
    path = new_store("race")
    _db(path).close()
    hashes, budget = [f"p{i}" for i in range(120)], 64
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(path), tag, hashes, budget, barrier, queue)) for tag in "ABCD"]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=180) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(isinstance(r, list) for r in results.values()), results
    measured = [h for r in results.values() for h in r]
    assert len(measured) == budget and len(set(measured)) == budget  # exactly the budget, nothing twice
    assert sum(len(r) > 0 for r in results.values()) >= 2  # they really raced
    db = open_database(path)
    df = db.records()
    assert len(df) == budget and df["program_hash"].is_unique
    assert raw_sql(path, "SELECT count(*) FROM claims") == [(0,)]


_HOLDER = """
import sys, time
from tunefarm.database import open_database
db = open_database(sys.argv[1])
job = db.start_job("holder")
print(job, db.claim(job, "wk-shared", sys.argv[2], ["k1", "k2", "k3"]), flush=True)
time.sleep(600)
"""


def test_claims_of_a_sigkilled_job_die_with_it(new_store):
    path = new_store("kill")
    db = _db(path)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), TARGET_A], stdout=subprocess.PIPE,
                              text=True, env=repo_env())
    try:
        job_text, claimed = holder.stdout.readline().split(" ", 1)
        assert claimed.strip() == "['k1', 'k2', 'k3']"
        mine = db.start_job("mine")
        assert db.claim(mine, KEY, TARGET_A, ["k1", "k4"]) == ["k4"]  # the holder is alive
        assert db.job_state(int(job_text)) == "running"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert db.job_state(int(job_text)) == "killed"
    assert db.budget_used(KEY, TARGET_A) == 1  # k4 only: the dead job's claims count for nothing
    assert db.claim(mine, KEY, TARGET_A, ["k1", "k2", "k4"], budget=3) == ["k1", "k2", "k4"]
    assert db.jobs().set_index("job_id").loc[int(job_text), "status"] == "killed"


def test_a_sigkilled_jobs_claims_are_taken_over_by_the_next_claim(new_store):
    """No reader looked at the jobs in between: the claim itself finds the holder's process gone (on PostgreSQL
    the server counts a pid of this host alive and the driver, checking it, runs the step again)."""
    path = new_store("takeover")
    db = _db(path)
    mine = db.start_job("mine")  # before the kill: starting a job stores the dead ones it sees as killed
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), TARGET_A], stdout=subprocess.PIPE,
                              text=True, env=repo_env())
    try:
        job_text, claimed = holder.stdout.readline().split(" ", 1)
        assert claimed.strip() == "['k1', 'k2', 'k3']"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    dead = int(job_text)
    assert raw_sql(path, "SELECT status FROM jobs WHERE id = ?", (dead,)) == [("running",)]  # as it was left
    assert db.commit_and_claim([], mine, [(KEY, TARGET_A, ["k1", "k2", "k4"], 3)]) == [["k1", "k2", "k4"]]
    assert raw_sql(path, "SELECT program_hash, job_id FROM claims ORDER BY program_hash") == [
        ("k1", mine), ("k2", mine), ("k4", mine)]
    with pytest.raises(JobNotRunningError, match="killed"):  # the dead job's own id claims nothing
        db.claim(dead, KEY, TARGET_A, ["k5"])
    assert db.budget_used(KEY, TARGET_A) == 3


def test_a_job_of_another_host_lives_by_its_heartbeat(new_store):
    path = new_store("hb")
    db = _db(path)
    far, near = db.start_job("far"), db.start_job("near")
    assert db.claim(far, KEY, TARGET_A, ["f1", "f2"]) == ["f1", "f2"]
    # the far job ran on another machine: its pid means nothing here
    raw_sql(path, "UPDATE jobs SET pid = 1, host = 'elsewhere', pid_space = 'another-boot/pid:[1]' WHERE id = ?",
            (far,))
    assert db.job_state(far) == "running"  # heard of just now
    assert db.claim(near, KEY, TARGET_A, ["f1"]) == []
    old = time.time_ns() // 1000 - int((HEARTBEAT_TIMEOUT_S + 5) * 1e6)
    raw_sql(path, "UPDATE jobs SET heartbeat_us = ? WHERE id = ?", (old, far))
    assert db.job_state(far) == "stale"
    assert db.budget_used(KEY, TARGET_A) == 0
    assert db.claim(near, KEY, TARGET_A, ["f1"]) == ["f1"]  # a silent job's claims are taken over
    db.heartbeat(far)  # it speaks again: running, but what it held was given up when it was found silent
    assert db.job_state(far) == "running" and db.budget_used(KEY, TARGET_A, exclude_job=near) == 0
    assert db.claim(far, KEY, TARGET_A, ["f1", "f2"]) == ["f2"]
    with pytest.raises(UnknownJobError):
        db.heartbeat(1234)


def test_a_reused_pid_does_not_keep_a_dead_job_alive(new_store):
    db = _db(new_store("pid"))
    job = db.start_job("old")
    # the recorded pid is alive (ours), but it started at another time
    raw_sql(db, "UPDATE jobs SET pid = ?, pid_start = pid_start - 1000 WHERE id = ?", (os.getpid(), job))
    assert db.job_state(job) == "killed"
    assert raw_sql(db, "SELECT pid_space FROM jobs WHERE id = ?", (job,)) == [(pid_space(),)]


def test_claims_and_heartbeats_are_single_small_transactions(tmp_path):  # SQLite's own statement counter
    """The driver calls them once per trial: each is one write transaction touching a handful of rows,
    whatever the number of records already stored (counted with SQLite's own statement counter)."""
    db = _db(str(tmp_path / "cost.sqlite"))
    job = db.start_job("j")
    for b in range(20):
        _measured(db, job, [f"r{b}-{i}" for i in range(100)], start=b * 100)
    conn = db._conn()
    steps = []
    conn.set_progress_handler(lambda: steps.append(1), 100)  # called every 100 VM instructions
    db.claim(job, KEY, TARGET_A, ["new-0"], budget=5000)
    db.heartbeat(job)
    db.release_claims(job, ["new-0"])
    conn.set_progress_handler(None, 0)
    assert len(steps) < 20, len(steps)  # under 2000 VM steps for three calls over 2000 records
