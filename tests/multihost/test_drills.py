"""Drills on a real multi-host Ray cluster: a head and three worker hosts, each in its own network namespace
(tunefarm/testing/netns_cluster.py), Ray's token authentication on, a ``tunefarm tune --ray-address`` driver
on one of the hosts. A host is killed, cut off for 60 s, drained for preemption, added mid-job; the driver
runs on a worker host. Each drill then reads the job's database: the budget measured exactly, no program
measured twice, no measurement lost (every trial the driver counted is stored, none as ``worker_lost``, no
failure of a healthy program), the job finished.

Marked ``multihost`` (root, iproute2, util-linux): CI runs it as its own bounded step. One cluster serves
every drill; before each drill, hosts a drill broke are replaced by fresh ones.
"""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tunefarm.testing.job_audit import JobAudit, audit, driver_trials
from tunefarm.testing.netns_cluster import HEAD, NetnsRayCluster

pytestmark = [pytest.mark.multihost, pytest.mark.timeout(900)]

WORKLOAD = "matmul-64"   # builds and times in well under a second: many trials in a short drill
CUT_S = 60.0             # how long a host's link stays cut
JOIN_TO_WORK_S = 10.0    # a host added mid-job runs items within this long of joining
DRAIN_DEADLINE_S = 20    # the preemption notice: the host is killed this long after it is drained
DRAIN_GRACE_S = 5.0      # items already running on a drained host may still finish within this long


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with NetnsRayCluster(tmp_path_factory.mktemp("hosts"), workers=3) as c:
        yield c


@pytest.fixture
def hosts(cluster):
    cluster.heal()
    return cluster


class Job:
    """One ``tunefarm tune`` driver on a cluster host, and what the drill watches of it meanwhile."""

    def __init__(self, cluster: NetnsRayCluster, tmp_path: Path, trials: int, host: str = HEAD):
        self.trials = trials
        self.db = tmp_path / "tune.sqlite"
        self.log = tmp_path / "driver.log"
        self.proc = cluster.tune(host, WORKLOAD, trials, self.db, self.log, "--seed", "0", "--timeout", "30")

    def counts(self) -> dict[str, int]:
        """Records per host so far (read-only: the driver owns the file)."""
        if not self.db.exists():
            return {}
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        try:
            return dict(con.execute("SELECT host, count(*) FROM records GROUP BY host").fetchall())
        except sqlite3.OperationalError:  # the schema is not written yet
            return {}
        finally:
            con.close()

    def wait_until(self, what: str, predicate, timeout_s: float = 180.0) -> dict[str, int]:
        deadline = time.monotonic() + timeout_s
        while True:
            counts = self.counts()
            if predicate(counts):
                return counts
            if self.proc.poll() is not None:
                pytest.fail(f"the job ended (exit {self.proc.returncode}) before {what}: {counts}\n{self.output()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} in {timeout_s:.0f} s: {counts}\n{self.output()}")
            time.sleep(0.25)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def finish(self, timeout_s: float = 400.0) -> JobAudit:
        """Wait for the driver; check what every drill checks; the audit for the drill's own checks."""
        try:
            rc = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"the job did not finish in {timeout_s:.0f} s: {self.counts()}\n{self.output()}")
        out = self.log.read_text(errors="replace")
        assert rc == 0, out[-4000:]
        a = audit(self.db)
        assert a.records == self.trials, f"budget {self.trials}, measured {a.records}"
        assert a.measured_twice == 0 and a.unhashed == 0, f"{a.measured_twice} programs measured twice"
        assert a.lost == 0, f"{a.lost} measurements lost: {a.statuses}"
        assert a.statuses == {"ok": self.trials}, f"a healthy program failed: {a.statuses}"
        assert driver_trials(out) == a.job_records == self.trials  # every trial the driver counted is stored
        assert a.job_status == "finished"
        return a


def _at_least(host: str, n: int):
    return lambda counts: counts.get(host, 0) >= n


def test_the_driver_on_another_host_than_the_head(hosts, tmp_path):
    job = Job(hosts, tmp_path, trials=48, host="h1")
    a = job.finish()
    assert a.driver_host == "h1" != HEAD
    assert set(a.hosts) == set(hosts.workers)  # every worker host measured; the head hosts no workers


def test_a_host_killed_mid_job(hosts, tmp_path):
    job = Job(hosts, tmp_path, trials=90)
    job.wait_until("records from h2", _at_least("h2", 3))
    killed = time.time()
    hosts.kill("h2")
    assert not hosts.net.pids("h2")
    a = job.finish()
    assert a.hosts["h2"].last <= killed + 1.0  # h2 measured nothing after it died (commit within a second)
    assert a.records_after("h1", killed) + a.records_after("h3", killed) > 0  # the job went on without it


def test_a_host_cut_off_for_a_minute_then_restored(hosts, tmp_path):
    job = Job(hosts, tmp_path, trials=2400)  # two hosts measure ~25 trials/s: work left when the link returns
    job.wait_until("records from h2", _at_least("h2", 3))
    hosts.cut("h2")
    cut = time.time()
    try:
        time.sleep(CUT_S)
        during = job.counts()
    finally:
        hosts.restore("h2")
    running = job.proc.poll() is None
    assert running and sum(during.values()) < job.trials, "the job ended before the link came back: raise its budget"
    a = job.finish()  # the item in flight on h2 when its link went was measured elsewhere, not a timeout
    assert a.records_after("h1", cut) + a.records_after("h3", cut) > 0  # the job went on while h2 was away


def test_a_host_drained_for_preemption(hosts, tmp_path):
    job = Job(hosts, tmp_path, trials=150)
    job.wait_until("records from h2", _at_least("h2", 3))
    hosts.drain("h2", DRAIN_DEADLINE_S)
    drained = time.time()  # Ray has accepted the notice
    before = job.counts()
    time.sleep(max(0.0, drained + DRAIN_DEADLINE_S - time.time()))
    hosts.kill("h2")  # the cloud takes the machine at the deadline
    assert sum(before.values()) < job.trials, "the job ended before the drain: raise its budget"
    a = job.finish()
    late = a.records_after("h2", drained + DRAIN_GRACE_S)
    assert late == 0, f"h2 got {late} new items after its preemption notice"
    # and the preemption cost no failure: finish() checked that every record is ok


def test_a_host_added_mid_job_runs_items_within_seconds(hosts, tmp_path):
    job = Job(hosts, tmp_path, trials=300)
    job.wait_until("records", lambda c: sum(c.values()) >= 3)
    hosts.add_host("h4")
    joined = hosts.joined["h4"]
    at_join = sum(job.counts().values())
    assert job.proc.poll() is None and at_join < job.trials - 30, "the job was nearly over: raise its budget"
    job.wait_until("records from the added host", _at_least("h4", 1), timeout_s=60.0)
    a = job.finish()
    first = a.hosts["h4"].first - joined
    assert first <= JOIN_TO_WORK_S, f"h4 ran its first item {first:.1f} s after joining"


def test_token_authentication_is_on(hosts):
    """A client without the cluster's token is refused; the cluster is invisible outside its namespaces."""
    env = dict(hosts.env(HEAD), RAY_AUTH_TOKEN="0" * 64)
    p = subprocess.run(hosts.net.exec_argv(HEAD, [sys.executable, "-m", "tunefarm.testing.netns_gcs",
                                                  hosts.address]), env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0 and "auth" in (p.stderr + p.stdout).lower(), p.stdout + p.stderr
    assert len(hosts.nodes()) >= 4  # with the token, the same question is answered
    current = Path("/tmp/ray/ray_current_cluster")  # where `ray.init(address="auto")` looks on this machine
    assert not current.exists() or hosts.address not in current.read_text()

