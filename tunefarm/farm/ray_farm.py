"""RayFarm: run work items on long-lived Ray actors, one per CPU of every node with the job's CPU.

The driver keeps a bounded number of items on each worker, sent in batches of several items per actor call, two
calls per actor: an actor call costs the driver far more CPU than an item's own bookkeeping, and with a second
batch queued a worker starts its next item without a round trip. A call carries about a second of work
(batch_size.py): many short items, few long ones, at most ``inflight_per_worker`` per worker. Replies come
back a batch at a time through ``ray.wait``; the refs waited on are kept in dicts, the budget timers in a heap
and the workers with room in a set, so what the driver does per wake-up grows with what happened, not with
the size of the cluster. Faults, and what the driver does about them (ray_faults.py):

- a worker dies mid-item (segfault in JIT code, SIGKILL, OOM): Ray restarts the actor (``max_restarts``); the
  call has ``max_task_retries=0`` so a crasher runs once; the driver pings the restarted actor, which returns
  its journal (journal.py): the item that was running when the process died is LOST, items that finished but
  whose reply died with the process get their journalled outcome, and items that never started are re-queued
  without blame (a few times);
- an item over budget: the driver asks the actor's ``progress`` (time spent waiting for the host measurement
  lock or the workload's reference is not charged; the answer also says which item of a batch runs), and if
  it is really over, ``ray.kill``s the actor (plain ``ray.cancel`` cannot stop hung native code) and records
  TIMEOUT; Ray restarts it;
- a node disappears: the ping fails (the actor is pinned to its node and cannot come back); the node's
  in-flight items are re-queued once (``requeue_limit``), its workers dropped. Every item ends in exactly one
  ``Done``;
- the cluster changes under a running job (ray_nodes.py): a node that joins gets workers within seconds; a
  node drained for preemption or scale-down gets no new item, hands back what it has not started, and items
  lost with a preempted node are re-queued without counting against ``requeue_limit``;
- a worker that has compiled ``max_compiles`` programs is replaced by a fresh actor (llvmlite leaks memory).

Shared texts (``Work.shared``) go to the object store once per farm; a worker is sent a text's reference with
the first item that uses it and fetches it once (after a restart, an item that finds a text missing is sent
again with the references).

Nodes report their CPU (node_info.py); the farm runs only on nodes whose CPU matches ``target`` (default:
the CPU with the most cores in the cluster). If any node advertises the custom resource ``node_resource``
(``measure_slot`` in cluster.yaml), only those nodes host workers, so a head node can be kept free.
"""
from __future__ import annotations

import collections
import time

from .base import PRELOAD, Farm, FarmError
from .batch_size import BatchSizer
from .dispatch import Item, WorkQueue
from .measure_lock import timing_slots as check_timing_slots
from .metrics import FarmMetrics
from .node_info import probe_nodes
from .ray_faults import SlotFaults
from .ray_nodes import NodeWatch
from .ray_slots import Batch, Call, Slot, SlotBook
from ..runtime.measure_result import MeasureResult
from .work import DoneStatus
from ..target import Target, as_target

_CALLS_PER_WORKER = 2  # actor calls in flight per worker: the next batch is there when one returns
_GAUGES_EVERY_S = 1.0


class RayFarm(NodeWatch, SlotFaults, SlotBook, Farm):
    """Run work items (and measure candidates) on a Ray cluster.

    - ``address``: None starts a private local Ray for this job (``ray.init(address="local")``, never
      attaching to someone else's cluster) unless this process is already connected; ``"auto"`` or
      ``"host:port"`` joins that cluster;
    - ``num_workers``: total actors (default: one per CPU of every matching node);
    - ``target``: the CPU to measure on (a Target or string; default: the CPU with the most cores);
    - ``worker_cpus``: CPUs each actor reserves (1: actors hold their CPUs for the farm's lifetime, so plain
      Ray tasks that need a CPU wait until ``close``; use a fraction to leave room);
    - ``max_compiles``: LLVM builds before a worker is replaced; ``inflight_per_worker``: at most this many
      items queued per actor, in two batches (32: batches of up to 16, fewer when items are long; 2: one item
      per call; the journal settles which item of failed batches crashed the actor);
    - ``requeue_limit``: how many times an item lost with its node is re-run elsewhere (a node drained for
      preemption does not count);
    - ``timing_slots``: timing loops allowed at once per host (measure_lock.py; default: the workers'
      ``TUNEFARM_TIMING_SLOTS``, else the host's default: one per four physical cores from 8 cores on);
      ``metrics``: record ray.util.metrics;
    - ``resource_wait_s``: how long to wait for CPUs to become free before refusing to start.
    """

    def __init__(self, address: str | None = None, num_workers: int | None = None, target=None, *,
                 worker_cpus: float = 1.0, max_compiles: int = 1000, inflight_per_worker: int = 32,
                 requeue_limit: int = 1, lock_path: str | None = None, pause_limit_s: float = 300.0,
                 progress_timeout_s: float = 10.0, start_timeout_s: float = 180.0, resource_wait_s: float = 15.0,
                 node_resource: str = "measure_slot", metrics: bool = True, ray_init_kwargs: dict | None = None,
                 timing_slots: int | None = None):
        super().__init__()
        import ray

        if num_workers is not None and (not isinstance(num_workers, int) or num_workers < 1):
            raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
        if worker_cpus < 0:
            raise ValueError(f"worker_cpus must be >= 0, got {worker_cpus!r}")
        if inflight_per_worker < 1 or max_compiles < 1 or requeue_limit < 0:
            raise ValueError("inflight_per_worker and max_compiles must be >= 1, requeue_limit >= 0")
        if timing_slots is not None:
            check_timing_slots(timing_slots)
        self._ray = ray
        self._owns_ray = False
        if not ray.is_initialized():
            kwargs = dict(ray_init_kwargs or {})
            ray.init(address="local" if address is None else address, **kwargs)
            self._owns_ray = True
        self.num_requested = num_workers
        self.worker_cpus = float(worker_cpus)
        self.max_compiles = max_compiles
        self.inflight_per_worker = inflight_per_worker
        self.requeue_limit = requeue_limit
        self.timing_slots = timing_slots
        self.lock_path = lock_path
        self.pause_limit_s = pause_limit_s
        self.progress_timeout_s = progress_timeout_s
        self.start_timeout_s = start_timeout_s
        self.resource_wait_s = resource_wait_s
        self.node_resource = node_resource
        self._sizer = BatchSizer(-(-inflight_per_worker // _CALLS_PER_WORKER))
        self._calls_per_worker = _CALLS_PER_WORKER
        self._slots: list[Slot] = []
        self._pruned = True                     # no dead slot left in _slots to drop
        self._counts: collections.Counter = collections.Counter()  # slots per state
        self._open: dict[Slot, None] = {}       # ready slots that take a batch now (an ordered set)
        self._idle: dict[Slot, None] = {}       # open slots with nothing to run
        self._by_worker: dict[str, Slot] = {}
        self._retiring: dict[Slot, None] = {}
        self._want: int | None = None
        self._token = 0
        self._dead_nodes: set[str] = set()
        self._queue = WorkQueue()
        self._by_ref: dict = {}                 # batch ref -> (slot, batch)
        self._probes: dict = {}                 # other refs waited on -> (kind, slot, call)
        self._timers: list = []                 # heap of (due time, seq, slot); see _arm
        self._seq = 0
        self._shared_refs: dict[str, object] = {}
        self._cpu_in_metrics = 0.0
        self._gauges_at = 0.0
        self._init_node_watch()
        self._metrics = None
        if metrics:
            self._metrics = FarmMetrics()
        from ray.exceptions import ActorUnavailableError, ActorUnschedulableError, RayError, RayTaskError

        self._worker_errors = RayError         # any system failure: the actor, its process or its node
        self._task_error = RayTaskError        # an exception escaped the actor method (a bug, the actor lives)
        self._node_gone_error = ActorUnschedulableError  # a pinned actor whose node no longer exists
        self._unavailable_error = ActorUnavailableError  # restarting: may come back
        try:
            self._setup(target)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ nodes and workers
    def _setup(self, target) -> None:
        nodes = self._candidate_nodes()
        self._asked_nodes.update(n["NodeID"] for n in nodes)
        infos = probe_nodes(nodes, self.start_timeout_s)
        if not infos:
            raise FarmError("no Ray node answered the node-info probe")
        if target is None:
            cpus: dict[tuple, float] = collections.Counter()
            for i in infos:
                cpus[(i.cpu, i.features)] += i.num_cpus
            best = max(cpus, key=lambda k: cpus[k])
            chosen = next(i for i in infos if (i.cpu, i.features) == best)
            self._target = Target(chosen.target)
        else:
            self._target = as_target(target)
        self.nodes = [i for i in infos if i.matches(self._target)]
        if not self.nodes:
            seen = sorted({i.target for i in infos})
            raise FarmError(f"no node has the CPU of target {self._target}; nodes report: {seen}")
        self._spawn_workers(required=True, wait_s=self.resource_wait_s)
        self._wait_ready()

    def _candidate_nodes(self) -> list[dict]:
        return self._matching_resource([n for n in self._ray.nodes() if n.get("Alive")])

    def _free_slots(self) -> dict[str, int]:
        """New workers each live matching node can take now: its free CPUs / worker_cpus.

        Free, not total: actors that reserve CPUs hold them for life, and an actor waiting for a CPU that
        another farm's actor holds would wait forever. With ``worker_cpus=0`` nothing is reserved: a node takes
        one worker per CPU, or any number when ``num_workers`` is given (simulations, oversubscription).
        """
        from ray._private.state import available_resources_per_node

        try:
            avail = available_resources_per_node()
        except Exception:  # noqa: BLE001 - developer API; fall back to the totals
            avail = None
        mine = collections.Counter(s.node_id for s in self._slots if s.state != "dead")
        free = {}
        for info in self.nodes:
            if info.node_id in self._dead_nodes or info.node_id in self._draining_nodes:
                continue
            if self.worker_cpus <= 0:  # no reservation: one per CPU by default, any number when asked for
                free[info.node_id] = (10 ** 6 if self.num_requested is not None
                                      else max(0, int(info.num_cpus) - mine[info.node_id]))
                continue
            cpus = info.num_cpus - mine[info.node_id] * self.worker_cpus
            if avail is not None:
                cpus = min(cpus, avail.get(info.node_id, {}).get("CPU", 0.0))
            free[info.node_id] = max(0, int(cpus / self.worker_cpus + 1e-9))
        return free

    def _spawn_workers(self, required: bool = True, wait_s: float = 15.0) -> None:
        """Start workers up to ``num_workers`` (default: every free CPU), spread round-robin over nodes.

        CPUs a farm that just closed held take a moment to show as free, so a shortfall is re-checked for
        ``wait_s`` before it is an error (``required``) or accepted.
        """
        deadline = time.monotonic() + wait_s
        while True:
            free = self._free_slots()
            live = sum(1 for s in self._slots if s.state != "dead")
            if self._want is None:
                self._want = self.num_requested if self.num_requested is not None else live + sum(free.values())
            if live + sum(free.values()) >= self._want and self._want > 0:
                break
            if time.monotonic() >= deadline:
                if not required:
                    break
                raise FarmError(
                    f"the matching nodes have room for {live + sum(free.values())} workers of "
                    f"{self.worker_cpus:g} CPU, {self._want or 'at least 1'} wanted; their CPUs are held by other "
                    "actors (another farm still open?) -- close them, or pass worker_cpus < 1 or num_workers")
            if self.num_requested is None:
                self._want = None
            time.sleep(0.25)
        live = sum(1 for s in self._slots if s.state != "dead")
        while live < self._want and any(free.values()):
            for node_id in sorted(free):  # round-robin over nodes so a job spreads out
                if live >= self._want:
                    break
                if free[node_id] > 0:
                    self._new_slot(node_id)
                    free[node_id] -= 1
                    live += 1

    def _new_slot(self, node_id: str) -> Slot:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .ray_worker import FarmWorker  # (imports ray: loaded when a RayFarm starts workers)

        info = next(i for i in self.nodes if i.node_id == node_id)
        actor = FarmWorker.options(
            num_cpus=self.worker_cpus, max_restarts=-1, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(self.lock_path, self.timing_slots, [PRELOAD], self.max_compiles)
        slot = Slot(actor, node_id, info.hostname)
        self._counts["starting"] += 1
        self._slots.append(slot)
        self._ask_ready(slot)
        self.stats.workers_started += 1
        return slot

    def _wait_ready(self) -> None:
        """Block until every worker answers (start-up is not charged to the first trials' budgets)."""
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            pending = {s.ready_ref: s for s in self._slots if s.state == "starting" and s.ready_ref is not None}
            if not pending:
                break
            ready, _ = self._ray.wait(list(pending), num_returns=len(pending),
                                      timeout=max(0.0, deadline - time.monotonic()))
            for ref in ready:
                self._slot_answered(pending[ref], ref)
        for slot in self._slots:
            if slot.state == "starting":
                self._kill_slot(slot)
                slot.error = f"did not start within {self.start_timeout_s:g} s"
        if not any(s.state == "ready" for s in self._slots):
            # Ray's error text ends with the exception the worker raised: that line says what is wrong
            errors = sorted({s.error.strip().splitlines()[-1] for s in self._slots if s.error.strip()})
            raise FarmError("no measurement worker started on the matching nodes"
                            + (f": {'; '.join(errors)[:1000]}" if errors else ""))
        self._update_gauges(force=True)

    @property
    def target(self):
        return self._target

    @property
    def num_workers(self) -> int:
        return self._counts["ready"] + self._counts["probing"]

    @property
    def items_per_worker(self) -> int:
        """Items a worker holds now: two calls of the current batch size, at most ``inflight_per_worker``."""
        return min(self.inflight_per_worker, self._calls_per_worker * self._sizer.size)

    @property
    def capacity(self) -> int:
        live = self._counts["ready"] + self._counts["probing"] + self._counts["starting"]
        return live * self.items_per_worker

    def wait_ready(self, timeout_s: float = 60.0) -> int:
        """While nothing is pending: wait until workers restarting after a crash or timeout answer again.

        Returns the number of ready workers. (Streaming does not need this: items go to the workers that are
        ready and the others are picked up as they come back.)
        """
        if self._items:
            raise FarmError("wait_ready is for when no item is pending")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            pending = {s.ready_ref: s for s in self._slots if s.ready_ref is not None}
            if not pending:
                break
            ready, _ = self._ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            for ref in ready:
                self._slot_answered(pending[ref], ref)
        self._replace_retired()
        return sum(1 for s in self._slots if s.state == "ready")

    # ------------------------------------------------------------------ dispatch
    def _add_shared(self, key: str, text: str) -> None:
        self._shared_refs[key] = self._ray.put(text)

    def _enqueue(self, item: Item) -> None:
        """Queue the item; an idle worker gets it at once, busy ones get their next batch on the next poll
        (a job puts several items between polls: they go out together)."""
        self._queue.push(item)
        if self._idle:
            slot = self._by_worker.get(item.prefer) if item.prefer is not None else None
            if slot not in self._idle:
                slot = next(iter(self._idle))
            got = self._queue.take(slot.worker_id, self._has_room)
            if got is not None:
                self._send(slot, [got])

    def _has_room(self, worker_id: str) -> bool:
        s = self._by_worker.get(worker_id)
        return s is not None and s in self._open

    def rooms(self) -> dict[str, int]:
        out = {}
        for s in self._open:
            room = self.items_per_worker - len(s.calls) - self._queue.preferring(s.worker_id)
            if room > 0:
                out[s.worker_id] = room
        return out

    def _dispatch(self) -> None:
        """Give the open slots a batch each, the queue shared out evenly; again while both last. (The work is
        bounded by the items sent: it stops when the queue is empty.)"""
        per_worker, batch = self.items_per_worker, self._sizer.size
        while len(self._queue) and self._open:
            share = -(-len(self._queue) // len(self._open))
            sent = False
            for s in list(self._open):
                room = min(batch, per_worker - len(s.calls), share)
                items, secs = [], 0.0
                while len(items) < room:
                    item = self._queue.take(s.worker_id, self._has_room)
                    if item is None:
                        break
                    est = self._sizer.secs(item.work.handler)
                    if items and not self._sizer.fits(secs, est):  # a call's worth (batch_size.py)
                        self._queue.push(item, front=True)
                        break
                    items.append(item)
                    secs += est
                if items:
                    self._send(s, items)
                    sent = True
                if not len(self._queue):
                    break
            if not sent:
                break
        in_flight = len(self._items) - len(self._queue) - len(self._finished)
        self.stats.max_in_flight = max(self.stats.max_in_flight, in_flight)

    def _send(self, slot: Slot, items: list[Item]) -> None:
        batch = Batch(None, [])
        wire = []
        for item in items:
            self._token += 1
            keys = list(item.work.shared or ())
            # references only for texts this incarnation was not sent yet: a reference nested in an argument
            # costs the driver a pickling per call, a list of keys does not
            refs = {k: self._shared_refs[k] for k in keys if k not in slot.shared_sent}
            slot.shared_sent.update(refs)
            wire.append((self._token, item.work.handler, item.payload_text, keys, refs))
            batch.calls.append(Call(item, self._token, batch, item.work.timeout_s))
        batch.ref = slot.actor.run.remote(wire)
        idle = slot.head() is None
        slot.calls.extend(batch.calls)
        slot.batches += 1
        if idle:
            slot.restart_head_clock()
            self._arm(slot)
        self._by_ref[batch.ref] = (slot, batch)
        self._refresh(slot)

    # ------------------------------------------------------------------ the event loop
    def _drive(self, timeout_s: float | None) -> None:
        """Wait for replies, pings and timers; the work per wake-up grows with what happened, not with the
        number of workers (the refs waited on are kept in dicts, the timers in a heap)."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        self._watch_nodes()
        self._dispatch()
        while True:
            if not self._by_ref and not self._probes:
                self._no_workers_left()
                if not self._finished and not self._probes:
                    raise FarmError(f"internal error: {len(self._items)} items neither queued, in flight nor "
                                    "finished")
            else:
                until = self._next_deadline() if end is None else min(end, self._next_deadline())
                until = min(until, self._next_watch)
                refs = [*self._by_ref, *self._probes, *self._node_probes]
                ready, _ = self._ray.wait(refs, num_returns=1, timeout=max(0.0, until - time.monotonic()))
                if ready and len(refs) > 1:
                    ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
                for ref in ready:
                    self._handle_ready(ref)
                self._check_deadlines()
                self._replace_retired()
                self._watch_nodes()
            self._dispatch()
            if self._finished or (end is not None and time.monotonic() >= end):
                break
        self._update_gauges()

    def _handle_ready(self, ref) -> None:
        entry = self._by_ref.pop(ref, None)
        if entry is not None:
            slot = entry[0]
            self._batch_returned(*entry)
        elif ref in self._node_probes:
            return self._node_probed(ref)
        else:
            kind, slot, call = self._probes.pop(ref, (None, None, None))
            if kind == "ready" and slot.ready_ref is ref:
                self._slot_answered(slot, ref)
            elif kind == "progress" and call.progress_ref is ref and call in slot.calls:
                self._progress_answered(slot, call, ref)
            elif kind == "host" and call.host_ref is ref and call in slot.calls:
                self._host_answered(slot, call, ref)
            else:
                return  # superseded (answered elsewhere, or the slot was given up), or a hand-back's receipt
        self._arm(slot)

    def _batch_returned(self, slot: Slot, batch: Batch) -> None:
        slot.batches -= 1
        try:
            outs = self._ray.get(batch.ref)
        except self._task_error as e:  # an exception escaped the worker's runtime: the actor lives
            for call in batch.calls:
                self._remove_call(slot, call)
                self._finish(call.item, DoneStatus.ERROR, error=f"{type(e).__name__}: {e}",
                             worker=slot.worker_id, host=slot.host)
            return
        except self._worker_errors:
            self._refresh(slot)
            return self._batch_failed(slot, batch)
        compiles = 0
        for call, (token, out, compiles) in zip(batch.calls, outs):
            self._remove_call(slot, call)
            self._set_worker_id(slot, out["worker"])  # the process that answered (Ray may have restarted it)
            if out["status"] == "resend":  # the actor restarted and lost shared texts: send them again
                slot.shared_sent.clear()
                self._queue.push(call.item, front=True)
            elif out["status"] == "unrun":  # its node is being drained, or it retires: the item never started
                call.item.prefer = None
                self._queue.push(call.item, front=True)
            else:
                self._finish_call(slot, call, out)
        if self._sizer.observe([(call.item.work.handler, float(out.get("busy_secs", 0.0)))
                                for call, (_, out, _) in zip(batch.calls, outs)
                                if out["status"] not in ("resend", "unrun")]):
            for s in self._slots:  # the bound per worker moved: which slots take a batch now
                self._refresh(s)
        if compiles >= self.max_compiles:
            self._retire(slot)
        if slot.draining and not slot.calls:
            self._kill_slot(slot)  # its node can go: nothing of ours runs there

    def _replace_retired(self) -> None:
        for s in list(self._retiring):
            if s.state == "dead":
                del self._retiring[s]
            elif not s.calls and s.state == "ready":
                del self._retiring[s]
                self._kill_slot(s)
                self.stats.workers_recycled += 1
                if s.node_id not in self._dead_nodes and not s.draining:
                    self._new_slot(s.node_id)
        if not self._pruned:
            self._slots = [s for s in self._slots if s.state != "dead" or s.calls or s.lost]
            self._pruned = True

    def _no_workers_left(self) -> None:
        """Nothing in flight and nothing able to run: try new nodes once, else fail what is queued."""
        if not len(self._queue):
            return
        self._replace_retired()
        if not self._counts["ready"] + self._counts["starting"] + self._counts["probing"]:
            try:
                self._want = None
                self._spawn_workers(required=False, wait_s=0.0)
            except FarmError:
                pass
            if any(s.state != "dead" for s in self._slots):
                return
        for item in self._queue.clear():
            self._finish(item, DoneStatus.LOST, error="no live worker is left on the matching nodes")

    def record_trial(self, result: MeasureResult, task: str) -> None:
        if self._metrics is not None:
            self._metrics.trial(result, task)

    def _update_gauges(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._metrics is not None and (force or now - self._gauges_at >= _GAUGES_EVERY_S):
            self._gauges_at = now
            in_flight = len(self._items) - len(self._queue) - len(self._finished)
            self._metrics.gauge("tunefarm_candidates_in_flight", in_flight)
            self._metrics.gauge("tunefarm_live_workers", self.num_workers)
            self._metrics.driver_cpu(self.stats.driver_cpu_secs - self._cpu_in_metrics)
            self._cpu_in_metrics = self.stats.driver_cpu_secs

    # ------------------------------------------------------------------ shutdown
    def _abandon(self) -> None:
        """Items still running must not answer later: restart their actors in place (they keep their CPUs);
        the farm uses them again once they answer a ping."""
        self._queue.clear()
        for s in self._slots:
            if s.calls and s.state != "dead":
                self._ray.kill(s.actor, no_restart=False)
                self._set_state(s, "probing")
                self._ask_ready(s)
            s.calls.clear()
            s.lost.clear()
            s.batches = 0
            self._refresh(s)
        self._by_ref = {}
        self._update_gauges(force=True)

    def close(self) -> None:
        if self._closed:
            return
        for s in getattr(self, "_slots", []):
            if s.state != "dead":
                self._kill_slot(s)
        self._slots = []
        if self._metrics is not None:
            self._metrics.close()
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
        super().close()
