"""What a fault drill needs to know about a RayFarm's workers: which processes to kill, which node is busy.

These read the farm's private bookkeeping (ray_faults.Slot): they are drill tooling, not an interface a job
should depend on. A job learns its workers from ``Done.worker`` (``"host:pid"``) and ``Done.host``.
"""
from __future__ import annotations

import collections

from tunefarm.farm.journal import TrialJournal


def worker_info(farm) -> list[dict]:
    """``{pid, node_id, host, worker, compiles, journal, journal_path, journal_pid}`` of every ready worker of a
    RayFarm."""
    slots = [s for s in farm._slots if s.state == "ready"]
    return farm._ray.get([s.actor.info.remote() for s in slots])


def in_flight_by_node(farm) -> dict[str, int]:
    """Calls currently sent to each node's workers of a RayFarm."""
    out: dict[str, int] = collections.Counter()
    for s in farm._slots:
        if s.state != "dead":
            out[s.node_id] += len(s.calls)
    return dict(out)


def stopped_mid_item(info: dict) -> bool:
    """Whether the worker ``info`` (from ``worker_info``), whose process the drill has just stopped (SIGSTOP),
    stopped inside an item: its journal (on this machine's disk, as on a one-machine test cluster) holds an item
    that this process started and did not finish. The driver's count of a worker's items lags the worker (the
    last one may be done, its reply on its way), so a drill that needs a worker frozen under an item checks
    this, and lets the process go on (SIGCONT) and tries again later when it is not."""
    return any(e.get("pid") == info["journal_pid"] and "result" not in e
               for e in TrialJournal(info["journal_path"]).entries)
