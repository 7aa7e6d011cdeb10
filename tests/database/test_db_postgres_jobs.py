"""Two and three tuning jobs (separate processes, each with its own farm) on one PostgreSQL study and one workload,
started together with a shared budget of 48 trials: exactly 48 records between them, no program measured twice.
On Ray the jobs are drivers of one shared cluster (``--ray-address``), as a team's jobs would be."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dbtest_helpers import REPO, repo_env
from tunefarm.database import open_database
from tunefarm.testing.postgres_server import PASSWORD

pytestmark = pytest.mark.postgres
BUDGET = 48


def _run_together(cmd: list[str], n_jobs: int) -> tuple[list[str], list[int]]:
    """Start ``n_jobs`` copies of ``cmd`` (seeds differ) at once; their outputs and exit codes."""
    procs = [subprocess.Popen([*cmd, "--seed", str(11 + i)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=repo_env(), cwd=REPO) for i in range(n_jobs)]
    try:
        outs = [p.communicate(timeout=900)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    return outs, [p.returncode for p in procs]


@pytest.mark.parametrize("farm", ["local", "ray"])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_concurrent_jobs_share_one_budget_on_postgresql(pg_server, farm, n_jobs):
    url = pg_server.new_database(f"jobs_{farm}_{n_jobs}")
    open_database(url).close()  # the schema exists before they start (each would create it otherwise)
    cmd = [sys.executable, "-m", "tunefarm.cli", "tune", "matmul-64", "--trials", str(BUDGET), "--trials-per-round",
           "8", "--db", url, "--target", "llvm -num-cores=1", "--farm", farm, "--workers", "1", "--resume"]
    cluster = None
    if farm == "ray":
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": n_jobs, "resources": {"measure_slot": n_jobs}, "include_dashboard": False})
        cmd += ["--ray-address", cluster.address]
    try:
        outs, codes = _run_together(cmd, n_jobs)
    finally:
        if cluster is not None:
            cluster.shutdown()
    assert codes == [0] * n_jobs, outs
    assert not any(PASSWORD in out for out in outs)
    db = open_database(url)
    df = db.records()
    assert len(df) == BUDGET == df.program_hash.nunique()  # the budget exactly, and no program measured twice
    jobs = db.jobs()
    assert len(jobs) == n_jobs and set(jobs.status) == {"finished"}
    assert sum(jobs.n_records) == BUDGET
