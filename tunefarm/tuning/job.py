"""The tuning job: an asynchronous, streaming loop that keeps every worker of the farm busy.

There are no rounds to wait for. The driver keeps about ``farm.capacity`` work items in flight (two per worker)
and, whenever one finishes, hands the farm the next: a *measurement* of the best candidate of the task the
scheduler chose, a *search request* for a task whose pool needs candidates (the search runs on the workers,
see ``search/generate.py``), or a *training* of the cost model (on a worker too, so the search never waits for
XGBoost; the search scores with the newest finished model and every record says which version chose it).

The driver keeps only what must be central: per task the population, the pool of scored candidates and the
dedup set (seeded from the database, so a resumed job measures nothing twice), the cost model's samples and
its batched predictions, the database writes, and the task scheduler. Results are committed in small
transactions as they arrive, so a killed job loses at most what was in flight.

The task scheduler works on rounds of ``trials_per_round`` measurements as before (``search/task_scheduler``):
a task chosen by the scheduler gets the next measurement slots until its round is handed out; a slot whose
task has no candidate ready yet goes to a task that has one. Every task gets a first round before gradients
decide.
"""
from __future__ import annotations

import logging
import math
import time

from ..database import Record
from ..farm import DoneStatus, Work
from ..runtime.measure_result import MeasureResult, MeasureStatus
from ..search.failure_watch import FailureWatch
from ..search.progress import Progress
from .job_task import JobTask
from .patience import Patience
from .time_budget import TimeBudget

log = logging.getLogger("tunefarm.tuning")

MEASURE_HANDLER = "tunefarm.tuning.handlers:measure"
TRAIN_HANDLER = "tunefarm.tuning.handlers:train"
TRAIN_TIMEOUT_S = 600.0
POLL_S = 5.0                 # longest wait for the farm between checks (faults are handled inside poll)
CLAIM_TRIES = 8              # rounds of picks refused by the database (another job has them) before slots wait
HEARTBEAT_S = 30.0           # how often the job tells the database its driver is alive (see database/liveness)
_LOST = {DoneStatus.LOST: MeasureStatus.WORKER_LOST, DoneStatus.TIMEOUT: MeasureStatus.TIMEOUT,
         DoneStatus.ERROR: MeasureStatus.RUN_ERROR}


class TuningJob:
    """Runs the tasks of one job on a farm (see module doc). ``run(n)`` measures up to ``n`` new programs."""

    def __init__(self, tasks: list[JobTask], target, db, farm, model, scheduler, *, job_id: int,
                 max_trials: int, trials_per_round: int, timeout_s, measure: dict, early_stop: float | None, progress: Progress,
                 failures: FailureWatch):
        self.tasks, self.target, self.db, self.farm = tasks, str(target), db, farm
        self.model, self.scheduler, self.job_id = model, scheduler, job_id
        self.max_trials = max_trials
        self.trials_per_round = trials_per_round
        self.last_heartbeat = time.monotonic()
        self.timeout_s, self.measure, self.early_stop = timeout_s, measure, early_stop
        self.progress = progress
        self.failures = failures
        self.budget = 0
        self.submitted = 0
        self.new_trials = 0
        self.training = False
        self.current: JobTask | None = None
        self.current_picks = 0
        self.pending_records: list[Record] = []
        self.busy_secs = 0.0
        self.replays = 0            # measurements whose program was not cached on the worker that measured it
        self.search_cpu = 0.0       # driver CPU choosing and scoring candidates
        self.model_cpu = 0.0        # driver CPU installing models
        self.time_budget = TimeBudget()  # the job's deadline, if it has one (time_budget.py)
        self.patience = Patience()       # ends tasks that stopped improving (patience.py)

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self, budget: int) -> None:
        self.budget = budget
        try:
            while self._measuring():
                self._fill()
                if not self.farm.pending:
                    break
                for d in self.farm.poll(self.time_budget.wait(POLL_S)):
                    self._done(d)  # their records are stored by the next step's transaction
                self._heartbeat()
            if self.time_budget.spent:
                self.time_budget.wind_down(self.farm, self._done)  # in flight: stored within a grace, else dropped
            self._drain()
        finally:
            self._commit()
            for t in self.tasks:
                if t.round_results:
                    self._close_round(t)
                if not math.isfinite(t.state.best_latency) and t.error is None:
                    t.search.error = self.failures.summary(t.name)  # never succeeded: say why

    def _measuring(self) -> bool:
        """Measurements are still in flight, or could still be handed out (and the time budget is not spent)."""
        work = (any(t.measures_in_flight for t in self.tasks)
                or self.submitted < self.budget and any(t.open() for t in self.tasks))
        return work and not self.time_budget.expired()  # only a job with work left is ended by its deadline

    def _drain(self) -> None:
        """Wait for search and training work still in flight (its results are no longer needed)."""
        while self.farm.pending:
            for d in self.farm.poll(POLL_S):
                if d.work.tag[0] == "search":
                    d.work.tag[1].requests_in_flight -= 1
                elif d.work.tag[0] == "train":
                    self.training = False

    def _fill(self) -> None:
        """Put work until the farm holds ``capacity`` items, each chosen for the worker that has room.

        The programs picked for measuring are claimed in the database in the same transaction that stores the
        results that arrived since the last step (``Database.commit_and_claim``): one small write per step.
        """
        for _ in range(CLAIM_TRIES):
            rooms = self.farm.rooms()
            free = self.farm.capacity - self.farm.pending
            picks = []
            while free > 0:
                worker = max(rooms, key=rooms.get) if rooms else None
                item = self._next_work(worker)
                if item is None:
                    break
                free -= 1
                if worker is not None:
                    rooms[worker] -= 1
                    if not rooms[worker]:
                        del rooms[worker]
                if isinstance(item, Work):
                    item.prefer = item.prefer or worker
                    self.farm.put(item)
                else:
                    picks.append(item)
            if not self._claim_and_commit(picks):
                return

    def _next_work(self, worker: str | None):
        """Training, a pick to measure ``(task, entry)`` (claimed later), or a search request; None if nothing."""
        if not self.training and self.model.wants_training():
            self.training = True
            return Work(TRAIN_HANDLER, self.model.training_payload(), timeout_s=TRAIN_TIMEOUT_S, tag=("train",))
        if self.submitted < self.budget:
            t0 = time.thread_time()
            t = self._task_to_measure()
            entry = t.search.pick(worker) if t is not None else None
            self.search_cpu += time.thread_time() - t0
            if entry is not None:
                t.measures_in_flight += 1  # held until the claim says whether it is ours
                self.submitted += 1
                return t, entry
        cap = max(2, self.farm.capacity // 2)
        for t in self._search_order():
            if t.wants_search(cap):
                t0 = time.thread_time()
                try:
                    work = t.search_work()
                except Exception as e:  # noqa: BLE001 - a space that fails in the driver ends its task
                    t.search.error = str(e)
                    log.error("%s", e)
                    continue
                finally:
                    self.search_cpu += time.thread_time() - t0
                if isinstance(work, dict):  # searched here: the reply is ready
                    t.search_done(work, "")
                    return self._next_work(worker)
                return work
        return None

    def _search_order(self) -> list[JobTask]:
        """The current task first, then the others by how few candidates they hold."""
        rest = sorted((t for t in self.tasks if t is not self.current), key=lambda t: len(t.search.pool))
        return ([self.current] if self.current is not None else []) + rest

    # -- scheduling --------------------------------------------------------------------------------------------
    def _task_to_measure(self) -> JobTask | None:
        for t in self.tasks:
            t.state.done = not t.open() and not t.measures_in_flight
        cur = self.current
        if cur is None or self.current_picks >= self.trials_per_round or not cur.open():
            states = [t.state for t in self.tasks]
            for t, st in zip(self.tasks, states):
                st.done = not t.open()
            i = self.scheduler.next_task(states)
            self.current = cur = None if i is None else self.tasks[i]
            self.current_picks = 0
        if cur is not None and cur.search.pool and cur.budget_left():
            self.current_picks += 1
            return cur
        for t in self.tasks:  # the chosen task has nothing ready: do not let the slot idle
            if t.open() and t.search.pool:
                return t
        return None

    # -- sharing the database with concurrent jobs -----------------------------------------------------------------
    def _claim_and_commit(self, picks: list) -> int:
        """Store the results that arrived and claim the picked programs, in one transaction; measure those that
        are ours. Jobs tuning the same workload at once share its budget and its dedup set this way: a pick is
        refused when another job holds or measured it (then it is known here too), or when the budget is spent
        (then its task is done). The picks of one task are claimed together, under a budget read once per step.
        Returns how many picks were refused."""
        if not picks and not self.pending_records:
            return 0
        records, self.pending_records = self.pending_records, []
        by_task: dict[JobTask, list] = {}
        for t, e in picks:
            by_task.setdefault(t, []).append(e)
        budgets = self._budgets(by_task)
        wanted = [(t.key, self.target, [e.hash for e in entries], budgets[t]) for t, entries in by_task.items()]
        granted = self.db.commit_and_claim(records, self.job_id, wanted)
        refused = 0
        for (t, entries), got in zip(by_task.items(), granted):
            got = set(got)
            t.measures_in_flight -= len(entries)
            for e in entries:
                if e.hash in got:
                    self.farm.put(self._measure_work(t, e))
                    continue
                refused += 1
                self.submitted -= 1
                t.search.known.add(e.hash)
            if len(got) < len(entries) and self.db.budget_used(t.key, self.target) >= budgets[t]:
                t.budget_spent = True
        return refused

    def _budgets(self, tasks) -> dict:
        """Trials the database may hold for each task's workload: the job's total less what its other tasks
        used (read from the database, which concurrent jobs write too), and the task's own limit."""
        if len(self.tasks) == 1:
            return {t: max(0, int(min(self.max_trials, t.max_trials))) for t in tasks}
        used = {id(o): self.db.budget_used(o.key, self.target) for o in self.tasks
                if any(o is not t for t in tasks)}  # what some task being claimed for counts against it
        return {t: max(0, int(min(self.max_trials - sum(n for i, n in used.items() if i != id(t)), t.max_trials)))
                for t in tasks}

    def _heartbeat(self) -> None:
        now = time.monotonic()
        if now - self.last_heartbeat >= HEARTBEAT_S:
            self.db.heartbeat(self.job_id)
            self.last_heartbeat = now

    # -- work items ----------------------------------------------------------------------------------------------
    def _measure_work(self, t: JobTask, entry) -> Work:
        best = t.state.best_latency
        stop = self.early_stop * best if self.early_stop and math.isfinite(best) and best > 0 else None
        settings = dict(self.measure, check=True, stop_above_s=stop)
        timeout = self.timeout_s.get(t.name, 10.0) if isinstance(self.timeout_s, dict) else self.timeout_s
        t.measures_in_flight += 1
        t.state.inflight = 1
        t.submitted += 1
        payload = {"task": t.digest, "hash": entry.hash, "trace": entry.trace, "target": self.target,
                   "settings": settings}
        return Work(MEASURE_HANDLER, payload, timeout_s=timeout, prefer=entry.worker or None, shared=t.shared,
                    tag=("measure", t, entry, self.model.version))

    def _done(self, d) -> None:
        kind = d.work.tag[0]
        self.busy_secs += d.busy_secs
        if kind == "measure":
            self._measured(d)
        elif kind == "search":
            t = d.work.tag[1]
            t.requests_in_flight -= 1
            t0 = time.thread_time()
            if d.status in (DoneStatus.LOST, DoneStatus.TIMEOUT):
                retry = t.search_lost(d.work, d.error)
                if retry is not None:
                    self.farm.put(retry)
            else:
                t.search_done(d.value if d.status is DoneStatus.OK else None, d.worker, d.error)
            self.search_cpu += time.thread_time() - t0
            if t.error:
                log.error("%s", t.error)
        elif kind == "train":
            self.training = False
            if d.status is DoneStatus.OK:
                t0 = time.thread_time()
                self.model.install(d.value)
                self.model_cpu += time.thread_time() - t0
            else:
                log.warning("cost model training failed (%s): %s", d.status.value, d.error)

    def _measured(self, d) -> None:
        _, t, entry, version = d.work.tag  # the model version that scored the pick
        t.measures_in_flight -= 1
        t.state.inflight = 1 if t.measures_in_flight else 0
        cpu = None
        if d.status is DoneStatus.OK:
            result = MeasureResult.from_dict(d.value["result"])
            self.replays += bool(d.value.get("replayed"))
            cpu = d.value.get("cpu_model")  # provenance: the CPU that timed it
        else:
            result = MeasureResult(_LOST[d.status], [], 0.0, d.error, d.host)
        self.farm.record_trial(result, t.name)
        lat = min(result.run_secs) if result.ok else None  # learning uses the fastest repeat
        t.search.measured_result(entry, lat)
        self.model.add([entry.features], [t.key], [lat])
        self.pending_records.append(Record(t.key, entry.trace, entry.hash, self.target, result, self.job_id,
                                           None, model_version=version, cpu_model=cpu))  # numbered at commit
        t.state.trials += 1
        if self.patience.measured(t.name, result.median_secs if result.ok else None):
            t.ended = t.state.ended = "patience"  # its share of the budget goes to the tasks still improving
        if result.ok:
            t.state.best_latency = min(t.state.best_latency, result.median_secs)
        elif result.error:
            log.debug("task %s: %s: %s", t.name, result.status.value, result.error.splitlines()[0][:300])
        self.new_trials += 1
        stop = self.failures.observe(t.name, [result])
        if stop is not None:
            t.search.error = stop
        t.round_results += 1
        if t.round_results >= self.trials_per_round:
            self._close_round(t)

    def _close_round(self, t: JobTask) -> None:
        """A round's worth of results: the scheduler's history and the progress table."""
        t.state.trials -= t.round_results
        t.state.record_round(t.round_results, t.state.best_latency)
        n, t.round_results = t.round_results, 0
        self.progress.round(self.tasks.index(t), n)

    def _commit(self) -> None:
        self._claim_and_commit([])
