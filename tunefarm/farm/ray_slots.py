"""RayFarm's bookkeeping of its workers: the items each actor was sent, which workers take work now, and when
each one must be looked at again.

A ``Slot`` is one worker actor with the items (``Call``) it was sent, in the order it runs them, in batches (one
actor call, ``Batch``, runs several items). The driver watches the item it believes is running (the *head*):
its budget clock starts when the item before it returned, or when the actor's ``progress`` says it started
(an item inside a batch). ``SlotBook`` (mixed into RayFarm) keeps the indexes that make a wake-up of the driver
cost what happened rather than the size of the cluster: slots per state, the slots that take a batch now
(``_open``, ``_idle``), worker ids, and a heap of each slot's next due time.
"""
from __future__ import annotations

import collections
import dataclasses
import heapq
import time

from .dispatch import Item

# a running item's actor is asked for its progress at least this often: one that stops answering (frozen by
# SIGSTOP, its node cut off) is found within this plus ``progress_timeout_s``, whatever the item's budget
ANSWER_EVERY_S = 5.0


@dataclasses.dataclass(eq=False)
class Batch:
    """One actor call: the items it runs, in order."""

    ref: object
    calls: list


@dataclasses.dataclass(eq=False)
class Call:
    """One item sent to an actor under a token (a re-run gets a new token)."""

    item: Item
    token: int
    batch: Batch | None
    timeout_s: float
    started: float = 0.0           # when we believe it started running (head of the slot's queue)
    deadline: float = 0.0
    killed: str = ""               # why we killed the worker for this call (a timeout), or ""
    rearms: int = 0                # deadline re-arms because the call had not started yet
    orphaned: bool = False         # queued on an actor incarnation that died before running it
    suspect: bool = False          # was running when its actor died, by the driver's reckoning
    ran: bool = False              # the actor went past it (its outcome comes with its batch's reply)
    progress_ref: object = None
    progress_deadline: float = 0.0
    host_ref: object = None        # a ping of its worker's host, while the worker misses a progress query


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
        self.batches = 0               # actor calls in flight
        self.retire = False
        self.draining = False          # its node is being drained: no new items
        self.armed_at: float | None = None  # the due time of its entry in the farm's timer heap
        self.lost: list[Call] = []     # failed calls waiting for the ping's verdict
        self.shared_sent: set[str] = set()  # shared texts whose references this incarnation was sent
        self.error = ""                # why the actor could not be reached, when it could not

    def head(self) -> Call | None:
        """The item the driver believes is running (the first one the actor did not go past)."""
        for c in self.calls:
            if not c.ran:
                return c
        return None

    def restart_head_clock(self) -> None:
        head = self.head()
        if head is not None:
            head.started = time.monotonic()
            head.deadline = head.started + min(head.timeout_s, ANSWER_EVERY_S)


class SlotBook:
    """Slot indexes and timers of RayFarm (which provides ``_ray``, ``_slots``, ``stats``, ``start_timeout_s``...)."""

    def _set_state(self, slot: Slot, state: str) -> None:
        self._counts[slot.state] -= 1
        self._counts[state] += 1
        slot.state = state
        if state == "ready":
            self.stats.uptime.up(slot)
        else:
            self.stats.uptime.down(slot)
            slot.shared_sent.clear()  # a restarted process holds no shared text
            if state == "dead":
                self._pruned = False
                self._topup_due = True  # (a lost worker is replaced where a CPU is free)
        self._refresh(slot)

    def _refresh(self, slot: Slot) -> None:
        """Keep ``_open`` (the slots that take a batch now) and ``_idle`` (those with nothing) true for it."""
        if (slot.state == "ready" and not slot.retire and not slot.draining
                and slot.batches < self._calls_per_worker and len(slot.calls) < self.items_per_worker):
            self._open[slot] = None
            if slot.calls:
                self._idle.pop(slot, None)
            else:
                self._idle[slot] = None
        else:
            self._open.pop(slot, None)
            self._idle.pop(slot, None)

    def _set_worker_id(self, slot: Slot, worker_id: str) -> None:
        if slot.worker_id != worker_id:
            if self._by_worker.get(slot.worker_id) is slot:
                del self._by_worker[slot.worker_id]
            slot.worker_id = worker_id
        self._by_worker[worker_id] = slot

    def _ask_ready(self, slot: Slot, renew: bool = True) -> None:
        """Ping the actor (``info``); ``renew``: a new start-up deadline (else the current one stands)."""
        slot.ready_ref = slot.actor.info.remote()
        self._probes[slot.ready_ref] = ("ready", slot, None)
        if renew:
            slot.ready_deadline = time.monotonic() + self.start_timeout_s
        self._arm(slot)

    def _retire(self, slot: Slot) -> None:
        slot.retire = True
        self._retiring[slot] = None
        self._refresh(slot)

    def _kill_slot(self, slot: Slot) -> None:
        if slot.state != "dead":
            self._set_state(slot, "dead")
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _remove_call(self, slot: Slot, call: Call, restart_clock: bool = True) -> None:
        was_head = call is slot.head()
        slot.calls.remove(call)
        if was_head and restart_clock:  # the next item starts now
            slot.restart_head_clock()
        self._refresh(slot)

    # --- the timer heap: each slot's next due time (a start-up deadline, or its head item's budget)
    def _due(self, slot: Slot) -> float | None:
        if slot.state == "starting":
            return slot.ready_deadline if slot.ready_ref is not None else None
        head = slot.head()
        if slot.state != "ready" or head is None:
            return None
        return head.progress_deadline if head.progress_ref is not None else head.deadline

    def _arm(self, slot: Slot) -> None:
        due = self._due(slot)
        if due is not None and due != slot.armed_at:
            slot.armed_at = due
            self._seq += 1
            heapq.heappush(self._timers, (due, self._seq, slot))

    def _next_deadline(self) -> float:
        while self._timers and self._timers[0][0] != self._timers[0][2].armed_at:
            heapq.heappop(self._timers)  # superseded
        return self._timers[0][0] if self._timers else time.monotonic() + 60.0

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            due, _, slot = heapq.heappop(self._timers)
            if due != slot.armed_at:
                continue
            slot.armed_at = None
            self._check_slot(slot, now)
            self._arm(slot)
