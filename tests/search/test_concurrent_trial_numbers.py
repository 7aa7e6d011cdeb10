"""Three tuning jobs on one workload and one database at once: their trial numbers are unique and follow the
order the records were committed, so a tuning curve sorted by trial does not interleave the jobs' counts."""
from __future__ import annotations

import os
import subprocess
import sys

from tunefarm.database import Database


def test_concurrent_jobs_number_their_trials_in_commit_order(tmp_path):
    db = tmp_path / "d.sqlite"
    Database(str(db)).close()  # the schema exists before they start (each would create it otherwise)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = [subprocess.Popen([sys.executable, "-m", "tunefarm.cli", "tune", "matmul-64", "--trials", "30",
                               "--trials-per-round", "4", "--db", str(db), "--target", "llvm -num-cores=1", "--farm",
                               "local", "--workers", "1", "--seed", str(20 + k), "--resume", "--strategy", "random"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for k in range(3)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    df = Database(str(db)).records().sort_values("record_id")
    assert df.job_id.nunique() >= 2  # the jobs did run side by side
    assert df.trial.tolist() == list(range(len(df)))
    assert len(df) == df.program_hash.nunique()
