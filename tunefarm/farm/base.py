"""The Farm interface: a fault-tolerant executor of work items.

Every farm (LocalFarm: worker processes on this machine; RayFarm: actors on a Ray cluster) promises:
- ``put(work)`` / ``poll()``: every put item ends in exactly one ``Done`` (work.py), whatever happens to workers;
- ``farm.target`` is the CPU target it measures on.

The subclasses own their workers: queueing and dispatch (``_enqueue``), waiting for and handling their events
(``_drive``), and dropping what a caller abandons (``_abandon``). What a measurement item's ``Done`` means is the
tuning job's to say (``tuning/callbacks.py``); batches of given traces are ``tunefarm.testing.batch``.
"""
from __future__ import annotations

import abc
import contextlib
import dataclasses
import json
import socket
import time

from .dispatch import UNBLAMED_REQUEUES, Item
from ..runtime.measure_result import MeasureResult
from .work import Done, DoneStatus, Work

_MAX_ERROR_TEXT = 2000


class Uptime:
    """Seconds workers were alive and ready, summed over workers (``FarmStats.worker_secs``); ``up`` and ``down``
    are called by the farm as workers become ready and go."""

    def __init__(self):
        self._since: dict[int, float] = {}
        self._total = 0.0

    def up(self, worker) -> None:
        self._since.setdefault(id(worker), time.monotonic())

    def down(self, worker) -> None:
        t = self._since.pop(id(worker), None)
        if t is not None:
            self._total += time.monotonic() - t

    def total(self) -> float:
        now = time.monotonic()
        return self._total + sum(now - t for t in self._since.values())


@dataclasses.dataclass
class FarmStats:
    """Counters of a farm's life.

    ``submitted`` / ``completed``: items put / returned by poll (a batch puts one per candidate);
    ``driver_cpu_secs``: CPU this process spent in put, poll and the batch API; ``busy_secs``: seconds handlers
    ran on workers; ``worker_secs``: seconds workers were alive and ready (so ``busy_fraction`` is how well the
    workers were fed); ``by_status``: returned items per ``DoneStatus`` value.
    """

    submitted: int = 0
    completed: int = 0
    requeued: int = 0
    recovered: int = 0   # results a crashed worker's journal gave back (the reply was lost with the process)
    worker_lost: int = 0
    timeouts: int = 0
    workers_started: int = 0
    workers_recycled: int = 0
    max_in_flight: int = 0
    driver_cpu_secs: float = 0.0
    busy_secs: float = 0.0
    by_status: dict[str, int] = dataclasses.field(default_factory=dict)
    uptime: Uptime = dataclasses.field(default_factory=Uptime, repr=False, compare=False)

    @property
    def worker_secs(self) -> float:
        """Up to now, whenever it is read (a farm that sat idle has its idle seconds counted)."""
        return self.uptime.total()

    @property
    def busy_fraction(self) -> float:
        return self.busy_secs / self.worker_secs if self.worker_secs > 0 else 0.0


# imported by every worker when it starts (not by its first item): the measuring stack, llvmlite and the Measurer
PRELOAD = "tunefarm.farm.measure:worker_measurer"


class FarmError(RuntimeError):
    """The farm itself cannot work (no worker could start, no node matches the target...)."""


class Farm(abc.ABC):
    """Runs work items on workers. Use as a context manager (or call ``close``)."""

    def __init__(self):
        self.stats = FarmStats()
        self._closed = False
        self._items: dict[int, Item] = {}       # put and not yet returned by poll
        self._finished: list[Done] = []
        self._shared_texts: dict[str, str] = {}
        self._next_ticket = 0
        self._driver_host = socket.gethostname()

    @property
    @abc.abstractmethod
    def target(self):
        """The ``tunefarm.target.Target`` of the machines this farm measures on."""

    @property
    @abc.abstractmethod
    def num_workers(self) -> int:
        """How many workers run items in parallel right now."""

    @property
    def items_per_worker(self) -> int:
        """Items one worker holds (runs or has queued) at most right now: ``rooms`` and ``capacity`` count them."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    @property
    def capacity(self) -> int:
        """Items that can run or sit queued on workers right now (live workers x ``items_per_worker``)."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    def rooms(self) -> dict[str, int]:
        """Free places of each ready worker right now (worker id -> items it takes without waiting): where a
        put item preferring that worker runs at once. A caller that cares where an item runs (its inputs are
        cached on one worker) chooses the item for the room, not the room for the item."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    @property
    def pending(self) -> int:
        """Items put and not yet returned by ``poll``."""
        return len(self._items)

    # ------------------------------------------------------------------ streaming
    def put(self, work: Work) -> int:
        """Queue ``work`` (dispatched at once if a worker has room); returns its ticket."""
        with self._streaming():
            return self._put(work)

    def poll(self, timeout_s: float | None = None) -> list[Done]:
        """Wait up to ``timeout_s`` (None: as long as it takes; 0: just collect) for at least one item to
        finish, handling every fault on the way, and return all items that finished."""
        with self._streaming():
            return self._poll(timeout_s)

    @contextlib.contextmanager
    def _streaming(self):
        """A call of the open farm; its CPU counts in ``stats.driver_cpu_secs``."""
        if self._closed:
            raise FarmError("this farm is closed")
        cpu0 = time.process_time()
        try:
            yield
        finally:
            self.stats.driver_cpu_secs += time.process_time() - cpu0

    def abandon(self) -> None:
        """Drop every pending item: its caller stopped early (a batch not consumed, Ctrl-C); no stale reply of
        it comes back to a later ``poll``."""
        if self._items:
            self._abandon()
            self._items.clear()
            self._finished.clear()

    def _put(self, work: Work) -> int:
        if not isinstance(work, Work):
            raise TypeError(f"put takes a tunefarm.farm.Work, got {type(work).__name__}")
        work.check()
        try:
            payload_text = json.dumps(work.payload, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Work.payload must be JSON-able data: {e}") from None
        for key, text in (work.shared or {}).items():
            known = self._shared_texts.get(key)
            if known is None:
                self._shared_texts[key] = text
                self._add_shared(key, text)
            elif known is not text and known != text:
                raise ValueError(f"shared key {key!r} was given a different text before; a key names one text "
                                 "for the farm's life")
        self._next_ticket += 1
        item = Item(self._next_ticket, work, payload_text, prefer=work.prefer)
        self._items[item.ticket] = item
        self.stats.submitted += 1
        self._enqueue(item)
        return item.ticket

    def _poll(self, timeout_s: float | None) -> list[Done]:
        if timeout_s is not None and timeout_s < 0:
            raise ValueError(f"poll timeout_s must be >= 0 or None, got {timeout_s!r}")
        if self._items and not self._finished:
            self._drive(timeout_s)
        out, self._finished = self._finished, []
        for d in out:
            del self._items[d.ticket]
            self.stats.completed += 1
            self.stats.busy_secs += d.busy_secs
            self.stats.by_status[d.status.value] = self.stats.by_status.get(d.status.value, 0) + 1
            if d.status is DoneStatus.LOST:
                self.stats.worker_lost += 1
            elif d.status is DoneStatus.TIMEOUT:
                self.stats.timeouts += 1
        return out

    def _finish(self, item: Item, status: DoneStatus, value=None, error: str | None = None, worker: str = "",
                host: str = "", busy_secs: float = 0.0) -> None:
        """Record the one ``Done`` of ``item`` (returned by the next poll)."""
        if item.done:
            raise FarmError(f"internal error: item {item.ticket} finished twice")
        item.done = True
        if error is not None:
            error = error[:_MAX_ERROR_TEXT]
        self._finished.append(Done(item.ticket, item.work, status, value, error, worker,
                                   host or self._driver_host, busy_secs))

    def _requeue_unblamed(self, item: Item, worker: str = "", host: str = "", count: bool = True) -> None:
        """An item its worker never started (the worker died under an earlier one): queued again at the front
        (``self._queue``, the farm's ``WorkQueue``), unless that keeps happening; never charged busy time.
        ``count=False`` when another item is known to have ended the process (it is not re-run, so this
        cannot repeat for ever)."""
        item.unblamed += count
        if item.unblamed <= UNBLAMED_REQUEUES:
            self._queue.push(item, front=True)
        else:
            self._finish(item, DoneStatus.LOST, error=f"its worker died before running it {item.unblamed} times",
                         worker=worker, host=host)

    # --- what a farm with workers implements
    def _enqueue(self, item: Item) -> None:
        """Queue a new item and hand it to a worker if one has room."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    def _drive(self, timeout_s: float | None) -> None:
        """Handle worker events until an item finished (``self._finished``) or ``timeout_s`` passed."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    def _abandon(self) -> None:
        """Drop every pending item on the workers (see ``abandon``); no stale reply may come back."""
        raise NotImplementedError(f"{type(self).__name__} does not stream work items")

    def _add_shared(self, key: str, text: str) -> None:
        """A shared text the farm sees for the first time (RayFarm stores it in the object store)."""

    def record_trial(self, result: MeasureResult, task: str) -> None:
        """A measurement, for the farm's metrics (RayFarm exports them to Ray's dashboard and Prometheus): the
        caller that knows what its items measured (the tuning job's callbacks, a test batch) reports each
        result here."""

    def close(self) -> None:
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
