"""A Ray cluster of namespaced test hosts (netns.py): a head and worker hosts on one machine, real TCP between
them, Ray's token authentication on, and the drills a cluster operator meets: a host killed, its link cut, a
host added, a host drained for preemption.

Each host runs ``ray start`` with its own ``--temp-dir`` (nothing under /tmp/ray is shared: no
``ray_current_cluster`` file points another process of the machine here), its own measurement lock file (one
timing slot per host, as on separate machines), usage stats off, and one token in every process's environment
(``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``). Nodes and drivers are given the head's address explicitly, and
each host sees only its own processes, so nothing here joins another Ray instance of the machine; a
``ray.init(address="local")`` elsewhere starts its own. The head hosts no measurement
workers (no ``measure_slot``); worker hosts advertise ``measure_slot`` as cluster.yaml's nodes do.

    with NetnsRayCluster(workdir, workers=3) as c:
        driver = c.tune("head", "matmul-64", 48, workdir / "tune.sqlite", workdir / "driver.log")
        c.kill("h2")
        assert driver.wait() == 0
"""
from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .netns import HostNetwork, NetnsError

HEAD = "head"
GCS_PORT = 6379
_CPUS_PER_HOST = 1   # one measuring worker per worker host: three hosts already oversubscribe a 2-core machine
_OBJECT_STORE_BYTES = 100 * 1000 * 1000  # Ray's minimum is 75 MB; the default (30% of RAM per node) is far more


class NetnsRayCluster:
    """Head ``head`` and worker hosts ``h1``..``hN``, each a namespaced host running one Ray node.

    ``workdir`` keeps the hosts' logs (``<host>.log``: ``ray start`` and the drivers' output); Ray's own
    session directories live under a short private /tmp directory (Ray's socket paths must stay short) that
    ``close()`` removes with everything else.
    """

    def __init__(self, workdir, workers: int = 3):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.token = secrets.token_hex(32)
        self._ray_bin = str(Path(sys.executable).with_name("ray"))
        if not os.path.exists(self._ray_bin):
            raise NetnsError(f"no 'ray' command beside {sys.executable}")
        self.net = HostNetwork()
        self._procs: list[subprocess.Popen] = []
        self._tmp = tempfile.mkdtemp(prefix="tfmh")
        self.workers = [f"h{i}" for i in range(1, workers + 1)]
        self.joined: dict[str, float] = {}       # host -> epoch time its `ray start` returned (it had joined)
        self._closed = False
        atexit.register(self.close)  # Ray's directories too (the network registers its own)
        try:
            self.net.add(HEAD)
            self._start_ray([HEAD])
            for name in self.workers:
                self.net.add(name)
            self._start_ray(self.workers)
        except BaseException:
            self.close()
            raise

    @property
    def address(self) -> str:
        """The head's GCS address (what ``--ray-address`` / ``RayFarm(address=...)`` join)."""
        return f"{self.net.hosts[HEAD]}:{GCS_PORT}"

    def env(self, name: str) -> dict[str, str]:
        """The environment of every process on host ``name``: the token, no inherited Ray settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token, RAY_USAGE_STATS_ENABLED="0",
                   TUNEFARM_MEASURE_LOCK=os.path.join(self._tmp, name, "measure.lock"))
        return env

    def popen(self, name: str, argv: list[str], log=None) -> subprocess.Popen:
        """Start ``argv`` on host ``name``, its output appended to ``log`` (default ``<workdir>/<name>.log``)."""
        with open(log or self.workdir / f"{name}.log", "ab") as out:
            p = subprocess.Popen(self.net.exec_argv(name, argv), env=self.env(name), stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir)
        self._procs.append(p)
        return p

    def run(self, name: str, argv: list[str], timeout_s: float = 120.0) -> str:
        """Run ``argv`` on host ``name`` to completion; its stdout, or NetnsError with its output."""
        p = subprocess.run(self.net.exec_argv(name, argv), env=self.env(name), capture_output=True, text=True,
                           timeout=timeout_s, stdin=subprocess.DEVNULL, cwd=self.workdir)
        if p.returncode != 0:
            raise NetnsError(f"on {name}: {' '.join(argv[:3])}... exited {p.returncode}: "
                             f"{(p.stderr or p.stdout).strip()[-2000:]}")
        return p.stdout

    # ------------------------------------------------------------------ Ray on the hosts
    def _ray_start_argv(self, name: str) -> list[str]:
        temp_dir = os.path.join(self._tmp, name)
        os.makedirs(temp_dir, exist_ok=True)
        argv = [self._ray_bin, "start", f"--node-ip-address={self.net.hosts[name]}", f"--temp-dir={temp_dir}",
                f"--num-cpus={_CPUS_PER_HOST}", f"--object-store-memory={_OBJECT_STORE_BYTES}",
                "--disable-usage-stats"]
        if name == HEAD:
            return argv + ["--head", f"--port={GCS_PORT}", "--include-dashboard=false"]
        return argv + [f"--address={self.address}", "--resources=" + json.dumps({"measure_slot": 1})]

    def _start_ray(self, names: list[str], timeout_s: float = 180.0) -> None:
        """``ray start`` on every host of ``names`` at once; returns when each is an alive node of the cluster."""
        procs = {n: self.popen(n, self._ray_start_argv(n)) for n in names}
        for n, p in procs.items():
            try:
                rc = p.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise NetnsError(f"ray start on {n} did not return in {timeout_s:.0f} s "
                                 f"(see {self.workdir / (n + '.log')})") from None
            if rc != 0:
                raise NetnsError(f"ray start on {n} exited {rc} (see {self.workdir / (n + '.log')})")
            self.joined[n] = time.time()
        self.wait_alive(names, timeout_s)

    def add_host(self, name: str) -> None:
        """A new worker host joins the cluster (mid-job, say); returns once its node is alive."""
        self.net.add(name)
        self._start_ray([name])

    def heal(self) -> list[str]:
        """Back to the head and the worker hosts it started with, all alive: a worker host that died, was cut
        off or drained is replaced by a fresh one of the same name (a new address, as a new machine gets),
        hosts added since are removed. Returns the hosts replaced."""
        alive = {n["ip"] for n in self.nodes() if n["alive"] and not n["draining"]}
        for extra in [h for h in self.net.hosts if h != HEAD and h not in self.workers]:
            self.net.remove(extra)
        broken = [h for h in self.workers if self.net.hosts[h] not in alive]
        for h in broken:
            self.net.remove(h)
            self.net.add(h)
        if broken:
            self._start_ray(broken)
        return broken

    def nodes(self) -> list[dict]:
        """Every node the GCS knows (``netns_gcs.nodes``), asked from the head host."""
        # the GCS is asked from inside the head's namespace: the only place its address exists
        out = self.run(HEAD, [sys.executable, "-m", "tunefarm.testing.netns_gcs", self.address], timeout_s=60)
        return json.loads(out)

    def wait_alive(self, names: list[str], timeout_s: float = 120.0) -> None:
        want = {self.net.hosts[n] for n in names}
        deadline = time.monotonic() + timeout_s
        while True:
            alive = {n["ip"] for n in self.nodes() if n["alive"]}
            if want <= alive:
                return
            if time.monotonic() > deadline:
                raise NetnsError(f"nodes {sorted(want - alive)} never became alive")
            time.sleep(0.5)

    def node_id(self, name: str) -> str:
        """The id of host ``name``'s alive node."""
        ip = self.net.hosts[name]
        ids = [n["node_id"] for n in self.nodes() if n["ip"] == ip and n["alive"]]
        if len(ids) != 1:
            raise NetnsError(f"host {name} ({ip}) has {len(ids)} alive Ray nodes")
        return ids[0]

    # ------------------------------------------------------------------ drills
    def kill(self, name: str) -> None:
        """Host ``name`` dies: SIGKILL for every process on it (raylet, workers, object store, a driver)."""
        self.net.kill(name)

    def cut(self, name: str) -> None:
        """Host ``name``'s link goes down: nothing reaches it or leaves it, its processes live on."""
        self.net.cut(name)

    def restore(self, name: str) -> None:
        self.net.restore(name)

    def drain(self, name: str, deadline_s: int, message: str = "spot instance reclaimed") -> str:
        """Tell Ray that host ``name`` will be preempted in ``deadline_s`` seconds, as a cloud autoscaler does
        (``ray drain-node --reason DRAIN_NODE_REASON_PREEMPTION``); returns its node id. Ray kills nothing:
        the caller kills the host at the deadline, as the cloud would."""
        node = self.node_id(name)
        self.run(HEAD, [self._ray_bin, "drain-node", f"--address={self.address}", f"--node-id={node}",
                        "--reason=DRAIN_NODE_REASON_PREEMPTION", f"--reason-message={message}",
                        f"--deadline-remaining-seconds={deadline_s}"], timeout_s=60)
        return node

    def tune(self, name: str, workload: str, trials: int, db, log, *extra: str) -> subprocess.Popen:
        """A driver on host ``name``: ``tunefarm tune WORKLOAD --ray-address <head>``, its output in ``log``."""
        return self.popen(name, [sys.executable, "-m", "tunefarm.cli", "tune", workload, "--trials", str(trials),
                                 "--db", str(db), "--ray-address", self.address, *extra], log=log)

    def close(self) -> None:
        """Everything goes: every host's processes (SIGKILL), links, bridge, namespaces, Ray's directories."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            self.net.close()
        finally:
            for p in self._procs:
                if p.poll() is None:  # a launcher outside the namespaces (ip netns exec itself), if any
                    p.kill()
                p.wait()
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "NetnsRayCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
