"""What a node reports about itself: host name and CPU target (LLVM cpu name + features).

Tuning records are only comparable on the same CPU, so a farm measures a job on the nodes whose CPU matches
the job's target and stores results under that target. Each node answers for itself (a tiny Ray task pinned to
it), because the driver's CPU says nothing about a worker node's.
"""
from __future__ import annotations

import dataclasses
import os
import socket

from ..target import Target


@dataclasses.dataclass(frozen=True)
class NodeInfo:
    """``target`` is the canonical string of the node's host target (``Target.host()``)."""

    node_id: str
    hostname: str
    target: str
    cpu: str
    features: tuple[str, ...]
    num_cpus: float
    ip: str = ""

    def matches(self, target) -> bool:
        """Whether code built for ``target`` is measured faithfully here: same CPU name and feature set."""
        return self.cpu == target.cpu and tuple(self.features) == tuple(target.features)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["features"] = list(self.features)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NodeInfo":
        return cls(d["node_id"], d["hostname"], d["target"], d["cpu"], tuple(d["features"]),
                   float(d["num_cpus"]), d.get("ip", ""))


def local_node_info(node_id: str = "", num_cpus: float | None = None, ip: str = "") -> NodeInfo:
    """This machine's report (what every node runs)."""
    t = Target.host()
    return NodeInfo(node_id, socket.gethostname(), str(t), t.cpu, tuple(t.features),
                    float(num_cpus if num_cpus is not None else (os.cpu_count() or 1)), ip)


def _probe(node_id: str, num_cpus: float, ip: str) -> dict:
    return local_node_info(node_id, num_cpus, ip).to_dict()


def _ping() -> bool:
    return True


_TASKS: dict = {}


def _task(fn):
    """``fn`` as a Ray task (made once per process). It reserves no CPU (``num_cpus=0``): measurement actors
    may already hold every CPU, and a task waiting for a CPU they hold would wait forever."""
    import ray

    if fn not in _TASKS:
        _TASKS[fn] = ray.remote(num_cpus=0, max_retries=0)(fn)
    return _TASKS[fn]


def probe_task():
    """The probe as a Ray task (pin it to the node asked)."""
    return _task(_probe)


def ping_task():
    """A task that only answers: pinned to a node, whether the node itself can be reached (a worker there
    that does not answer is then stuck, not cut off)."""
    return _task(_ping)


def probe_nodes(nodes: list[dict], timeout_s: float = 120.0) -> list[NodeInfo]:
    """Ask each Ray node (entries of ``ray.nodes()``) for its ``NodeInfo``; unreachable nodes are skipped."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = probe_task()
    refs = {}
    for n in nodes:
        strategy = NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        ref = probe.options(scheduling_strategy=strategy).remote(
            n["NodeID"], float(n.get("Resources", {}).get("CPU", 0)), n.get("NodeManagerAddress", ""))
        refs[ref] = n["NodeID"]
    ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout_s)
    out = []
    for ref in ready:
        try:
            out.append(NodeInfo.from_dict(ray.get(ref)))
        except ray.exceptions.RayError:
            continue  # the node went away while we asked
    return sorted(out, key=lambda i: i.node_id)
