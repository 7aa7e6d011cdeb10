"""Two tuning jobs on one workload and one database, started together, share its budget and its dedup set."""
from __future__ import annotations

import os
import subprocess
import sys

from tunefarm.database import Database


def test_two_processes_tuning_one_workload_measure_the_budget_exactly_once(tmp_path):
    db = tmp_path / "d.sqlite"
    Database(str(db)).close()  # the schema exists before both start (each would create it otherwise)
    cmd = [sys.executable, "-m", "tunefarm.cli", "tune", "matmul-64", "--trials", "40", "--trials-per-round", "8",
           "--db", str(db), "--target", "llvm -num-cores=1", "--farm", "local", "--workers", "1", "--seed", "11",
           "--resume"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    df = Database(str(db)).records()
    assert len(df) == 40 == df.program_hash.nunique()  # the budget, and no program measured twice
    assert df.job_id.nunique() == 2 and set(Database(str(db)).jobs().status) == {"finished"}
