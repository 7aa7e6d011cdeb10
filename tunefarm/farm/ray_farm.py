"""RayFarm: measure candidates on long-lived Ray actors, one per CPU of every node with the job's CPU.

The driver keeps a bounded number of trials in flight per worker (backpressure: the driver never floods the
cluster, and a trial's clock starts close to when it really starts) and streams results back with
``ray.wait``. Faults, and what the driver does about them:

- a worker dies mid-trial (segfault in JIT code, SIGKILL, OOM): Ray restarts the actor (``max_restarts``); the
  trial call has ``max_task_retries=0`` so a crasher runs once; the driver pings the restarted actor, which
  returns its trial journal (journal.py): the trial that was running when the process died is recorded
  ``worker_lost``, a trial that finished but whose reply died with the process gets its journalled result,
  and calls that never started are re-queued without blame (at most ``_UNBLAMED_REQUEUES`` times);
- a trial over budget: the driver asks the actor's ``progress`` (time spent waiting for the host measurement
  lock or the workload's reference is not charged), and if it is really over, ``ray.kill``s the actor (plain
  ``ray.cancel`` cannot stop hung native code) and records ``timeout``; Ray restarts it;
- a node disappears: the ping fails (the actor is pinned to its node and cannot come back); the node's
  in-flight trials are re-queued once (``requeue_limit``), its workers dropped. Results already yielded are
  never touched, and every candidate gets exactly one result;
- a worker that has compiled ``max_compiles`` programs is replaced by a fresh actor (llvmlite leaks memory).

Nodes report their CPU (node_info.py); the farm measures only on nodes whose CPU matches ``target`` (default:
the CPU with the most cores in the cluster). If any node advertises the custom resource ``node_resource``
(``measure_slot`` in cluster.yaml), only those nodes host workers, so a head node can be kept free.
"""
from __future__ import annotations

import collections
import dataclasses
import socket
import time
from collections.abc import Iterator, Sequence

from .base import Farm, FarmError
from .candidate import Candidate
from .result import MeasureResult, MeasureStatus

_LARGE_WORKLOAD_BYTES = 64 * 1024  # larger workload texts go to the object store once per batch
_UNBLAMED_REQUEUES = 2  # a call that never started is re-queued this often before it is blamed all the same


@dataclasses.dataclass
class _Call:
    index: int
    token: int
    ref: object
    timeout_s: float
    attempt: int
    started: float = 0.0           # when we believe it started running (head of the slot's queue)
    deadline: float = 0.0
    killed: str = ""               # why we killed the worker for this call (a timeout), or ""
    rearms: int = 0                # deadline re-arms because the call had not started yet
    orphaned: bool = False         # queued on an actor incarnation that died before running it
    suspect: bool = False          # was running when its actor died, by the driver's reckoning
    progress_ref: object = None
    progress_deadline: float = 0.0


class _Slot:
    """One worker actor and the calls it has been sent."""

    def __init__(self, actor, node_id: str, host: str):
        self.actor = actor
        self.node_id = node_id
        self.host = host
        self.state = "starting"        # starting -> ready <-> probing ; -> dead
        self.ready_ref = None
        self.ready_deadline = 0.0
        self.calls: collections.deque[_Call] = collections.deque()
        self.retire = False
        self.lost: list[_Call] = []    # failed calls waiting for the ping's verdict
        self.error = ""                # why the actor could not be reached, when it could not


class RayFarm(Farm):
    """Measure on a Ray cluster.

    - ``address``: None starts a private local Ray for this job (``ray.init(address="local")``, never
      attaching to someone else's cluster) unless this process is already connected; ``"auto"`` or
      ``"host:port"`` joins that cluster;
    - ``num_workers``: total actors (default: one per CPU of every matching node);
    - ``target``: the CPU to measure on (a Target or string; default: the CPU with the most cores);
    - ``worker_cpus``: CPUs each actor reserves (1: actors hold their CPUs for the farm's lifetime, so plain
      Ray tasks that need a CPU wait until ``close``; use a fraction to leave room);
    - ``max_compiles``: LLVM builds before a worker is replaced; ``inflight_per_worker``: calls queued per actor
      (2: a worker starts its next trial without a round trip to the driver; the trial journal settles which
      of two failed calls crashed the actor);
    - ``requeue_limit``: how many times a trial lost with its node is re-run elsewhere;
    - ``measurer``: ``"tunefarm"`` or ``"simulate"`` (simulate.py); ``metrics``: record ray.util.metrics;
    - ``resource_wait_s``: how long to wait for CPUs to become free before refusing to start.
    """

    def __init__(self, address: str | None = None, num_workers: int | None = None, target=None, *,
                 worker_cpus: float = 1.0, max_compiles: int = 1000, inflight_per_worker: int = 2,
                 requeue_limit: int = 1, measurer: str = "tunefarm", lock_path: str | None = None,
                 pause_limit_s: float = 300.0, progress_timeout_s: float = 10.0, start_timeout_s: float = 180.0,
                 resource_wait_s: float = 15.0,
                 node_resource: str = "measure_slot", metrics: bool = True, ray_init_kwargs: dict | None = None):
        super().__init__()
        import ray

        if num_workers is not None and (not isinstance(num_workers, int) or num_workers < 1):
            raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
        if worker_cpus < 0:
            raise ValueError(f"worker_cpus must be >= 0, got {worker_cpus!r}")
        if inflight_per_worker < 1 or max_compiles < 1 or requeue_limit < 0:
            raise ValueError("inflight_per_worker and max_compiles must be >= 1, requeue_limit >= 0")
        if measurer not in ("tunefarm", "simulate"):
            raise ValueError(f"unknown measurer {measurer!r}; use 'tunefarm' or 'simulate'")
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
        self.measurer = measurer
        self.lock_path = lock_path
        self.pause_limit_s = pause_limit_s
        self.progress_timeout_s = progress_timeout_s
        self.start_timeout_s = start_timeout_s
        self.resource_wait_s = resource_wait_s
        self.node_resource = node_resource
        self._slots: list[_Slot] = []
        self._want: int | None = None
        self._token = 0
        self._dead_nodes: set[str] = set()
        self._unblamed: collections.Counter = collections.Counter()  # trial index -> re-queues without blame
        self._driver_host = socket.gethostname()
        self._metrics = None
        if metrics:
            from .metrics import FarmMetrics

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
        from tunefarm.target import Target

        from .node_info import probe_nodes

        nodes = self._candidate_nodes()
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
            self._target = target if isinstance(target, Target) else Target(target)
        self.nodes = [i for i in infos if i.matches(self._target)]
        if not self.nodes:
            seen = sorted({i.target for i in infos})
            raise FarmError(f"no node has the CPU of target {self._target}; nodes report: {seen}")
        self._spawn_workers(required=True, wait_s=self.resource_wait_s)
        self._wait_ready()

    def _candidate_nodes(self) -> list[dict]:
        alive = [n for n in self._ray.nodes() if n.get("Alive")]
        marked = [n for n in alive if n.get("Resources", {}).get(self.node_resource, 0) > 0]
        return marked or alive

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
            if info.node_id in self._dead_nodes:
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
                self._want = self.num_requested if self.num_requested is not None else sum(free.values())
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

    def _new_slot(self, node_id: str) -> _Slot:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .ray_worker import MeasureWorker

        info = next(i for i in self.nodes if i.node_id == node_id)
        actor = MeasureWorker.options(
            num_cpus=self.worker_cpus, max_restarts=-1, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(self.measurer, self.lock_path)
        slot = _Slot(actor, node_id, info.hostname)
        slot.ready_ref = actor.info.remote()
        slot.ready_deadline = time.monotonic() + self.start_timeout_s
        self._slots.append(slot)
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
        self._update_gauges(0)

    def _slot_answered(self, slot: _Slot, ref) -> None:
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
            slot.state = "ready"
            if slot.calls:  # calls sent before the failure that the restarted actor will still run
                head = slot.calls[0]
                head.started = time.monotonic()
                head.deadline = head.started + head.timeout_s
            lost, slot.lost = slot.lost, []
            journal = info.get("journal") if isinstance(info, dict) else None
            return self._verdict(slot, lost, node_alive=True, journal=journal)
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

    def _kill_slot(self, slot: _Slot) -> None:
        slot.state = "dead"
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    @property
    def target(self):
        return self._target

    @property
    def num_workers(self) -> int:
        return sum(1 for s in self._slots if s.state in ("ready", "probing"))

    def worker_info(self) -> list[dict]:
        """``{pid, node_id, host}`` of every ready worker (diagnostics and fault drills)."""
        slots = [s for s in self._slots if s.state == "ready"]
        return self._ray.get([s.actor.info.remote() for s in slots])

    def wait_ready(self, timeout_s: float = 60.0) -> int:
        """Between batches: wait until workers restarting after a crash or timeout answer again.

        Returns the number of ready workers. (A batch does not need this: it sends work to the workers that
        are ready and picks the others up as they come back.)
        """
        if self._busy:
            raise FarmError("wait_ready is for between batches")
        self._finished, self._queue = [], collections.deque()
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

    def in_flight_by_node(self) -> dict[str, int]:
        """Calls currently sent to each node's workers (diagnostics and fault drills)."""
        out: dict[str, int] = collections.Counter()
        for s in self._slots:
            if s.state != "dead":
                out[s.node_id] += len(s.calls)
        return dict(out)

    # ------------------------------------------------------------------ the event loop
    def submit(self, candidates: Sequence[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        cands = self._check_candidates(candidates)
        return self._run(cands)

    def _run(self, cands: list[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        with self._batch():
            yield from self._run_batch(cands)

    def _run_batch(self, cands: list[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        ray = self._ray
        cpu0 = time.process_time()
        self.stats.submitted += len(cands)
        self._cands = cands
        self._queue: collections.deque[tuple[int, int]] = collections.deque((i, 0) for i in range(len(cands)))
        self._unblamed = collections.Counter()
        self._workloads: dict[str, object] = {}
        self._finished: list[tuple[int, MeasureResult]] = []
        self._by_ref: dict = {}
        if self._slots_needed():  # workers lost with their node: top up on the nodes that are left
            self._spawn_workers(required=False, wait_s=0.0)
        done = 0
        try:
            while done < len(cands):
                self._dispatch()
                self.stats.max_in_flight = max(self.stats.max_in_flight, len(self._by_ref))
                refs = list(self._by_ref)
                refs += [s.ready_ref for s in self._slots if s.ready_ref is not None]
                refs += [c.progress_ref for s in self._slots for c in s.calls if c.progress_ref is not None]
                if not refs and not self._finished:
                    self._no_workers_left()
                    if not self._finished and not any(s.ready_ref is not None for s in self._slots):
                        raise FarmError(f"internal error: {len(cands) - done} candidates neither queued, "
                                        "in flight nor finished")
                    continue
                if refs and not self._finished:
                    wait_s = self._next_deadline() - time.monotonic()
                    self.stats.driver_cpu_secs += time.process_time() - cpu0
                    ready, rest = ray.wait(refs, num_returns=1, timeout=max(0.0, wait_s))
                    if ready and rest:
                        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                        ready += more
                    cpu0 = time.process_time()
                    for ref in ready:
                        self._handle_ready(ref)
                    self._check_deadlines()
                    self._replace_retired()
                finished, self._finished = self._finished, []
                self._update_gauges(len(self._by_ref))
                for i, r in finished:
                    done += 1
                    self.stats.completed += 1
                    if self._metrics is not None:
                        self._metrics.trial(r, cands[i].task)
                    spent = time.process_time() - cpu0
                    self.stats.driver_cpu_secs += spent
                    if self._metrics is not None:
                        self._metrics.driver_cpu(spent)
                    yield i, r
                    cpu0 = time.process_time()
        finally:
            # abandoned mid-batch: trials still running must not answer into the next batch. Restart their
            # actors in place (they keep their CPUs); the next batch uses them once they answer a ping.
            for s in self._slots:
                if s.calls and s.state != "dead":
                    self._ray.kill(s.actor, no_restart=False)
                    s.state = "probing"
                    s.ready_ref = s.actor.info.remote()
                    s.ready_deadline = time.monotonic() + self.start_timeout_s
                s.calls.clear()
                s.lost.clear()
            self._by_ref = {}
            self._update_gauges(0)
            self.stats.driver_cpu_secs += time.process_time() - cpu0

    def _slots_needed(self) -> bool:
        return sum(1 for s in self._slots if s.state != "dead") < (self._want or 0)

    def _dispatch(self) -> None:
        now = time.monotonic()
        for s in self._slots:
            if not self._queue:
                return
            if s.state != "ready" or s.retire:
                continue
            while self._queue and len(s.calls) < self.inflight_per_worker:
                index, attempt = self._queue.popleft()
                c = self._cands[index]
                workload = self._workloads.get(c.workload_key)
                if workload is None:
                    workload = c.with_workload_text().workload_json
                    if len(workload) > _LARGE_WORKLOAD_BYTES:
                        workload = self._ray.put(workload)
                    self._workloads[c.workload_key] = workload
                self._token += 1
                ref = s.actor.measure.remote(self._token, c.to_wire(""), workload)
                call = _Call(index, self._token, ref, c.timeout_s, attempt)
                if not s.calls:
                    call.started = now
                    call.deadline = now + call.timeout_s
                s.calls.append(call)
                self._by_ref[ref] = (s, call)

    def _next_deadline(self) -> float:
        times = [time.monotonic() + 60.0]
        for s in self._slots:
            if s.ready_ref is not None and s.state == "starting":
                times.append(s.ready_deadline)
            if s.calls and s.state == "ready":
                head = s.calls[0]
                times.append(head.progress_deadline if head.progress_ref is not None else head.deadline)
        return min(times)

    # ------------------------------------------------------------------ events
    def _handle_ready(self, ref) -> None:
        entry = self._by_ref.pop(ref, None)
        if entry is not None:
            return self._call_finished(*entry)
        for s in self._slots:
            if s.ready_ref is not None and s.ready_ref == ref:
                return self._slot_answered(s, ref)
            for c in s.calls:
                if c.progress_ref is not None and c.progress_ref == ref:
                    return self._progress_answered(s, c, ref)

    def _call_finished(self, slot: _Slot, call: _Call) -> None:
        try:
            token, result, compiles = self._ray.get(call.ref)
        except self._task_error as e:
            self._remove_call(slot, call)
            return self._finish(call, MeasureStatus.RUN_ERROR, f"internal error in the worker: {e}"[:2000],
                                slot.host)
        except self._worker_errors:
            return self._call_failed(slot, call)
        self._remove_call(slot, call)
        self._finished.append((call.index, MeasureResult.from_dict(result)))
        if compiles >= self.max_compiles:
            slot.retire = True

    def _remove_call(self, slot: _Slot, call: _Call) -> None:
        was_head = slot.calls and slot.calls[0] is call
        slot.calls.remove(call)
        if was_head and slot.calls:  # the next call starts now
            head = slot.calls[0]
            head.started = time.monotonic()
            head.deadline = head.started + head.timeout_s

    def _call_failed(self, slot: _Slot, call: _Call) -> None:
        """The actor died or vanished under this call; a ping to the actor decides what that means."""
        was_head = bool(slot.calls) and slot.calls[0] is call
        slot.calls.remove(call)
        if call.killed:
            self._finish(call, MeasureStatus.TIMEOUT, call.killed, slot.host)
            self.stats.timeouts += 1
        else:  # the ping's answer (the journal) decides; without one, the call at the head is the suspect
            call.suspect = was_head and not call.orphaned
            slot.lost.append(call)
        if was_head:  # the calls queued behind it never ran on the incarnation that just died
            for other in slot.calls:
                other.orphaned = True
        # (a queued call can report its failure before the head does; the head, still running when the actor
        # died, stays the suspect)
        if slot.state in ("ready", "starting"):
            slot.state = "probing"
            slot.ready_ref = slot.actor.info.remote()
            slot.ready_deadline = time.monotonic() + self.start_timeout_s
        elif slot.state == "dead":
            lost, slot.lost = slot.lost, []
            self._verdict(slot, lost, node_alive=self._node_alive(slot.node_id))

    def _verdict(self, slot: _Slot, lost: list[_Call], node_alive: bool, journal: dict | None = None) -> None:
        for call in lost:
            if journal is not None:  # the restarted actor's account of what its dead process did
                done = journal["done"].get(call.token)
                if done is not None:  # measured; its reply died with the process
                    result, compiles = done
                    self._finished.append((call.index, MeasureResult.from_dict(result)))
                    self.stats.recovered += 1
                    slot.retire = slot.retire or compiles >= self.max_compiles
                    continue
                if call.token not in journal["crashed"]:
                    self._requeue_unblamed(call, slot.host)
                    continue
            elif not call.suspect:
                self._requeue_unblamed(call, slot.host)
                continue
            if not node_alive and call.attempt < self.requeue_limit:
                self._queue.appendleft((call.index, call.attempt + 1))
                self.stats.requeued += 1
                if self._metrics is not None:
                    self._metrics.requeued()
                continue
            why = ("its node left the cluster" if not node_alive else "the worker process died (a crash in JIT "
                   "code, or it was killed)")
            self._finish(call, MeasureStatus.WORKER_LOST, f"lost while measuring: {why}", slot.host)
            self.stats.worker_lost += 1
        if slot.state == "dead":
            # calls still queued on a dead actor will fail; give them back to the queue now
            for call in list(slot.calls):
                self._by_ref.pop(call.ref, None)
                self._queue.appendleft((call.index, call.attempt))
            slot.calls.clear()

    def _requeue_unblamed(self, call: _Call, host: str) -> None:
        """A call that never started on the process that died: run it again, unless that keeps happening."""
        self._unblamed[call.index] += 1
        if self._unblamed[call.index] <= _UNBLAMED_REQUEUES:
            self._queue.appendleft((call.index, call.attempt))
            return
        self._finish(call, MeasureStatus.WORKER_LOST, "lost while measuring: its worker died under it "
                     f"{self._unblamed[call.index]} times", host)
        self.stats.worker_lost += 1

    def _finish(self, call: _Call, status: MeasureStatus, text: str, host: str) -> None:
        self._finished.append((call.index, MeasureResult(status, [], 0.0, text, host)))

    def _progress_answered(self, slot: _Slot, call: _Call, ref) -> None:
        call.progress_ref = None
        try:
            snap = self._ray.get(ref)
        except self._worker_errors:
            return  # the trial call itself will report the failure
        now = time.monotonic()
        if snap["token"] != call.token:
            # not started yet (actor restarting, or the reply is on its way): restart the clock, a few times
            call.rearms += 1
            if call.rearms > 5:
                return self._kill_for_timeout(slot, call, "the worker answers but never started the trial")
            call.started = now
            call.deadline = now + call.timeout_s
        elif snap["paused"]:
            call.deadline = now + max(0.0, self.pause_limit_s - snap["paused_secs"])
            if snap["paused_secs"] >= self.pause_limit_s:
                self._kill_for_timeout(slot, call, f"trial waited more than {self.pause_limit_s:g} s for the "
                                       f"host measurement lock or its workload's reference")
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
                    self._finish(head, MeasureStatus.TIMEOUT, head.killed, s.host)
                    self.stats.timeouts += 1
                    self._kill_slot(s)
                continue
            if head.progress_ref is not None:
                if now >= head.progress_deadline:  # the actor does not even answer: it is stuck
                    head.progress_ref = None
                    self._kill_for_timeout(s, head, f"trial exceeded its {head.timeout_s:g} s budget and the "
                                           "worker did not answer a progress query")
            elif now >= head.deadline:
                head.progress_ref = s.actor.progress.remote()
                head.progress_deadline = now + self.progress_timeout_s

    def _kill_for_timeout(self, slot: _Slot, call: _Call, why: str = "") -> None:
        call.killed = (why or f"trial exceeded its {call.timeout_s:g} s budget") + "; worker killed"
        call.deadline = time.monotonic() + self.start_timeout_s
        self._ray.kill(slot.actor, no_restart=False)  # Ray restarts it; the call fails -> timeout

    def _replace_retired(self) -> None:
        for s in list(self._slots):
            if s.retire and not s.calls and s.state == "ready":
                self._kill_slot(s)
                self._slots.remove(s)
                self.stats.workers_recycled += 1
                if s.node_id not in self._dead_nodes:
                    self._new_slot(s.node_id)
        self._slots = [s for s in self._slots if s.state != "dead" or s.calls or s.lost]

    def _no_workers_left(self) -> None:
        """Nothing in flight and nothing able to run: try new nodes once, else fail what is left."""
        if not self._queue:
            return
        self._replace_retired()
        if not any(s.state != "dead" for s in self._slots):
            try:
                infos_alive = {n["NodeID"] for n in self._candidate_nodes()}
                self.nodes = [i for i in self.nodes if i.node_id in infos_alive]
                self._spawn_workers(required=False, wait_s=0.0)
            except FarmError:
                pass
            if any(s.state != "dead" for s in self._slots):
                return
        while self._queue:
            index, attempt = self._queue.popleft()
            self._finished.append((index, MeasureResult(MeasureStatus.WORKER_LOST, [], 0.0,
                                                        "no live measurement worker is left on the matching nodes",
                                                        self._driver_host)))
            self.stats.worker_lost += 1

    def _update_gauges(self, in_flight: int) -> None:
        if self._metrics is not None:
            self._metrics.gauge("tunefarm_candidates_in_flight", in_flight)
            self._metrics.gauge("tunefarm_live_workers", self.num_workers)

    # ------------------------------------------------------------------ shutdown
    def close(self) -> None:
        if self._closed:
            return
        for s in getattr(self, "_slots", []):
            if s.state != "dead":
                self._kill_slot(s)
        self._slots = []
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
        super().close()
