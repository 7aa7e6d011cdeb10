"""RayFarm's bookkeeping of calls on actors, and what it decides when an actor fails or an item runs too long.

``SlotFaults`` is the part of RayFarm (mixed into it, ray_farm.py) that turns
failures into outcomes:

- a failed batch makes the driver ping the actor: the restarted actor answers with its journal (journal.py),
  which says which call was running when the process died (LOST), which finished but lost its reply (its
  journalled outcome is returned) and which never started (re-queued without blame, a few times);
- without a journal, the head item is the suspect and the others are re-queued;
- a node that left the cluster has its items re-queued once (``requeue_limit``); a node that was drained for
  preemption (ray_nodes.py) has them re-queued without counting: losing a spot node is not the item's fault;
- an item over budget: the actor's ``progress`` is asked first (paused time is not charged), then the actor is
  ``ray.kill``ed (Ray restarts it) and the item is a TIMEOUT. An actor that does not even answer and is
  stopped (SIGSTOP) on the driver's own node is SIGKILLed as well: Ray's kill waits seconds for a process that
  cannot answer before it sends SIGKILL itself, and the job waits that long for the item;
- an actor on another host that does not answer: its host is pinged (a task pinned to it, ``HOST_PING_S`` to
  answer). If the host answers, the worker is stuck (TIMEOUT, as above); if it does not either, the host is
  cut off (its link, or the machine): a program never measured because its host became unreachable is no
  fault of the program, so the host counts as a node that left (its items re-queued once, ``requeue_limit``, its late
  replies never read, no new workers there for this farm).
"""
from __future__ import annotations

import json
import logging
import os
import signal
import time
import zlib

from .node_info import ping_task
from .ray_slots import ANSWER_EVERY_S, Batch, Call, Slot
from .trial_clock import pause_limit_error
from .work import DoneStatus

log = logging.getLogger("tunefarm.farm")

# How long a host has to answer the ping: the task needs a worker process there, which the node may have to
# start first (seconds on a loaded host). A live host that answered late would be taken for a cut-off one,
# and the frozen worker's item re-queued instead of charged as the timeout it is.
HOST_PING_S = 20.0


def kill_if_stopped(pid: int) -> bool:
    """SIGKILL process ``pid`` of this host if it is a Ray worker that is stopped (``T``); True if it was."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        if stat[stat.rfind(b")") + 2:][:1] != b"T" or not cmdline.startswith(b"ray::"):
            return False
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        return False
    return True


def _next_look(left_s: float) -> float:
    """Seconds until the running item is looked at again: when its budget (or pause limit) runs out, and at
    least every ``ANSWER_EVERY_S`` (a frozen actor does not answer)."""
    return max(0.0, min(left_s, ANSWER_EVERY_S))


class SlotFaults:
    """Fault handling of RayFarm (which provides ``_ray``, ``_slots``, ``_queue``, ``_by_ref``, ``stats``...)."""

    def _finish_call(self, slot: Slot, call: Call, out: dict) -> None:
        """The outcome a worker returned (or journalled) for ``call``."""
        ok, value = out["status"] == "ok", out.get("value")
        if ok and isinstance(value, bytes):  # a long value comes back compressed (ray_worker.PACK_ABOVE)
            value = zlib.decompress(value)
        self._finish(call.item, DoneStatus(out["status"]), json.loads(value) if ok else None, out["error"],
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
                self._ask_ready(slot, renew=False)
                return
            node_alive = self._node_alive(slot.node_id)
        except self._worker_errors as e:
            slot.error = str(e)
            # unschedulable means its (pinned) node no longer exists, whatever the GCS says yet
            node_alive = not isinstance(e, self._node_gone_error) and self._node_alive(slot.node_id)
        else:
            self._set_state(slot, "ready")
            slot.restart_head_clock()  # items sent before the failure that the restarted actor will still run
            lost, slot.lost = slot.lost, []
            self._verdict(slot, lost, node_alive=True, journal=info.get("journal"))  # (blames the old process)
            self._set_worker_id(slot, info["worker"])
            if slot.draining:
                self._hand_back(slot)
            return
        lost, slot.lost = slot.lost, []
        self._kill_slot(slot)
        return self._verdict(slot, lost, node_alive=node_alive)

    def _driver_node_id(self) -> str | None:
        """The node this driver runs on (its processes' pids are this host's); None when Ray cannot say."""
        try:
            return self._ray.get_runtime_context().get_node_id()
        except Exception:  # noqa: BLE001 - e.g. a Ray Client driver has no node of its own
            return None

    def _node_alive(self, node_id: str) -> bool:
        """Whether the node stays (asked when its actor cannot be reached). A node being drained counts as
        leaving: its actor is unreachable because the node is being taken away (the drain may be news here)."""
        if node_id in self._dead_nodes:
            return False
        for n in self._ray.nodes():
            if n["NodeID"] == node_id:
                if not n.get("Alive"):
                    self._node_died(node_id, n)
                    return False
                if node_id not in self._draining_nodes and node_id in self._draining_now():
                    self._drain(node_id)
                return node_id not in self._draining_nodes
        self._node_died(node_id, None)
        return False

    def _batch_failed(self, slot: Slot, batch: Batch) -> None:
        """The actor died or vanished under this batch; a ping to the actor decides what that means."""
        for call in batch.calls:
            if call in slot.calls:
                self._call_failed(slot, call)
        if slot.state in ("ready", "starting"):
            self._set_state(slot, "probing")
            self._ask_ready(slot)
        elif slot.state == "dead":
            lost, slot.lost = slot.lost, []
            self._verdict(slot, lost, node_alive=self._node_alive(slot.node_id))

    def _call_failed(self, slot: Slot, call: Call) -> None:
        was_head = call is slot.head()
        self._remove_call(slot, call, restart_clock=False)
        # the ping's answer (the journal) decides; without one, the head item is the suspect. A call the farm
        # killed is judged by the journal too: the driver's idea of which item runs lags the actor by up to a
        # progress query, and the killed call may have finished while a later one was the one that hung
        call.suspect = bool(call.killed) or (was_head and not call.orphaned)
        slot.lost.append(call)
        was_head = was_head or bool(call.killed)
        if was_head:  # the items queued behind it never ran on the incarnation that just died
            for other in slot.calls:
                other.orphaned = True
        # (a queued batch can report its failure before the head's does; the head, still running when the actor
        # died, stays the suspect)

    def _verdict(self, slot: Slot, lost: list[Call], node_alive: bool, journal: dict | None = None) -> None:
        """Long because each lost item's fate depends on the journal, on whether its node lives, and on whether
        that node was preempted: one rule per case, in the order they are tried."""
        preempted = not node_alive and slot.node_id in self._preempted
        # the death is explained when one of these items ended the process (it crashed, or it finished and its
        # reply died with the process): the others never started because of it, which is not held against them
        explained = journal is not None and any(c.token in journal["done"] or c.token in journal["crashed"]
                                                for c in lost)
        # the farm killed this process for silence or an item over budget: what it was running is that timeout
        killed = next((c.killed for c in lost if c.killed), None)
        for call in lost:
            if killed is not None and (journal is None and call.killed or
                                       journal is not None and call.token in journal["crashed"]):
                self._finish(call.item, DoneStatus.TIMEOUT, error=killed, worker=slot.worker_id, host=slot.host,
                             busy_secs=max(0.0, time.monotonic() - call.started) if call.started else 0.0)
                continue
            if journal is not None:  # the restarted actor's account of what its dead process did
                done = journal["done"].get(call.token)
                if done is not None:  # it ran; its reply died with the process
                    out, compiles = done
                    self._finish_call(slot, call, out)
                    self.stats.recovered += 1
                    if compiles >= self.max_compiles:
                        self._retire(slot)
                    continue
                if call.token not in journal["crashed"]:
                    self._requeue_unblamed(call.item, slot.worker_id, slot.host, count=not explained)
                    continue
            elif not call.suspect and not preempted:
                self._requeue_unblamed(call.item, slot.worker_id, slot.host)
                continue
            if preempted or (not node_alive and call.item.attempt < self.requeue_limit):
                if not preempted:  # a preempted node is not the item's fault: it is not counted
                    call.item.attempt += 1
                call.item.prefer = None
                self._queue.push(call.item, front=True)
                self.stats.requeued += 1
                if self._metrics is not None:
                    self._metrics.requeued()
                continue
            self._lose(slot, call, "its node left the cluster" if not node_alive else
                       "the worker process died (a crash in native code, or it was killed)")
        if slot.state == "dead":
            # items still queued on a dead actor will fail; give them back to the queue now
            for call in list(slot.calls):
                if call.batch is not None:
                    self._by_ref.pop(call.batch.ref, None)
                call.item.prefer = None
                self._queue.push(call.item, front=True)
            slot.calls.clear()
            slot.batches = 0

    def _progress_answered(self, slot: Slot, call: Call, ref) -> None:
        call.progress_ref = call.host_ref = None
        try:
            snap = self._ray.get(ref)
        except self._worker_errors:
            return  # the batch itself will report the failure
        now = time.monotonic()
        if snap["token"] != call.token:
            running = self._went_past(slot, call, snap["token"])
            if running is not None:  # the actor is on a later item of its batches: watch that one
                running.started = now - snap["active_secs"] - snap["paused_secs"]
                running.deadline = now + _next_look(running.timeout_s - snap["active_secs"])
                if snap["paused"]:
                    running.deadline = now + _next_look(self.pause_limit_s - snap["paused_secs"])
                return
            # not started yet (actor restarting, or the reply is on its way): restart the clock, a few times
            call.rearms += 1
            if call.rearms > 5:
                return self._kill_for_timeout(slot, call, "the worker answers but never started the item; "
                                              "worker killed")
            call.started = now
            call.deadline = now + _next_look(call.timeout_s)
        elif snap["paused"]:
            call.deadline = now + _next_look(self.pause_limit_s - snap["paused_secs"])
            if snap["paused_secs"] >= self.pause_limit_s:
                self._kill_for_timeout(slot, call, pause_limit_error(snap["paused"], self.pause_limit_s))
        elif snap["active_secs"] < call.timeout_s:
            call.deadline = now + _next_look(call.timeout_s - snap["active_secs"])
        else:
            self._kill_for_timeout(slot, call)

    @staticmethod
    def _went_past(slot: Slot, call: Call, token) -> Call | None:
        """The item running now, when it is queued behind ``call`` (which then ran, as did those between)."""
        later = [c for c in slot.calls if c.token == token]
        if not later or later[0] is call:
            return None
        for c in slot.calls:
            if c is later[0]:
                return c
            c.ran = True
        return None

    def _check_slot(self, s: Slot, now: float) -> None:
        """A slot's timer went off: a start-up that takes too long, or its head item past its budget."""
        if s.state == "starting" and s.ready_ref is not None and now >= s.ready_deadline:
            s.ready_ref = None
            self._kill_slot(s)
            return
        head = s.head()
        if s.state != "ready" or head is None:
            return
        if head.killed:
            if now >= head.deadline:  # Ray never reported the killed batch: settle it ourselves
                if head.batch is not None:
                    self._by_ref.pop(head.batch.ref, None)
                self._remove_call(s, head, restart_clock=False)
                self._kill_slot(s)
                lost, s.lost = [*s.lost, head], []  # no journal comes: the killed head is the timeout
                self._verdict(s, lost, node_alive=self._node_alive(s.node_id))
            return
        if head.progress_ref is not None:
            if now >= head.progress_deadline:  # the actor does not even answer: stuck, or cut off?
                if head.host_ref is not None:  # its host did not answer either
                    return self._host_unreachable(s.node_id)
                if s.node_id != self._driver_node_id():
                    return self._ask_host(s, head, now)
                self._stuck(s, head)
                if s.worker_id:  # (on the driver's own node: its pid is this host's)
                    kill_if_stopped(int(s.worker_id.rsplit(":", 1)[1]))
        elif now >= head.deadline:
            head.progress_ref = s.actor.progress.remote()
            head.progress_deadline = now + self.progress_timeout_s
            self._probes[head.progress_ref] = ("progress", s, head)

    def _stuck(self, slot: Slot, call: Call) -> None:
        """The worker does not answer a progress query (its host does, or it is the driver's): kill it."""
        call.progress_ref = call.host_ref = None
        why = (f"item exceeded its {call.timeout_s:g} s budget and the worker" if time.monotonic() - call.started
               >= call.timeout_s else "the worker stopped answering: it")
        self._kill_for_timeout(slot, call, f"{why} did not answer a progress query within "
                               f"{self.progress_timeout_s:g} s; worker killed")

    def _ask_host(self, slot: Slot, call: Call, now: float) -> None:
        """The worker of another host missed its progress query: ask its host (a task pinned to it) whether it
        can be reached, the progress query still open (a late answer settles it as well)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        strategy = NodeAffinitySchedulingStrategy(slot.node_id, soft=False)
        call.host_ref = ping_task().options(scheduling_strategy=strategy).remote()
        call.progress_deadline = now + max(self.progress_timeout_s, HOST_PING_S)
        self._probes[call.host_ref] = ("host", slot, call)

    def _host_answered(self, slot: Slot, call: Call, ref) -> None:
        try:
            self._ray.get(ref)
        except self._worker_errors:  # the ping could not run there: the node is gone or going
            return self._host_unreachable(slot.node_id)
        if call.progress_ref is not None and call is slot.head():  # the host answers, its worker does not
            self._stuck(slot, call)

    def _host_unreachable(self, node_id: str) -> None:
        """Neither a worker nor its host answers: the host is cut off. As for a node that left: what its
        workers ran or held is re-queued (once: ``requeue_limit``), their replies, should the link come back,
        are never read, and the farm starts no worker there again."""
        mine = [s for s in self._slots if s.node_id == node_id and s.state != "dead"]
        log.warning("host %s answers neither its workers nor a ping: %d item(s) sent there go to other hosts",
                    mine[0].host if mine else node_id, sum(len(s.calls) + len(s.lost) for s in mine))
        self._node_died(node_id, None)
        for s in mine:
            head = s.head() if s.state == "ready" else None
            lost, s.lost = s.lost, []
            for c in [*lost, *s.calls]:
                if c.batch is not None:
                    self._by_ref.pop(c.batch.ref, None)
            if head is not None:  # (one already killed for a timeout stays that timeout: _verdict's rule)
                s.calls.remove(head)
                head.suspect = True
                lost.append(head)
            s.ready_ref = None
            self._kill_slot(s)
            self._verdict(s, lost, node_alive=False)  # (re-queues the calls still on the slot as well)

    def _kill_for_timeout(self, slot: Slot, call: Call, why: str = "") -> None:
        call.killed = why or f"item exceeded its {call.timeout_s:g} s budget; worker killed"
        call.deadline = time.monotonic() + self.start_timeout_s
        self._ray.kill(slot.actor, no_restart=False)  # Ray restarts it; the batch fails -> timeout
