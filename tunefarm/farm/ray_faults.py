"""RayFarm's bookkeeping of calls on actors, and what it decides when an actor fails or an item runs too long.

A ``Slot`` is one worker actor with the calls it was sent (the first one runs; the budget clock of the next
starts when the one before it returns). ``SlotFaults`` is the part of RayFarm (mixed into it, ray_farm.py) that
turns failures into outcomes:

- a failed call makes the driver ping the actor: the restarted actor answers with its journal (journal.py),
  which says which call was running when the process died (LOST), which finished but lost its reply (its
  journalled outcome is returned) and which never started (re-queued without blame, a few times);
- without a journal, the call at the head of the slot is the suspect and the others are re-queued;
- a node that left the cluster has its calls re-queued once (``requeue_limit``);
- an item over budget: the actor's ``progress`` is asked first (paused time is not charged), then the actor is
  ``ray.kill``ed (Ray restarts it) and the item is a TIMEOUT.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import time

from .dispatch import Item
from .trial_clock import pause_limit_error
from .work import DoneStatus


@dataclasses.dataclass(eq=False)
class Call:
    item: Item
    token: int
    ref: object
    timeout_s: float
    started: float = 0.0           # when we believe it started running (head of the slot's queue)
    deadline: float = 0.0
    killed: str = ""               # why we killed the worker for this call (a timeout), or ""
    rearms: int = 0                # deadline re-arms because the call had not started yet
    orphaned: bool = False         # queued on an actor incarnation that died before running it
    suspect: bool = False          # was running when its actor died, by the driver's reckoning
    progress_ref: object = None
    progress_deadline: float = 0.0


class Slot:
    """One worker actor and the calls it has been sent."""

    def __init__(self, actor, node_id: str, host: str):
        self.actor = actor
        self.node_id = node_id
        self.host = host
        self.worker_id = ""            # the process's id (WorkerContext.worker_id), from its last info answer
        self.state = "starting"        # starting -> ready <-> probing ; -> dead
        self.ready_ref = None
        self.ready_deadline = 0.0
        self.calls: collections.deque[Call] = collections.deque()
        self.retire = False
        self.lost: list[Call] = []     # failed calls waiting for the ping's verdict
        self.shared_sent: set[str] = set()  # shared texts whose references this incarnation was sent
        self.error = ""                # why the actor could not be reached, when it could not

    def restart_head_clock(self) -> None:
        if self.calls:
            head = self.calls[0]
            head.started = time.monotonic()
            head.deadline = head.started + head.timeout_s


class SlotFaults:
    """Fault handling of RayFarm (which provides ``_ray``, ``_slots``, ``_queue``, ``_by_ref``, ``stats``...)."""

    def _set_state(self, slot: Slot, state: str) -> None:
        slot.state = state
        if state == "ready":
            self.stats.uptime.up(slot)
        else:
            self.stats.uptime.down(slot)
            slot.shared_sent.clear()  # a restarted process holds no shared text

    def _finish_call(self, slot: Slot, call: Call, out: dict) -> None:
        """The outcome a worker returned (or journalled) for ``call``."""
        ok = out["status"] == "ok"
        self._finish(call.item, DoneStatus(out["status"]), json.loads(out["value"]) if ok else None, out["error"],
                     out.get("worker", slot.worker_id), slot.host, float(out.get("busy_secs", 0.0)))

    def _lose(self, slot: Slot, call: Call, why: str) -> None:
        self._finish(call.item, DoneStatus.LOST, error=f"lost while running it: {why}", worker=slot.worker_id,
                     host=slot.host, busy_secs=max(0.0, time.monotonic() - call.started) if call.started else 0.0)

    def _slot_answered(self, slot: Slot, ref) -> None:
        """A readiness check (new actor) or a ping after a failure came back."""
        slot.ready_ref = None
        try:
            info = self._ray.get(ref)
        except self._unavailable_error:
            if time.monotonic() < slot.ready_deadline:  # still restarting: ask again
                slot.ready_ref = slot.actor.info.remote()
                return
            node_alive = self._node_alive(slot.node_id)
        except self._worker_errors as e:
            slot.error = str(e)
            # unschedulable means its (pinned) node no longer exists, whatever the GCS says yet
            node_alive = not isinstance(e, self._node_gone_error) and self._node_alive(slot.node_id)
        else:
            self._set_state(slot, "ready")
            slot.restart_head_clock()  # calls sent before the failure that the restarted actor will still run
            lost, slot.lost = slot.lost, []
            self._verdict(slot, lost, node_alive=True, journal=info.get("journal"))  # (blames the old process)
            slot.worker_id = info["worker"]
            return
        lost, slot.lost = slot.lost, []
        self._kill_slot(slot)
        return self._verdict(slot, lost, node_alive=node_alive)

    def _node_alive(self, node_id: str) -> bool:
        if node_id in self._dead_nodes:
            return False
        for n in self._ray.nodes():
            if n["NodeID"] == node_id:
                if not n.get("Alive"):
                    self._dead_nodes.add(node_id)
                    return False
                return True
        self._dead_nodes.add(node_id)
        return False

    def _kill_slot(self, slot: Slot) -> None:
        self._set_state(slot, "dead")
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _remove_call(self, slot: Slot, call: Call) -> None:
        was_head = slot.calls and slot.calls[0] is call
        slot.calls.remove(call)
        if was_head:  # the next call starts now
            slot.restart_head_clock()

    def _call_failed(self, slot: Slot, call: Call) -> None:
        """The actor died or vanished under this call; a ping to the actor decides what that means."""
        was_head = bool(slot.calls) and slot.calls[0] is call
        slot.calls.remove(call)
        if call.killed:
            self._finish(call.item, DoneStatus.TIMEOUT, error=call.killed, worker=slot.worker_id, host=slot.host,
                         busy_secs=max(0.0, time.monotonic() - call.started))
        else:  # the ping's answer (the journal) decides; without one, the call at the head is the suspect
            call.suspect = was_head and not call.orphaned
            slot.lost.append(call)
        if was_head:  # the calls queued behind it never ran on the incarnation that just died
            for other in slot.calls:
                other.orphaned = True
        # (a queued call can report its failure before the head does; the head, still running when the actor
        # died, stays the suspect)
        if slot.state in ("ready", "starting"):
            self._set_state(slot, "probing")
            slot.ready_ref = slot.actor.info.remote()
            slot.ready_deadline = time.monotonic() + self.start_timeout_s
        elif slot.state == "dead":
            lost, slot.lost = slot.lost, []
            self._verdict(slot, lost, node_alive=self._node_alive(slot.node_id))

    def _verdict(self, slot: Slot, lost: list[Call], node_alive: bool, journal: dict | None = None) -> None:
        for call in lost:
            if journal is not None:  # the restarted actor's account of what its dead process did
                done = journal["done"].get(call.token)
                if done is not None:  # it ran; its reply died with the process
                    out, compiles = done
                    self._finish_call(slot, call, out)
                    self.stats.recovered += 1
                    slot.retire = slot.retire or compiles >= self.max_compiles
                    continue
                if call.token not in journal["crashed"]:
                    self._requeue_unblamed(call.item, slot.worker_id, slot.host)
                    continue
            elif not call.suspect:
                self._requeue_unblamed(call.item, slot.worker_id, slot.host)
                continue
            if not node_alive and call.item.attempt < self.requeue_limit:
                call.item.attempt += 1
                self._queue.push(call.item, front=True)
                self.stats.requeued += 1
                if self._metrics is not None:
                    self._metrics.requeued()
                continue
            self._lose(slot, call, "its node left the cluster" if not node_alive else
                       "the worker process died (a crash in native code, or it was killed)")
        if slot.state == "dead":
            # calls still queued on a dead actor will fail; give them back to the queue now
            for call in list(slot.calls):
                self._by_ref.pop(call.ref, None)
                self._queue.push(call.item, front=True)
            slot.calls.clear()

    def _progress_answered(self, slot: Slot, call: Call, ref) -> None:
        call.progress_ref = None
        try:
            snap = self._ray.get(ref)
        except self._worker_errors:
            return  # the call itself will report the failure
        now = time.monotonic()
        if snap["token"] != call.token:
            # not started yet (actor restarting, or the reply is on its way): restart the clock, a few times
            call.rearms += 1
            if call.rearms > 5:
                return self._kill_for_timeout(slot, call, "the worker answers but never started the item; "
                                              "worker killed")
            call.started = now
            call.deadline = now + call.timeout_s
        elif snap["paused"]:
            call.deadline = now + max(0.0, self.pause_limit_s - snap["paused_secs"])
            if snap["paused_secs"] >= self.pause_limit_s:
                self._kill_for_timeout(slot, call, pause_limit_error(snap["paused"], self.pause_limit_s))
        elif snap["active_secs"] < call.timeout_s:
            call.deadline = now + (call.timeout_s - snap["active_secs"])
        else:
            self._kill_for_timeout(slot, call)

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for s in self._slots:
            if s.state == "starting" and s.ready_ref is not None and now >= s.ready_deadline:
                s.ready_ref = None
                self._kill_slot(s)
                continue
            if s.state != "ready" or not s.calls:
                continue
            head = s.calls[0]
            if head.killed:
                if now >= head.deadline:  # Ray never reported the killed call: settle it ourselves
                    self._by_ref.pop(head.ref, None)
                    s.calls.popleft()
                    self._finish(head.item, DoneStatus.TIMEOUT, error=head.killed, worker=s.worker_id, host=s.host)
                    self._kill_slot(s)
                continue
            if head.progress_ref is not None:
                if now >= head.progress_deadline:  # the actor does not even answer: it is stuck
                    head.progress_ref = None
                    self._kill_for_timeout(s, head, f"item exceeded its {head.timeout_s:g} s budget and the "
                                           "worker did not answer a progress query; worker killed")
            elif now >= head.deadline:
                head.progress_ref = s.actor.progress.remote()
                head.progress_deadline = now + self.progress_timeout_s

    def _kill_for_timeout(self, slot: Slot, call: Call, why: str = "") -> None:
        call.killed = why or f"item exceeded its {call.timeout_s:g} s budget; worker killed"
        call.deadline = time.monotonic() + self.start_timeout_s
        self._ray.kill(slot.actor, no_restart=False)  # Ray restarts it; the call fails -> timeout
