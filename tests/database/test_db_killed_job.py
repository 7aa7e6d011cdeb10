"""A ``tunefarm tune`` driver killed by SIGKILL never finishes its job: ``best``, ``report`` and ``records`` show
the job as ``killed`` (decided from the pid and process start time that ``start_job`` recorded), and the first
reader that finds it so stores it."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from dbtest_helpers import repo_env
from tunefarm.cli import main
from tunefarm.database import Database


def _wait_for_records(path, proc, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if os.path.exists(path):
            with Database(path, create=False) as db:
                if db.count_records() >= 4:
                    return
        time.sleep(0.5)
    raise AssertionError("the tuning job stored no records in time")


def test_a_sigkilled_tune_job_shows_as_killed(tmp_path, capsys):
    path = str(tmp_path / "k.sqlite")
    cmd = [sys.executable, "-m", "tunefarm.cli", "tune", "matmul-32", "--farm", "local", "--workers", "1",
           "--trials", "2000", "--trials-per-round", "4", "--db", path, "--target", "llvm -num-cores=1", "--seed", "1"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=repo_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _wait_for_records(path, proc)
        with Database(path, create=False) as db:
            assert db.jobs()["status"].tolist() == ["running"]
        proc.send_signal(signal.SIGKILL)  # the driver only: its finish_job never runs
        proc.wait(timeout=30)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its measuring workers, if any outlived it
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
    db = Database(path, create=False)
    jobs = db.jobs()
    assert jobs["status"].tolist() == ["killed"] and jobs["pid"].tolist() == [proc.pid]
    with sqlite3.connect(path) as raw:  # the reader that found the driver gone stored what it saw
        assert raw.execute("SELECT status, finished_us = heartbeat_us FROM jobs").fetchall() == [("killed", 1)]
    assert set(db.records()["job_status"]) == {"killed"}
    assert main(["best", "--db", path, "--format", "json"]) == 0
    assert '"job_status": "killed"' in capsys.readouterr().out
    assert main(["best", "--db", path]) == 0
    assert " killed " in capsys.readouterr().out
    assert main(["report", "--db", path, "-o", str(tmp_path / "r.html")]) == 0
    assert "<td>killed</td>" in (tmp_path / "r.html").read_text()
