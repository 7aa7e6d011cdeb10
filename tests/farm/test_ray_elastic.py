"""RayFarm on a ``ray.cluster_utils.Cluster`` that changes under a running stream of work: a node that joins
gets workers and runs items; a node drained for preemption (what ``ray drain-node --reason
DRAIN_NODE_REASON_PREEMPTION`` and the autoscaler's notice do) gets no new item, and every item still ends
once, run once; items lost with a preempted node do not count against ``requeue_limit``. Marked ``cluster``
(CI's cluster step runs it).
"""
from __future__ import annotations

import collections
import time

import pytest

from tunefarm.farm import DoneStatus, RayFarm, Work

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600)]

TALLY = "tunefarm.testing.handlers:tally"


@pytest.fixture(scope="module")
def cluster():
    """A head with one CPU; each test adds the nodes it changes."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def stream(farm, n: int, path: str, secs: float, event) -> dict[int, object]:
    """Put ``n`` tally items, keeping the farm at capacity; ``event(done_so_far)`` runs after every poll.
    Returns ticket -> Done, each ticket exactly once."""
    todo = [Work(TALLY, {"path": path, "tag": i, "secs": secs}, timeout_s=60.0, tag=i) for i in range(n)]
    tickets, done = [], {}
    deadline = time.monotonic() + 300
    while todo or farm.pending:
        while todo and farm.pending < farm.capacity:
            tickets.append(farm.put(todo.pop(0)))
        for d in farm.poll(1.0):
            assert d.ticket not in done, f"ticket {d.ticket} returned twice"
            done[d.ticket] = d
        event(done)
        assert time.monotonic() < deadline, "the stream did not finish"
    assert sorted(done) == sorted(tickets)
    return done


def ran_once(path: str, n: int) -> None:
    with open(path, encoding="utf-8") as f:
        counts = collections.Counter(int(line) for line in f)
    assert sorted(counts) == list(range(n)) and set(counts.values()) == {1}, counts


def drain(node_id: str, deadline_s: int = 60) -> None:
    """What ``ray drain-node --reason DRAIN_NODE_REASON_PREEMPTION`` does."""
    import ray
    from ray.core.generated import autoscaler_pb2

    gcs = ray._private.worker.global_worker.gcs_client
    reason = autoscaler_pb2.DrainNodeReason.Value("DRAIN_NODE_REASON_PREEMPTION")
    accepted, why = gcs.drain_node(node_id, reason, "spot instance reclaimed", time.time_ns() // 10**6 + deadline_s * 1000)
    assert accepted, why


def test_a_node_that_joins_mid_job_gets_workers_and_runs_items(cluster, tmp_path):
    path = str(tmp_path / "tally")
    joined = {}

    def add_node(done):
        if not joined and len(done) >= 4:
            joined["node"] = cluster.add_node(num_cpus=1)
            joined["t"] = time.monotonic()  # (add_node returns once the node has joined)

    with RayFarm(address=cluster.address, metrics=False) as farm:
        before = farm.num_workers
        done = stream(farm, 120, path, 0.3, add_node)
        assert farm.num_workers == before + 1
    assert all(d.status is DoneStatus.OK for d in done.values()), [d.error for d in done.values()]
    there = [d.value["start"] for d in done.values() if d.value["node_id"] == joined["node"].node_id]
    print("job ended", max(d.value["start"] for d in done.values()) - joined["t"], "s after the join")
    assert there, "the node that joined ran nothing"
    print(f"first item on the new node started {min(there) - joined['t']:.1f} s after it joined")
    assert min(there) - joined["t"] < 60.0
    ran_once(path, 120)


@pytest.mark.parametrize("kill", [False, True], ids=["drained", "drained-then-killed"])
def test_a_node_drained_for_preemption_gets_no_new_items_and_nothing_is_lost(cluster, tmp_path, kill):
    import ray

    path = str(tmp_path / "tally")
    node = cluster.add_node(num_cpus=1)
    victim = node.node_id
    drained = {}

    def preempt(done):
        if drained or len(done) < 4:
            return
        busy = sum(len(s.calls) for s in farm._slots if s.node_id == victim and s.state != "dead")
        if busy:
            drain(victim)
            drained["t"] = time.monotonic()
            if kill:  # the provider takes the node at once: what ran there is lost with it
                cluster.remove_node(node, allow_graceful=False)

    # requeue_limit=0: an item lost with a node that crashed would be LOST; with a preempted one it is re-run
    with RayFarm(address=cluster.address, metrics=False, requeue_limit=0) as farm:
        before = farm.num_workers
        assert victim in {s.node_id for s in farm._slots}
        done = stream(farm, 40, path, 0.4, preempt)
        assert drained
        assert farm.num_workers == before - 1
    assert all(d.status is DoneStatus.OK for d in done.values()), [d.error for d in done.values() if d.error]
    late = [d for d in done.values() if d.value["node_id"] == victim and d.value["start"] > drained["t"] + 3.0]
    assert not late, "items started on the drained node after the farm saw the drain"
    ran_once(path, 40) if not kill else None
    if not kill:  # its workers stopped: the node could go before its deadline (Ray ends a drained, idle node)
        t = time.monotonic() + 30
        while time.monotonic() < t and any(n["NodeID"] == victim and n["Alive"] for n in ray.nodes()):
            time.sleep(0.5)
        assert not any(n["NodeID"] == victim and n["Alive"] for n in ray.nodes())
