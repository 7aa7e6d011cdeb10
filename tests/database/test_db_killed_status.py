"""A job whose driver died is stored ``killed`` once a process that can write the file finds it so (a reader
of the jobs or records, or the next job to start): the row says what readers see, and its claims end."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap

from dbtest_helpers import repo_env
from tunefarm.database import Database

DRIVER = textwrap.dedent("""
    import sys, time
    from tunefarm.database import Database
    db = Database(sys.argv[1])
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
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT status, finished_us = heartbeat_us, (SELECT count(*) FROM claims) "
                           "FROM jobs").fetchall()


def test_a_reader_stores_killed_for_a_dead_driver(tmp_path):
    path = str(tmp_path / "k.sqlite")
    _killed_driver(path)
    assert _stored(path) == [("running", None, 2)]  # nobody looked yet: the row still says running
    assert Database(path).jobs()["status"].tolist() == ["killed"]
    assert _stored(path) == [("killed", 1, 0)]


def test_the_next_job_stores_killed_for_a_dead_driver(tmp_path):
    path = str(tmp_path / "k.sqlite")
    dead = _killed_driver(path)
    db = Database(path)
    live = db.start_job("next")
    with sqlite3.connect(path) as raw:
        assert dict(raw.execute("SELECT id, status FROM jobs")) == {dead: "killed", live: "running"}
    assert db.job_state(live) == "running" and db.job_state(dead) == "killed"


def test_a_read_only_reader_computes_killed_without_writing(tmp_path):
    path = str(tmp_path / "k.sqlite")
    _killed_driver(path)
    assert Database(path, readonly=True).jobs()["status"].tolist() == ["killed"]
    assert _stored(path)[0][0] == "running"
