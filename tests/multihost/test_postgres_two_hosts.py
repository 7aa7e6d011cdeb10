"""Two drivers on two hosts tune the same workload into one PostgreSQL URL.

A private PostgreSQL server runs on host ``db`` (a network namespace: it listens only on that host's address,
its socket in a private directory, password logins admitted from the bridge's subnet); ``tunefarm tune
--db postgresql://...`` runs on hosts ``a`` and ``b`` at once, over real TCP across the bridge. The study then
holds exactly the shared budget, no program measured twice, records measured on both hosts, and neither
driver printed the password. Marked ``multihost`` (root, iproute2, util-linux, PostgreSQL, tunefarm[postgres]).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tunefarm.testing.netns import SUBNET, HostNetwork, ip
from tunefarm.testing.postgres_server import PASSWORD, PostgresServer

pytestmark = [pytest.mark.multihost, pytest.mark.timeout(300)]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOAD = "matmul-64"
BUDGET = 48
DRIVERS = ("a", "b")
# what the study holds, read by tunefarm's own views from a driver host (over the bridge, as a user would)
SUMMARY = ("import json, sys\nfrom tunefarm.database import open_database\ndb = open_database(sys.argv[1])\n"
           "r = db.records()\nj = db.jobs()\nprint(json.dumps({'records': len(r), 'programs': int(r.program_hash"
           ".nunique()), 'by_host': {str(k): int(v) for k, v in r.host.value_counts().items()}, 'jobs': "
           "sorted(j.status.tolist()), 'job_hosts': sorted(j.host.tolist()), 'n_records': int(j.n_records.sum())}))")

PROBE = "import socket, sys\nsocket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)"


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([REPO, env.get("PYTHONPATH", "")])
    return env


def _tune(net: HostNetwork, host: str, url: str, seed: int, log) -> subprocess.Popen:
    argv = [sys.executable, "-m", "tunefarm.cli", "tune", WORKLOAD, "--trials", str(BUDGET), "--trials-per-round",
            "8", "--db", url, "--target", "llvm -num-cores=1", "--farm", "local", "--workers", "1", "--resume",
            "--seed", str(seed)]
    return subprocess.Popen(net.exec_argv(host, argv), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=_env(), cwd=REPO)


def test_two_drivers_on_two_hosts_share_one_budget_in_one_postgresql_study(tmp_path):
    net = HostNetwork()
    namespaces = []
    server = None
    procs: list[subprocess.Popen] = []
    try:
        db_addr = net.add("db")
        for h in DRIVERS:
            net.add(h)
        namespaces = [net.namespace(h) for h in net.hosts] + [net.bridge_ns]
        # every initdb / pg_ctl / psql runs on host db: the address it listens on exists only there
        server = PostgresServer(listen=db_addr, clients=f"{SUBNET}.0/24", run_prefix=tuple(net.exec_argv("db", [])))
        server.start()
        url = server.url()
        assert f"@{db_addr}:" in url
        # the server listens only on db's bridge address: not even db's own loopback answers
        probe = subprocess.run(net.exec_argv("db", [sys.executable, "-c", PROBE, str(server.port)]),
                               capture_output=True, text=True, timeout=60)
        assert probe.returncode != 0 and "ConnectionRefusedError" in probe.stderr, probe.stderr
        logs = {h: open(tmp_path / f"{h}.log", "w+") for h in DRIVERS}
        started = time.monotonic()
        procs = [_tune(net, h, url, 11 + i, logs[h]) for i, h in enumerate(DRIVERS)]
        codes = [p.wait(timeout=240) for p in procs]
        elapsed = time.monotonic() - started
        outs = {}
        for h, f in logs.items():
            f.seek(0)
            outs[h] = f.read()
            f.close()
        assert codes == [0, 0], outs
        assert not any(PASSWORD in out for out in outs.values())
        summary = subprocess.run(net.exec_argv("a", [sys.executable, "-c", SUMMARY, url]), capture_output=True,
                                 text=True, timeout=120, env=_env(), cwd=REPO)
        assert summary.returncode == 0, summary.stderr
        got = json.loads(summary.stdout)
        print(f"two drivers in {elapsed:.1f} s: {got}")
        assert got["records"] == BUDGET == got["programs"]  # the shared budget exactly, no program measured twice
        assert set(got["by_host"]) == set(DRIVERS) and all(n > 0 for n in got["by_host"].values()), got
        assert got["jobs"] == ["finished", "finished"] and got["job_hosts"] == sorted(DRIVERS)
        assert got["n_records"] == BUDGET
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        try:
            if server is not None:
                server.stop()
        finally:
            net.close()
    assert not os.path.exists(server.root)  # the server's data and socket directory are gone
    left = ip("netns", "list").stdout
    assert not any(ns in left for ns in namespaces)
