"""The tuning job: an asynchronous, streaming loop that keeps every worker of the farm busy.

There are no rounds to wait for. The driver keeps about ``farm.capacity`` work items in flight
(``farm.items_per_worker`` per worker) and, whenever one finishes, hands the farm the next: a *measurement* of
the best candidate of the task the scheduler chose, a *search request* for a task whose pool needs candidates
(the search runs on the workers, see ``search/generate.py``), or a *training* of the cost model (on a worker
too, so the search never waits for XGBoost; the search scores with the newest finished model and every record
says which version chose it; a worker keeps the samples it was sent, so a retraining sends only what the
workers lack).
Room that none of these takes (a big farm drains the pools faster than the tasks' search credit refills them)
goes to search *ahead*: full requests beyond the credit, one in flight per worker at most, so no worker idles
while the budget is still being handed out, and the cost model chooses among more candidates.

Each measured result is handed to the job's measure callbacks (``callbacks.py``: the database record, the
search, the cost model, the farm's metrics, the task; then the user's), once per result, in list order.

The driver keeps only what must be central: per task the population, the pool of scored candidates and the
dedup set (seeded from the database, so a resumed job measures nothing twice), the cost model's samples and
its batched predictions, the database writes, and the task scheduler. Results are committed in small
transactions with the next claim (at most ``COMMIT_EVERY_S`` later), so a killed job loses at most what was
in flight or not yet committed.

The task scheduler works on rounds of ``trials_per_round`` measurements as before (``search/task_scheduler``):
a task chosen by the scheduler gets the next measurement slots until its round is handed out; a slot whose
task has no candidate ready yet goes to a task that has one, as long as the budget keeps what the other tasks
still lack of their first round. Every task gets a first round before gradients decide.
"""
from __future__ import annotations

import functools
import logging
import math
import time

from ..farm import DoneStatus, Work
from ..search.failure_watch import FailureWatch
from ..search.progress import Progress
from .callbacks import AddToDatabase, MeasureCallback, Measured
from .job_task import JobTask
from .patience import Patience
from .time_budget import TimeBudget

log = logging.getLogger("tunefarm.tuning")

MEASURE_HANDLER = "tunefarm.tuning.handlers:measure"
TRAIN_HANDLER = "tunefarm.tuning.handlers:train"
TRAIN_TIMEOUT_S = 600.0
TRAIN_TURN_S = 1.0           # longest a due training waits for a worker that has not trained yet (_turn_until)
POLL_S = 5.0                 # longest wait for the farm between checks (faults are handled inside poll)
CLAIM_TRIES = 8              # rounds of picks refused by the database (another job has them) before slots wait
HEARTBEAT_S = 30.0           # how often the job tells the database its driver is alive (see database/liveness)
CLAIM_AHEAD = 8              # most picks claimed ahead per worker picked for (what the worker holds, at most this)
COMMIT_EVERY_S = 1.0         # longest a result waits for a transaction when no claim brings one sooner


class TuningJob:
    """Runs the tasks of one job on a farm (see module doc). ``run(n)`` measures up to ``n`` new programs.

    The loop (``run``) has three parts with one place each: when to stop (``_measuring``), what to put
    (``_fill``: picks, claims, search and training), and what came back (``_done``; a measurement goes to
    ``callbacks``)."""

    def __init__(self, tasks: list[JobTask], target, db, farm, model, scheduler, *, job_id: int,
                 max_trials: int, trials_per_round: int, timeout_s, measure: dict, early_stop: float | None,
                 progress: Progress, failures: FailureWatch, callbacks: list[MeasureCallback] | None = None):
        self.tasks, self.target, self.db, self.farm = tasks, str(target), db, farm
        self.model, self.scheduler, self.job_id = model, scheduler, job_id
        self.max_trials = max_trials
        self.trials_per_round = trials_per_round
        self.timeout_s, self.measure, self.early_stop = timeout_s, measure, early_stop
        self.progress = progress
        self.failures = failures
        self.callbacks = MeasureCallback.Default() if callbacks is None else list(callbacks)
        self.records = next((cb for cb in self.callbacks if isinstance(cb, AddToDatabase)), None)
        if self.records is None:
            raise ValueError("a tuning job's callbacks must hold an AddToDatabase: nothing measured is lost")
        self.last_heartbeat = time.monotonic()
        self.budget = 0
        self.submitted = 0
        self.new_trials = 0
        self.training = False
        self.samples_held: dict = {}  # worker -> samples of the model it keeps (a training sends only what they lack)
        self.first_rounds_done = False  # every task measured its first round (_leaves_first_rounds)
        self.train_due: float | None = None  # when a due training began to wait for a worker's turn (_turn_until)
        self.draining = False
        self.current: JobTask | None = None
        self.current_picks = 0
        self.reserved: dict = {}    # worker -> [(task, candidate)] claimed ahead for it, not yet put
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
                    self._done(d)
                self._heartbeat()
            if self.time_budget.spent:
                self.time_budget.wind_down(self.farm, self._done)  # in flight: stored within a grace, else dropped
            self._drain()
        finally:
            self._commit()
            for t in self.tasks:
                n = t.close_round()
                if n:
                    self.progress.round(self.tasks.index(t), n)
                if not math.isfinite(t.state.best_latency) and t.error is None:
                    t.fail(self.failures.summary(t.name))  # never succeeded: say why

    def _measuring(self) -> bool:
        """Measurements are still in flight, or could still be handed out (and the time budget is not spent)."""
        work = (any(t.measures_in_flight for t in self.tasks)
                or self.submitted < self.budget and any(t.open() for t in self.tasks))
        return work and not self.time_budget.expired()  # only a job with work left is ended by its deadline

    def _drain(self) -> None:
        """Take the search and training work still in flight (nothing new is put)."""
        self.draining = True
        while self.farm.pending:
            for d in self.farm.poll(POLL_S):
                self._done(d)

    # -- what to put ---------------------------------------------------------------------------------------------
    def _fill(self) -> None:
        """Put work until the farm holds ``capacity`` items, each chosen for the worker that has room.

        The programs picked for measuring are claimed in the database in the same transaction that stores the
        results that arrived since the last one (``Database.commit_and_claim``). A step that claims anyway
        claims what one worker holds (``Farm.items_per_worker``, at most ``CLAIM_AHEAD``) more picks for each
        worker it picked for and holds them until that worker has
        room again: those steps need no transaction, so a driver step costs a transaction only every few
        trials (at most ``COMMIT_EVERY_S`` of results wait for one).
        """
        for _ in range(CLAIM_TRIES):
            rooms = self.farm.rooms()
            free = self.farm.capacity - self.farm.pending
            picks = []
            while free > 0:
                worker = max(rooms, key=rooms.get) if rooms else None
                item = (self._training(worker) or self._reserved_for(worker) or self._next_work(worker)
                        or self._reserved_for(worker, True))
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
                    picks.append((*item, worker, False))
            if picks:
                picks += self._picks_ahead({p[2] for p in picks})
            if not self._claim_and_commit(picks):
                return

    def _reserved_for(self, worker, anyone: bool = False) -> Work | None:
        """The measurement of a pick claimed ahead for ``worker`` (with ``anyone``: for any worker, when
        nothing else is left to hand out), or None. Picks of a task that ended since they were claimed are
        dropped."""
        dropped = []
        try:
            while True:
                held = self.reserved.get(worker) or (
                    next((v for v in self.reserved.values() if v), None) if anyone else None)
                if not held:
                    return None
                t, candidate = held.pop()
                if t.error is None and not t.ended:
                    return self._measure_work(t, candidate)
                self._unpick(t, candidate)  # its task ended since the claim (an error, no progress)
                dropped.append(candidate.hash)
        finally:
            if dropped:  # its claim would count against the other tasks' share until the job ends
                self.db.release_claims(self.job_id, dropped)

    def _picks_ahead(self, workers: set) -> list:
        """Picks ahead for each of ``workers``, claimed with this step's picks: what a worker holds, so that its
        next step or two need no transaction (one pick ahead per worker still took a transaction for every
        2.8 trials of a LocalFarm job, 0.15 ms of the driver's CPU per trial), but at most ``CLAIM_AHEAD``: a
        pick claimed ahead was chosen with the model of its claim."""
        ahead = min(CLAIM_AHEAD, self.farm.items_per_worker)
        out = []
        for worker in workers:
            for _ in range(ahead - len(self.reserved.get(worker, ()))):
                item = self._pick(worker)
                if item is None:
                    return out
                out.append((*item, worker, True))
        return out

    def _next_work(self, worker: str | None):
        """A pick to measure ``(task, candidate)`` (claimed later), or a search request; None if
        nothing."""
        pick = self._pick(worker)
        if pick is not None:
            return pick
        cap = max(2, self.farm.capacity // 2)
        for t in self._search_order():
            if t.wants_search(cap):
                work = self._search_request(t, worker)
                if work is not None:
                    return work
        return self._search_ahead(worker)

    def _training(self, worker: str | None) -> Work | None:
        """Training when the model wants it, sent only the samples after the fewest that any worker holds
        (``samples_held``; every sample until each worker trained once), so that any worker can run it (a farm
        may run an item elsewhere than where it would rather). It would rather go to that worker, so that the
        workers take turns and a payload carries about one turn of samples."""
        if self.training or not self.model.wants_training():
            return None
        held = self.samples_held
        everyone = len(held) >= max(1, self.farm.num_workers)
        if not everyone and worker in held and time.monotonic() < self._turn_until():
            return None  # a worker that has not trained yet takes it when it has room (not long: _turn_until)
        self.train_due = None
        since = min(held.values()) if everyone else 0
        self.training = True
        return self._train_work(min(held, key=held.get) if since else worker, since)

    def _turn_until(self) -> float:
        """Until when a due training waits for a worker that has not trained yet: once each has, a retraining
        sends only the samples they lack; one that kept finding the same worker with room sent every sample
        every time. At most ``TRAIN_TURN_S``, so a worker that never has room does not hold the model back."""
        if self.train_due is None:
            self.train_due = time.monotonic()
        return self.train_due + TRAIN_TURN_S

    def _train_work(self, worker: str | None, since: int) -> Work:
        return Work(TRAIN_HANDLER, self.model.training_payload(since), timeout_s=TRAIN_TIMEOUT_S, prefer=worker,
                    tag=self._trained)

    def _hold(self, worker: str, n: int) -> None:
        """``worker`` holds ``n`` samples of the model; only the workers heard from last are counted (one
        replaced was not heard from since)."""
        self.samples_held.pop(worker, None)
        self.samples_held[worker] = n
        while len(self.samples_held) > max(1, self.farm.num_workers):
            self.samples_held.pop(next(iter(self.samples_held)))

    def _search_request(self, t, worker: str | None, ahead: bool = False):
        """Task ``t``'s next search request as farm work (its CPU counted); a task searched here gets its reply at
        once and the worker the next work instead; None when the space fails in the driver (the task ends)."""
        t0 = time.thread_time()
        try:
            work = t.search_work(ahead)
        except Exception as e:  # noqa: BLE001 - a space that fails in the driver ends its task
            t.fail(str(e))
            log.error("%s", e)
            return None
        finally:
            self.search_cpu += time.thread_time() - t0
        if isinstance(work, dict):  # searched here: the reply is ready
            t.search_done(work, "")
            return self._next_work(worker)
        work.tag = functools.partial(self._searched, t, 0)
        return work

    def _search_ahead(self, worker: str | None) -> Work | None:
        """A search request beyond the tasks' credit, for room no measurement can take: a worker the job
        leaves idle searches instead (more candidates for the cost model to choose from), at most one request
        in flight per worker, and only for a task whose last reply brought something new (a used-up space
        must run out of requests to end)."""
        if self.submitted >= self.budget or self.draining:
            return None
        if sum(t.requests_in_flight for t in self.tasks) >= max(1, self.farm.num_workers):
            return None
        for t in self._search_order():
            if t.fruitful and t.open() and not t.samples_here and t.local is None:
                work = self._search_request(t, worker, ahead=True)
                if work is not None:
                    return work
        return None

    def _pick(self, worker: str | None):
        """``(task, candidate)``: the next program to measure on ``worker`` (claimed later), or None."""
        if self.submitted >= self.budget:
            return None
        t0 = time.thread_time()
        t = self._task_to_measure()
        candidate = t.pick(worker) if t is not None else None
        self.search_cpu += time.thread_time() - t0
        if candidate is None:
            return None
        self.submitted += 1
        return t, candidate

    def _search_order(self) -> list[JobTask]:
        """The current task first, then the others by how few candidates they hold."""
        rest = sorted((t for t in self.tasks if t is not self.current), key=lambda t: len(t.search.pool))
        return ([self.current] if self.current is not None else []) + rest

    def _task_to_measure(self) -> JobTask | None:
        """The scheduler's task for the next pick: the current one until its round is handed out."""
        cur = self.current
        if cur is None or self.current_picks >= self.trials_per_round or not cur.open():
            for t in self.tasks:
                t.refresh()
            i = self.scheduler.next_task([t.state for t in self.tasks])
            self.current = cur = None if i is None else self.tasks[i]
            self.current_picks = 0
        if cur is not None and cur.search.pool and cur.budget_left() and self._leaves_first_rounds(cur):
            self.current_picks += 1
            return cur
        for t in self.tasks:  # the chosen task has nothing ready: do not let the slot idle
            if t.open() and t.search.pool and self._leaves_first_rounds(t):
                return t
        return None

    def _leaves_first_rounds(self, t: JobTask) -> bool:
        """A pick for ``t`` leaves the budget what the other tasks still lack of their first round: on a farm that
        holds a small job's whole budget at once, the task whose search answered first would otherwise take
        all of it before the others had a candidate."""
        if self.first_rounds_done:
            return True
        if all(not o.open() or o.state.trials >= min(self.trials_per_round, o.max_trials) for o in self.tasks):
            self.first_rounds_done = True  # measured trials only grow: no pick needs the sum again
            return True
        owed = sum(max(0, min(self.trials_per_round, o.max_trials) - o.state.trials - o.measures_in_flight)
                   for o in self.tasks if o is not t and o.open())
        return self.submitted + 1 + owed <= self.budget

    # -- sharing the database with concurrent jobs -----------------------------------------------------------------
    def _claim_and_commit(self, picks: list, force: bool = False) -> int:
        """Store the results that arrived and claim the picked programs, in one transaction; measure those that
        are ours (picks are ``(task, candidate, worker, ahead)``; those claimed ahead wait in ``reserved`` for
        their worker). Jobs tuning the same workload at once share its budget and its dedup set this way: a
        pick is refused when another job holds or measured it (then it is known here too), or when the budget
        is spent (then its task is done). The picks of one task are claimed together, under a budget read once
        per step. Without picks, results are stored only once ``COMMIT_EVERY_S`` old (or with ``force``).
        Returns how many picks were refused."""
        records = self.records.take(0.0 if picks or force else COMMIT_EVERY_S)
        if not picks and not records:
            return 0
        by_task: dict[JobTask, list] = {}
        for t, *pick in picks:
            by_task.setdefault(t, []).append(pick)
        budgets = self._budgets(by_task)
        wanted = [(t.key, self.target, [p[0].hash for p in ps], budgets[t]) for t, ps in by_task.items()]
        granted = self.db.commit_and_claim(records, self.job_id, wanted)
        refused = 0
        for (t, ps), got in zip(by_task.items(), granted):
            got = set(got)
            for c, worker, ahead in ps:
                if c.hash not in got:
                    self._unpick(t, c)
                    refused += 1
                elif ahead:
                    self.reserved.setdefault(worker, []).append((t, c))
                else:
                    self.farm.put(self._measure_work(t, c))
            if len(got) < len(ps) and self.db.budget_used(t.key, self.target) >= budgets[t]:
                t.budget_spent = True
        return refused

    def _unpick(self, t: JobTask, candidate) -> None:
        """A pick that will not be measured: its claim was refused, or its task ended before it was put."""
        t.refused(candidate)
        self.submitted -= 1

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

    def _commit(self) -> None:
        self._claim_and_commit([], force=True)

    # -- work items ----------------------------------------------------------------------------------------------
    def _measure_work(self, t: JobTask, candidate) -> Work:
        best = t.state.best_latency
        stop = self.early_stop * best if self.early_stop and math.isfinite(best) and best > 0 else None
        settings = dict(self.measure, check=True, stop_above_s=stop)
        timeout = self.timeout_s.get(t.name, 10.0) if isinstance(self.timeout_s, dict) else self.timeout_s
        t.sent()
        payload = {"task": t.digest, "hash": candidate.hash, "trace": candidate.trace, "target": self.target,
                   "settings": settings}
        return Work(MEASURE_HANDLER, payload, timeout_s=timeout, prefer=candidate.worker or None, shared=t.shared,
                    tag=functools.partial(self._measured, t, candidate, self.model.version))

    # -- what came back --------------------------------------------------------------------------------------------
    def _done(self, d) -> None:
        """Every item carries the job's method for its answer (``Work.tag``)."""
        self.busy_secs += d.busy_secs
        d.work.tag(d)

    def _measured(self, t: JobTask, candidate, version: int, d) -> None:
        """A measurement: one ``Measured``, given to every callback in turn."""
        m = Measured.of(d, candidate, version)
        self.replays += m.replayed
        self.new_trials += 1
        for cb in self.callbacks:
            cb.apply(self, t, m)

    def _searched(self, t: JobTask, losses: int, d) -> None:
        t.requests_in_flight -= 1
        t0 = time.thread_time()
        if d.status in (DoneStatus.LOST, DoneStatus.TIMEOUT):
            retry = None if self.draining else t.search_lost(d.work, d.error, losses)
            if retry is not None:
                retry.tag = functools.partial(self._searched, t, losses + 1)
                self.farm.put(retry)
        else:
            t.search_done(d.value if d.status is DoneStatus.OK else None, d.worker, d.error)
        self.search_cpu += time.thread_time() - t0
        if t.error:
            log.error("%s", t.error)

    def _trained(self, d) -> None:
        self.training = False
        if d.status is DoneStatus.OK and "missing" in d.value:  # it ran where the earlier samples are not
            self._hold(d.worker, d.value["missing"])
            if not self.draining:
                self.training = True
                self.farm.put(self._train_work(d.worker, 0))  # every sample: any worker takes that
            return
        if d.status is DoneStatus.OK:
            self._hold(d.worker, d.value["n"])
            t0 = time.thread_time()
            self.model.install(d.value)
            self.model_cpu += time.thread_time() - t0
        else:
            if d.status is not DoneStatus.ERROR:
                self.samples_held.pop(d.worker, None)  # that worker is gone
            log.warning("cost model training failed (%s): %s", d.status.value, d.error)
