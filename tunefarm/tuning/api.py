"""The tuning API: ``tune`` (one workload, the course's ``ms.tune_tir``) and ``tune_tasks`` (several, weighted).

A job wires the three layers below it: the search (``tunefarm.search``: spaces, the evolutionary search, the
cost model), the farm that runs search, measurement and training work on its workers (``tunefarm.farm``), and
the database that keeps every measurement (``tunefarm.database``). Each is given as an instance or made from
its name by its package's ``create`` (``wiring.py``: ``"ray"`` farm, ``"sqlite"`` database, ``"xgb"`` cost
model, ``"evolutionary"`` search, ``"gradient"`` task scheduler; ``"auto"`` space). The loop itself is
``job.py``; what it does with each result is ``callbacks.py``; using the results is ``tunefarm.compile``.

Resume: running a job on a database that already holds records for the workload (same target) continues
it. Known programs are never measured again (their hashes seed the dedup), the cost model and the search
population warm-start from the stored records (``warm_start.py``), and ``max_trials`` is the *total* for the
job's workloads on that target, counting what is already stored: a finished 64-trial job re-run with
``max_trials=64`` measures nothing new; with ``max_trials=128`` it measures 64 more.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
import random
import tempfile
import time

from search_spaces.registry import resolve_space

from ..database import TraceDatabase, open_database
from ..search.cost_model import CostModel
from ..search.errors import SearchError
from ..search.failure_watch import FailureWatch
from ..search.postprocs import default_postprocs
from ..search.progress import Progress
from ..search.space import target_cores
from ..search.task import TuneTask
from ..search.task_scheduler import TaskState
from ..search.workloads import as_prim_func, as_workload
from ..target import Target, as_target, check_known_cpu
from . import wiring
from .callbacks import MeasureCallback, UserCallback
from .confirm import DEFAULT_TOP, confirm_tasks
from .job import TuningJob
from .job_task import JobTask
from .limits import check_buffers, check_seed, check_timeout
from .patience import Patience, check_patience
from .time_budget import STATUS as TIME_BUDGET_STATUS
from .time_budget import TimeBudget
from .transfer import DEFAULT as TRANSFER_DEFAULT
from .transfer import transfer as transfer_records
from .warm_start import warm_start

log = logging.getLogger("tunefarm.tuning")

DEFAULT_MEASURE = {"number": 1, "repeat": 5, "min_repeat_ms": 1.0}
# Early stop of the timing: a candidate whose check run and first two timed repeats are all slower than this
# multiple of its task's best median so far gets no further repeats (``stop_above_s`` of the measurement; its record
# then holds those two real timings instead of ``repeat``). Such a program cannot become the best, and on matmul
# 512^3 and conv2d its repeats were about half of the measurement time of a job (most random samples there are
# 3-50x slower than the best).
EARLY_STOP_FACTOR = 2.0


@dataclasses.dataclass
class TuneResult:
    """What a tuning job produced. Everything measured is in ``database``; this is a convenient summary."""

    database: object
    job_id: int
    target: str
    tasks: list[TaskState]
    workload_keys: list[str]
    trials: int                 # measured by this job
    wall_secs: float
    cost_model: CostModel
    errors: dict                # task name -> error text, for tasks that ended with a SearchError
    search_cpu_secs: float = 0.0  # driver CPU choosing and scoring candidates
    model_cpu_secs: float = 0.0   # driver CPU installing cost models (training runs on the workers)
    driver_cpu_secs: float = 0.0  # all CPU of the driver process during the job (search, model, database, farm)
    busy_secs: float = 0.0        # seconds the workers spent on this job's work
    replayed: int = 0             # measurements whose worker had not produced the program (it replayed the trace)
    status: str = "finished"      # as stored for the job: finished, finished_with_errors, time budget
    confirmed: list = dataclasses.field(default_factory=list)  # per task, its confirmation (tuning/confirm.py)

    def best_record(self, task: int | str = 0):
        """The database's best record (any job) of a task, by index or name, or None."""
        i = task if isinstance(task, int) else [t.name for t in self.tasks].index(task)
        return self.database.best(self.workload_keys[i], target=self.target)

    @property
    def best_trace(self):
        rec = self.best_record(0)
        return None if rec is None else rec.trace

    @property
    def best_latency_us(self) -> float:
        """The best's confirmed median when it has one (``confirm.py``), else the farm's, in microseconds."""
        rec = self.best_record(0)
        return math.nan if rec is None else rec.trusted_secs * 1e6

    @property
    def trials_per_second(self) -> float:
        return self.trials / self.wall_secs if self.wall_secs > 0 else math.nan


# -------------------------------------------------------------------------------------------------------
# inputs
# -------------------------------------------------------------------------------------------------------
def resolve_target(target, farm=None):
    if target is None:
        return farm.target if farm is not None else Target.host()
    return check_known_cpu(as_target(target))


def job_database(database) -> TraceDatabase:
    """The database a job records to: the one given (a path or a TraceDatabase), else a new SQLite file in a
    temporary directory (logged)."""
    if database is None:
        database = os.path.join(tempfile.mkdtemp(prefix="tunefarm-"), "tune.sqlite")
        log.info("no database given: recording to %s", database)
    return open_database(database)


def tune_tasks(tasks, target=None, max_trials: int = 64, trials_per_round: int = 64, space=None, database=None,
               farm=None, seed: int | None = None, *, strategy="evolutionary", task_scheduler="gradient",
               cost_model="xgb", postprocs=None, timeout_s: float | dict = 10.0, progress: bool | None = None,
               max_trials_per_task: int | None = None, job_name: str | None = None, raise_on_error: bool = False,
               early_stop: float | None = EARLY_STOP_FACTOR, callbacks=(), time_budget_s: float | None = None,
               patience: int | dict | None = None, confirm: int = DEFAULT_TOP,
               transfer: bool = TRANSFER_DEFAULT) -> TuneResult:
    """Tune several workloads in one job, sharing the trial budget by the task scheduler.

    ``tasks``: ``[(name, func, weight), ...]`` (``func`` a PrimFunc or an IRModule with one). ``space``: one
    space for every task (None = AutoSpace, a schedule function, ``"file.py:fn"``, a registered name), or a
    dict ``name -> space``. ``max_trials`` is the total budget across tasks, counting records already in the
    database (see the module doc on resume). Each part is given by name or as an instance:
    ``farm`` a ``Farm`` or ``"local"`` / ``"ray"`` (default: ``"ray"``, a private local Ray; a farm made here
    is closed at the end); ``database`` a ``TraceDatabase``, a path or a ``postgresql://`` URL (default: a new
    SQLite file); ``cost_model`` a ``CostModel`` or ``"xgb"``; ``strategy`` ``"evolutionary"``, ``"random"``, a
    ``SearchStrategy`` (a one-task job) or a factory ``(name, key, cost_model, seed) -> SearchStrategy``;
    ``task_scheduler`` a ``TaskScheduler``, ``"gradient"`` or ``"round-robin"``. ``callbacks``: measure
    callbacks called once per measured result after the job's own (see ``tuning/callbacks.py``). Tasks whose
    space yields no valid program end with their error in ``result.errors`` (or raise ``SearchError`` with
    ``raise_on_error``). ``timeout_s`` is the budget of one trial (build + check + timing), or a dict ``task
    name -> seconds`` (10 s for tasks not named). ``early_stop``: a candidate whose check run and first two
    timed repeats are all slower than this multiple of its task's best latency so far is not timed further
    (see ``EARLY_STOP_FACTOR``); None or 0 times every candidate ``repeat`` times. ``time_budget_s``: stop
    cleanly after that many seconds (status ``time budget``). ``patience``: a task not improved in that many
    measured trials ends, its share going to the others (or a dict ``task name -> trials``). ``confirm``: at the
    end, each task's ``confirm`` best are re-timed together on this quiet host (0: not; ``confirm.py``).
    ``transfer``: the cost model starts from other workloads' records (``transfer.py``).
    """
    _check_arguments(tasks, max_trials, trials_per_round, early_stop, timeout_s, seed)
    _check_bounds(patience, confirm)
    clock = TimeBudget(time_budget_s)  # the budget counts from the call: farm start-up and warm start included
    t0, cpu0 = time.perf_counter(), time.process_time()
    seed = random.SystemRandom().randrange(1 << 31) if seed is None else int(seed)
    user_callbacks = [UserCallback(cb) for cb in callbacks]
    model = wiring.cost_model(cost_model, strategy, seed, len(tasks))
    scheduler = wiring.task_scheduler(task_scheduler, seed)
    own_farm = farm is None or isinstance(farm, str)
    farm = wiring.farm(farm, target)
    try:
        target = resolve_target(target, farm)
        db = job_database(database)
        jtasks = _job_tasks(tasks, space, target, postprocs, model, strategy, seed)
        extra = {"time_budget_s": time_budget_s, "patience": patience, "confirm": confirm, "transfer": transfer}
        job = _start(jtasks, target, db, farm, model, scheduler, seed,
                     max_trials, trials_per_round, timeout_s, early_stop, progress, job_name, max_trials_per_task,
                     MeasureCallback.Default() + user_callbacks, extra, postprocs)
        job.time_budget, job.patience = clock, Patience(patience)
        status, confirmed = "failed", []
        try:
            job.run(job.budget)
            status = TIME_BUDGET_STATUS if clock.spent else "finished_with_errors" if any(
                t.error for t in jtasks) else "finished"
            confirmed = confirm_tasks(db, [t.key for t in jtasks if math.isfinite(t.state.best_latency)],
                                      str(target), confirm, clock.deadline) if confirm else []
        finally:
            db.finish_job(job.job_id, status)
            job.progress.finish()
    finally:
        if own_farm:
            farm.close()
    errors = {t.name: t.error for t in jtasks if t.error}
    result = TuneResult(db, job.job_id, str(target), [t.state for t in jtasks], [t.key for t in jtasks],
                        job.new_trials, time.perf_counter() - t0, model, errors, job.search_cpu, job.model_cpu,
                        time.process_time() - cpu0, job.busy_secs, job.replays, status, confirmed)
    if errors and raise_on_error:
        raise SearchError("; ".join(errors.values()))
    return result


def _start(jtasks, target, db, farm, model, scheduler, seed, max_trials, trials_per_round, timeout_s, early_stop,
           progress, job_name, max_trials_per_task, callbacks, extra: dict, postprocs) -> TuningJob:
    """Register the workloads, warm-start from the database (and from other workloads' records with
    ``extra["transfer"]``), record the job: a job ready to run (its ``budget``: the trials still to measure)."""
    for t in jtasks:
        t.max_trials = max_trials_per_task if max_trials_per_task is not None else math.inf
        db.commit_workload(t.key, t.name, t.workload_text, t.state.flop)
    existing = warm_start(jtasks, db, str(target), farm, model)  # the loop trains the model on a worker
    if extra["transfer"]:
        transfer_records(jtasks, db, str(target), farm, model, lambda f: resolve_space(None, target),
                         default_postprocs() if postprocs is None else list(postprocs), target_cores(target))
    config = {"tasks": [[t.name, t.key, t.state.weight] for t in jtasks], "target": str(target),
              "max_trials": max_trials, "trials_per_round": trials_per_round,
              "strategy": wiring.name_of(jtasks[0].search, "strategy"),
              "task_scheduler": wiring.name_of(scheduler, "task_scheduler"), "seed": seed,
              "spaces": [t.tune_task.space.name for t in jtasks], "early_stop": early_stop, **extra}
    job_id = db.start_job(job_name or "+".join(t.name for t in jtasks)[:200], config)
    remaining = max(0, max_trials - existing)
    if existing:
        log.info("resuming: %d trials already in %s, %d to go (max_trials=%d counts stored trials)",
                 existing, db.path, remaining, max_trials)
    watch = FailureWatch()  # stops a task whose first rounds all fail with one error
    progress_view = Progress([t.state for t in jtasks], max_trials, live=progress, failures=watch)
    job = TuningJob(jtasks, target, db, farm, model, scheduler, job_id=job_id, max_trials=max_trials,
                    trials_per_round=trials_per_round, timeout_s=timeout_s, measure=dict(DEFAULT_MEASURE),
                    early_stop=early_stop, progress=progress_view, failures=watch, callbacks=callbacks)
    job.budget = remaining
    return job


def _check_bounds(patience, confirm) -> None:
    check_patience(patience)
    if isinstance(confirm, bool) or not isinstance(confirm, int) or confirm < 0:
        raise ValueError(f"confirm must be an integer >= 0 (programs to re-time per task), got {confirm!r}")


def _check_arguments(tasks, max_trials, trials_per_round, early_stop, timeout_s, seed) -> None:
    check_timeout(timeout_s)
    check_seed(seed)
    if not isinstance(max_trials, int) or isinstance(max_trials, bool) or max_trials < 0:
        raise ValueError(f"max_trials must be an integer >= 0, got {max_trials!r}")
    if not isinstance(trials_per_round, int) or isinstance(trials_per_round, bool) or trials_per_round < 1:
        raise ValueError(f"trials_per_round must be an integer >= 1, got {trials_per_round!r}")
    if not tasks:
        raise ValueError("tune_tasks needs at least one task")
    if early_stop is not None and (not isinstance(early_stop, (int, float)) or isinstance(early_stop, bool)
                                   or not (early_stop == 0 or 1.0 <= early_stop < math.inf)):
        raise ValueError(f"early_stop must be None, 0 or a factor >= 1, got {early_stop!r}")


def _job_tasks(tasks, space, target, postprocs, model, strategy, seed) -> list[JobTask]:
    post = default_postprocs() if postprocs is None else list(postprocs)
    out, names = [], set()
    for k, item in enumerate(tasks):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise TypeError(f"task {k} must be (name, func) or (name, func, weight), got {item!r}")
        name, func = item[0], item[1]
        weight = float(item[2]) if len(item) == 3 else 1.0
        if name in names:
            raise ValueError(f"two tasks are named {name!r}")
        names.add(name)
        sp = space.get(name) if isinstance(space, dict) else space
        workload = as_workload(func, f"task {name!r}")
        check_buffers(name, workload)
        tt = TuneTask(name, workload, resolve_space(sp, target), post, weight, seed=seed + k)
        search = wiring.strategy(strategy, tt, model, seed + 7919 * k)
        out.append(JobTask(tt, target_cores(target), search))
    return out


def tune(func, target=None, max_trials: int = 64, trials_per_round: int = 64, space=None, database=None,
         farm=None, seed: int | None = None, *, task_name: str | None = None, **kwargs) -> TuneResult:
    """Tune one workload (the course's ``ms.tune_tir``). Returns a ``TuneResult`` (``.database``,
    ``.best_trace``, ``.best_latency_us``); raises ``SearchError`` when the space yields no valid program."""
    pf = as_prim_func(func)
    name = task_name or (pf.attrs.get("global_symbol") or pf.name or "main")
    kwargs.setdefault("raise_on_error", True)
    return tune_tasks([(name, pf, 1.0)], target, max_trials, trials_per_round, space, database, farm, seed,
                      **kwargs)
