"""RayFarm's watch over the cluster while a job runs: nodes that join, and nodes that are drained or preempted.

Once a second (while the driver waits anyway) the farm reads the draining nodes from Ray's GCS
(``get_draining_nodes``, the state that ``ray drain-node`` and the autoscaler's preemption or scale-down notice
set), and the node table (``ray.nodes()``) every ``_NODES_EVERY_S`` while the cluster stays as it was (every
second while a node it found is being probed): each read is a GCS round trip that costs the driver about as
much CPU as a trial's bookkeeping, and a node that leaves is also found at once by its workers' failures:

- a node that joined is asked for its CPU (node_info.py, a task that does not wait for the farm's workers to
  finish); a node that matches the farm's target gets workers at once, one per free CPU (or as many as the
  farm is short of ``num_workers``), and they take items as soon as they answer their first ping;
- a node being drained gets no new item: its workers hand back the items of their batches that have not
  started (they are re-queued at the front), finish the one that runs, and are stopped, so the node can go
  before its deadline. If the node goes first, what ran there is re-queued without counting against the
  farm's ``requeue_limit`` (``_preempted``): a preempted spot node is nobody's fault, and the job goes on with
  fewer workers. A node whose death Ray records as a drain (preempted or idle) counts the same.
"""
from __future__ import annotations

import logging
import time

from .node_info import NodeInfo, probe_task

log = logging.getLogger("tunefarm.farm")

_WATCH_EVERY_S = 1.0   # the draining table: a preemption notice leaves seconds
_NODES_EVERY_S = 3.0   # the node table: a node that joins runs items well within 10 s
_DRAINED = (3, 4)  # NodeDeathInfo.AUTOSCALER_DRAIN_PREEMPTED, AUTOSCALER_DRAIN_IDLE (ray.nodes()'s DeathReason)


class NodeWatch:
    """The cluster-watching part of RayFarm (which provides ``_ray``, ``nodes``, ``_slots``, ``_spawn_workers``...)."""

    def _init_node_watch(self) -> None:
        self._next_watch = time.monotonic() + _WATCH_EVERY_S
        self._next_table = time.monotonic() + _NODES_EVERY_S
        self._node_probes: dict = {}        # probe ref -> (node id, when asked)
        self._asked_nodes: set[str] = set()  # nodes probed (or being probed)
        self._draining_nodes: set[str] = set()
        self._preempted: set[str] = set()    # nodes drained or preempted: their lost items are not counted
        self._topup_due = False

    def _watch_nodes(self) -> None:
        now = time.monotonic()
        if now < self._next_watch:
            return
        self._next_watch = now + _WATCH_EVERY_S
        for node_id in self._draining_now():
            if node_id not in self._draining_nodes:
                self._drain(node_id)
        if now >= self._next_table or self._node_probes:
            self._read_node_table(now)
        self._top_up()

    def _read_node_table(self, now: float) -> None:
        """Nodes that left (or died) and nodes that joined; probes that never answered are asked again."""
        try:
            table = self._ray.nodes()
        except Exception:  # noqa: BLE001 - the GCS is unreachable for a moment: look again next time
            return
        self._next_table = now + _NODES_EVERY_S
        for n in table:
            node_id = n["NodeID"]
            if not n.get("Alive"):
                if node_id not in self._dead_nodes and node_id in self._asked_nodes:
                    self._node_died(node_id, n)
        for n in self._matching_resource([n for n in table if n.get("Alive")]):
            if n["NodeID"] not in self._asked_nodes:
                self._probe_node(n)
        for ref, (node_id, asked) in list(self._node_probes.items()):
            if now - asked > self.start_timeout_s:  # never answered: forget it, ask again later
                del self._node_probes[ref]
                self._asked_nodes.discard(node_id)

    def _draining_now(self) -> set[str]:
        from ray._private.state import state  # (private GCS accessor: the draining table has no public API)

        try:
            return set(state.get_draining_nodes())
        except Exception:  # noqa: BLE001 - the GCS is unreachable for a moment, or the API moved
            return set()

    def _matching_resource(self, alive: list[dict]) -> list[dict]:
        marked = [n for n in alive if n.get("Resources", {}).get(self.node_resource, 0) > 0]
        return marked or alive

    def _probe_node(self, n: dict) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        strategy = NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        ref = probe_task().options(scheduling_strategy=strategy).remote(
            n["NodeID"], float(n.get("Resources", {}).get("CPU", 0)), n.get("NodeManagerAddress", ""))
        self._asked_nodes.add(n["NodeID"])
        self._node_probes[ref] = (n["NodeID"], time.monotonic())

    def _node_probed(self, ref) -> None:
        node_id, _ = self._node_probes.pop(ref, (None, 0.0))
        if node_id is None:
            return
        try:
            info = NodeInfo.from_dict(self._ray.get(ref))
        except self._worker_errors:
            self._asked_nodes.discard(node_id)  # it went away while we asked (or will be asked again)
            return
        if info.matches(self._target) and all(i.node_id != node_id for i in self.nodes):
            self.nodes.append(info)
            self._topup_due = True

    def _node_died(self, node_id: str, entry: dict | None) -> None:
        if node_id not in self._dead_nodes:
            log.warning("node %s left the cluster or cannot be reached: no more items go there", node_id)
        self._dead_nodes.add(node_id)
        if node_id in self._draining_nodes or (entry is not None and entry.get("DeathReason") in _DRAINED):
            self._preempted.add(node_id)
        self._topup_due = True

    def _drain(self, node_id: str) -> None:
        """No new item on the node; its workers hand back what they have not started, then stop."""
        self._draining_nodes.add(node_id)
        self._preempted.add(node_id)
        for s in self._slots:
            if s.node_id != node_id or s.state == "dead":
                continue
            s.draining = True
            self._refresh(s)
            if not s.calls:
                self._kill_slot(s)
            else:
                self._hand_back(s)
        self._topup_due = True

    def _hand_back(self, slot) -> None:
        ref = slot.actor.hand_back.remote()
        self._probes[ref] = ("hand_back", slot, None)

    def _top_up(self) -> None:
        """Workers for nodes that joined, or in place of workers lost with their node."""
        if not self._topup_due:
            return
        self._topup_due = False
        if self.num_requested is None:
            self._want = None  # every free CPU of the matching nodes, as they are now
        self._spawn_workers(required=False, wait_s=0.0)
