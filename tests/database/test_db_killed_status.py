"""A job whose driver died is stored ``killed`` once a process that can write the file finds it so (a reader
of the jobs or records, or the next job to start): the row says what readers see, and its claims end. On every
kind of store (PostgreSQL under its marker)."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from dbtest_helpers import raw_sql, repo_env
from tunefarm.database import open_database

DRIVER = textwrap.dedent("""
    import sys, time
    from tunefarm.database import open_database
    db = open_database(sys.argv[1])
    job = db.start_job("doomed")
    db.commit_workload("wk", "w", "{}", 1.0)
    db.claim(job, "wk", "llvm -mcpu=generic", ["h1", "h2"])
    print(job, flush=True)
    time.sleep(600)
""")


def _killed_driver(path: str) -> int:
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, path], env=repo_env(), stdout=subprocess.PIPE, text=True)
    try:
        job = int(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    return job


def _stored(path: str):
    return [tuple(row) for row in raw_sql(path, "SELECT status, CASE WHEN finished_us = heartbeat_us THEN 1 END, "
                                                "(SELECT count(*) FROM claims) FROM jobs")]


def test_a_reader_stores_killed_for_a_dead_driver(new_store):
    path = new_store("k")
    _killed_driver(path)
    assert _stored(path) == [("running", None, 2)]  # nobody looked yet: the row still says running
    assert open_database(path).jobs()["status"].tolist() == ["killed"]
    assert _stored(path) == [("killed", 1, 0)]


def test_the_next_job_stores_killed_for_a_dead_driver(new_store):
    path = new_store("k")
    dead = _killed_driver(path)
    db = open_database(path)
    live = db.start_job("next")
    assert dict(raw_sql(path, "SELECT id, status FROM jobs")) == {dead: "killed", live: "running"}
    assert db.job_state(live) == "running" and db.job_state(dead) == "killed"


def test_a_read_only_reader_computes_killed_without_writing(new_store):
    path = new_store("k")
    _killed_driver(path)
    assert open_database(path, readonly=True).jobs()["status"].tolist() == ["killed"]
    assert _stored(path)[0][0] == "running"
