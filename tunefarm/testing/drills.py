"""What a fault drill needs to know about a RayFarm's workers: which processes to kill, which node is busy.

These read the farm's private bookkeeping (ray_faults.Slot): they are drill tooling, not an interface a job
should depend on. A job learns its workers from ``Done.worker`` (``"host:pid"``) and ``Done.host``.
"""
from __future__ import annotations

import collections


def worker_info(farm) -> list[dict]:
    """``{pid, node_id, host, worker, compiles, journal}`` of every ready worker of a RayFarm."""
    slots = [s for s in farm._slots if s.state == "ready"]
    return farm._ray.get([s.actor.info.remote() for s in slots])


def in_flight_by_node(farm) -> dict[str, int]:
    """Calls currently sent to each node's workers of a RayFarm."""
    out: dict[str, int] = collections.Counter()
    for s in farm._slots:
        if s.state != "dead":
            out[s.node_id] += len(s.calls)
    return dict(out)
