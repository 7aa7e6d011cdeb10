"""RayFarm on a 3-node local Ray cluster (``ray.cluster_utils.Cluster``): a full measurement job, faults, a node
removed mid-job, and the metrics the Grafana dashboard reads. Marked ``cluster``: CI runs this file as its own
step (``pytest -m cluster tests/farm``); it takes a few minutes on a 2-core machine.

A fourth node without the ``measure_slot`` resource checks that only nodes advertising it host workers.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
import urllib.request
from pathlib import Path

import pytest

from farm_programs import candidate, hang_func, matmul_func, oob_func, tiled_trace
from tunefarm.farm import MeasureStatus, RayFarm
from tunefarm.farm.metrics import exported_names
from tunefarm.testing.drills import in_flight_by_node, stopped_mid_item, worker_info
from tunefarm.testing import batch

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600)]

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "grafana_tunefarm.json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    port = _free_port()
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"measure_slot": 1}, "include_dashboard": False, "metrics_export_port": port})
    workers = [c.add_node(num_cpus=1, resources={"measure_slot": 1}) for _ in range(2)]
    bystander = c.add_node(num_cpus=1)  # no measure_slot: must not host workers
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    c.metrics_port = port
    c.worker_nodes_list = workers
    c.bystander = bystander
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def farm(cluster, tmp_path_factory):
    lock = str(tmp_path_factory.mktemp("lock") / "lock")
    # batches of up to 4 (not the default 8): the stop drills stop a worker between two of its results, so they
    # need results to come back a few at a time (with 8, 24 items went out as one call per worker)
    with RayFarm(address=cluster.address, lock_path=lock, progress_timeout_s=5.0, inflight_per_worker=8) as f:
        yield f


def _job(n: int = 12):
    mm = matmul_func(32)
    return [candidate(mm, tiled_trace(mm, (None, [2, 4, 8, 16][i % 4])), timeout_s=30.0) for i in range(n)]


def test_full_job_spreads_over_the_measuring_nodes(farm, cluster):
    assert farm.num_workers == 3
    nodes = {i["node_id"] for i in worker_info(farm)}
    assert len(nodes) == 3 and cluster.bystander.node_id not in nodes
    cands = _job(12)
    seen = []
    for i, r in batch.submit(farm, cands):
        seen.append(i)
        assert r.status is MeasureStatus.OK, r.error
        assert r.run_secs and r.build_secs > 0 and r.host
    assert sorted(seen) == list(range(12))


def test_segfaulting_and_hanging_candidates(farm):
    cands = _job(6)
    cands.insert(2, candidate(oob_func()))
    cands.insert(4, candidate(hang_func(), timeout_s=3.0))
    t0 = time.monotonic()
    results = batch.measure(farm, cands)
    statuses = [r.status.value for r in results]
    assert statuses == ["ok", "ok", "worker_lost", "ok", "timeout", "ok", "ok", "ok"], [r.error for r in results]
    assert time.monotonic() - t0 < 90
    assert farm.num_workers == 3  # both actors were restarted
    assert all(r.ok for r in batch.measure(farm, _job(3)))


def test_a_worker_killed_by_sigkill(farm):
    pids = [i["pid"] for i in worker_info(farm)]
    cands = _job(12)
    results = {}
    for i, r in batch.submit(farm, cands):
        results[i] = r
        if len(results) == 2:
            os.kill(pids[0], signal.SIGKILL)  # a worker dies under whatever it is measuring
    assert sorted(results) == list(range(12))
    lost = [i for i, r in results.items() if r.status is MeasureStatus.WORKER_LOST]
    assert len(lost) <= 1
    assert all(r.ok for i, r in results.items() if i not in lost), [r.error for r in results.values()]
    assert farm.num_workers == 3
    assert pids[0] not in {i["pid"] for i in worker_info(farm)}


def test_a_node_removed_mid_job_loses_only_its_in_flight_trials(farm, cluster):
    victim = cluster.worker_nodes_list[0]
    # enough items that the victim still holds some once the job is in stride (a short job can be over on the
    # victim before its third result is in, and then nothing is removed)
    cands = _job(48)
    results = {}
    requeued_before = farm.stats.requeued
    removed = False
    for i, r in batch.submit(farm, cands):
        assert i not in results, "a result was returned twice"
        results[i] = r
        if not removed and len(results) >= 3 and in_flight_by_node(farm).get(victim.node_id, 0) > 0:
            cluster.remove_node(victim)
            removed = True
    assert removed
    assert sorted(results) == list(range(48))
    assert all(r.ok for r in results.values()), [r.error for r in results.values() if not r.ok]
    assert farm.stats.requeued - requeued_before >= 1
    assert farm.num_workers == 2
    assert all(r.ok for r in batch.measure(farm, _job(4)))


def _scrape(port: int) -> str:
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()


def test_dashboard_metrics_are_exported_by_ray(farm, cluster):
    """Every series the dashboard queries shows up on the head node's Prometheus endpoint."""
    exprs = [t["expr"] for p in json.loads(DASHBOARD.read_text())["panels"] for t in p.get("targets", [])]
    import re

    wanted = {m for e in exprs for m in re.findall(r"\bray_tunefarm_[a-z_]+", e)}
    assert wanted and wanted <= exported_names()
    # all in one scrape, after the farm idled for longer than the ~20 s Ray keeps a gauge series that is not set
    # again: the gauges stay because the farm sets them again every few seconds (metrics.REFRESH_S)
    time.sleep(25)
    deadline = time.monotonic() + 60
    missing = wanted
    while time.monotonic() < deadline:
        text = _scrape(cluster.metrics_port)
        present = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line.startswith("ray_tunefarm_")}
        missing = wanted - present
        if not missing:
            break
        time.sleep(0.5)
    assert not missing, f"the dashboard queries series Ray never exported: {sorted(missing)}"


def _stop_on(farm, node, results: dict, cands: list, stop, resume) -> list:
    """Measure ``cands``; once a few came back and ``node``'s worker has items, ``stop(pid of that worker)``.
    The driver's count of the worker's items lags the worker (its last item may be done, the reply on its way):
    when the stopped worker is not inside an item (its journal), ``resume(pid)`` and try again at the next
    result. Returns the results in order (each index once) after checking that a stop took.

    About a third of the tries land between two items (the worker's last result just came back, its next item not
    yet there), so the drills give ``_job(24)``: some 15 tries. A 12-item job once gave too few (CI: "never
    stopped inside an item"); longer items would not help, as a loaded host's measurements then crawl."""
    info = next(i for i in worker_info(farm) if i["node_id"] == node.node_id)
    stopped = False
    for i, r in batch.submit(farm, cands):
        assert i not in results, "a result was returned twice"
        results[i] = r
        if not stopped and len(results) >= 2 and in_flight_by_node(farm).get(node.node_id, 0) > 0:
            stop(info["pid"])
            stopped = stopped_mid_item(info)
            if not stopped:
                resume(info["pid"])
    assert stopped, "the worker was never stopped inside an item"
    assert sorted(results) == list(range(len(cands)))
    return [results[i] for i in range(len(cands))]


def test_a_worker_frozen_on_another_node_is_a_timeout_its_host_answering(farm, cluster):
    """The driver's node is the head: this worker's pid is not the driver's to look at, but its host answers a
    ping, so the worker is stuck (not cut off) and its item is a timeout."""
    victim = cluster.worker_nodes_list[1]
    workers = farm.num_workers
    t0 = time.monotonic()
    results = _stop_on(farm, victim, {}, _job(24), lambda pid: os.kill(pid, signal.SIGSTOP),
                       lambda pid: os.kill(pid, signal.SIGCONT))
    timeouts = [r for r in results if r.status is MeasureStatus.TIMEOUT]
    assert len(timeouts) == 1 and "progress query" in timeouts[0].error, [r.error for r in results]
    assert all(r.ok for r in results if r.status is not MeasureStatus.TIMEOUT), [r.error for r in results]
    assert time.monotonic() - t0 < 90
    assert farm.wait_ready(60.0) == workers  # the frozen actor was killed and restarted in place


def test_a_host_that_stops_answering_has_its_items_measured_elsewhere(farm, cluster):
    """The victim node's raylet and worker are stopped, as when its link is cut: neither the worker nor a ping
    of its host answers, so the item in flight there is re-queued and measured on another node (ok, once), not
    recorded as a timeout; the node gets no items again."""
    from ray._private import ray_constants

    victim = cluster.worker_nodes_list[1]
    raylet = victim.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
    requeued, workers = farm.stats.requeued, farm.num_workers
    stopped = [raylet]

    def cut(pid):
        stopped[1:] = [pid]
        for p in stopped:
            os.kill(p, signal.SIGSTOP)

    def restore(pid):
        for p in reversed(stopped):
            os.kill(p, signal.SIGCONT)

    try:
        results = _stop_on(farm, victim, {}, _job(24), cut, restore)
        assert all(r.ok for r in results), [r.error for r in results]
        assert farm.stats.requeued - requeued >= 1
        assert farm.num_workers == workers - 1
        assert all(r.ok for r in batch.measure(farm, _job(3)))
        assert in_flight_by_node(farm).get(victim.node_id, 0) == 0
    finally:
        for p in stopped[1:]:  # (a stopped worker would not notice its raylet's end)
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        cluster.remove_node(victim, allow_graceful=False)
