"""The tuning driver: ``tune`` (one workload), ``tune_tasks`` (several, weighted) and ``compile_tir``.

One job, round by round: the task scheduler picks a task; its search strategy proposes a batch of programs
never measured before; the farm builds, checks and times them; the batch is committed to the database in
one transaction; the cost model and the task's state learn from it; the progress table is logged. While
the farm measures one batch the driver already searches the next (``pipeline``), so workers never wait for
the search; the cost model then lags one batch behind. By default the pipeline is on for single-core targets
only: a multi-threaded kernel timed while the driver computes on another core loses its thread team's
cores and measures many times slower than it is.

Resume: running a job on a database that already holds records for the workload (same target) continues
it. Known programs are never measured again (their hashes seed the dedup), the cost model and the search
population warm-start from the stored records, and ``max_trials`` is the *total* for the job's workloads on
that target, counting what is already stored: a finished 64-trial job re-run with ``max_trials=64`` measures
nothing new; with ``max_trials=128`` it measures 64 more.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import logging
import math
import os
import random
import tempfile
import time

from ..ir.function import PrimFunc
from ..ir.module import IRModule
from .cost_model import XGBCostModel
from .errors import SearchError
from .failure_watch import FailureWatch
from .features import FeatureCache
from .postprocs import default_postprocs
from .program import Program
from .progress import Progress
from .space import resolve_space
from .strategy_evolutionary import EvolutionarySearch
from .strategy_random import RandomSearch
from .task import TuneTask
from .task_scheduler import TaskState, make_task_scheduler

log = logging.getLogger("tunefarm.search")

WARM_START_LIMIT = 2000  # stored records replayed per task on resume (dedup still uses every stored hash)
DEFAULT_MEASURE = {"number": 1, "repeat": 5, "min_repeat_ms": 1.0}
# Early stop of the timing: a candidate whose check run and first two timed repeats are all slower than this
# multiple of its task's best median so far gets no further repeats (``Candidate.stop_above_s``; its record
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
    cost_model: XGBCostModel
    errors: dict                # task name -> error text, for tasks that ended with a SearchError
    search_cpu_secs: float = 0.0  # driver CPU proposing candidates (search, replay, features, prediction)
    model_cpu_secs: float = 0.0   # driver CPU training the cost model

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
        rec = self.best_record(0)
        return math.nan if rec is None else rec.median_us

    @property
    def trials_per_second(self) -> float:
        return self.trials / self.wall_secs if self.wall_secs > 0 else math.nan


# -------------------------------------------------------------------------------------------------------
# inputs
# -------------------------------------------------------------------------------------------------------
def as_prim_func(func, what: str = "workload") -> PrimFunc:
    """A PrimFunc from a PrimFunc or an IRModule holding one (``main`` preferred)."""
    if isinstance(func, PrimFunc):
        return func
    if isinstance(func, IRModule):
        prims = func.prim_funcs()
        if "main" in prims:
            return prims["main"]
        if len(prims) == 1:
            return next(iter(prims.values()))
        raise SearchError(f"{what}: the module has {len(prims)} prim funcs ({', '.join(prims) or 'none'}); "
                          "pass one of them (or name it 'main')")
    raise TypeError(f"{what}: expected a PrimFunc or an IRModule, got {type(func).__name__}")


def as_workload(func, what: str = "workload") -> PrimFunc:
    """The PrimFunc to schedule and build, named ``main`` whatever it was called: TVM tunes a PrimFunc as
    ``IRModule({"main": f})``, so a space's ``sch.get_block("C", "main")`` and a build's ``mod["main"]`` find it."""
    return as_prim_func(func, what).with_name("main")


def resolve_target(target, farm=None):
    from ..target import Target

    if target is None:
        return farm.target if farm is not None else Target.host()
    return target if isinstance(target, Target) else Target(target)


def open_database(database):
    from ..database import Database

    if database is None:
        path = os.path.join(tempfile.mkdtemp(prefix="tunefarm-"), "tune.sqlite")
        log.info("no database given: recording to %s", path)
        return Database(path)
    if isinstance(database, Database):
        return database
    if isinstance(database, (str, os.PathLike)):
        return Database(database)
    raise TypeError(f"database must be a path or a tunefarm.Database, got {type(database).__name__}")


def make_strategy(kind, task, cost_model, features, seed):
    if kind == "evolutionary":
        return EvolutionarySearch(task, cost_model, features, seed=seed)
    if kind in ("random", "replay", "random_replay"):
        return RandomSearch(task, cost_model, features)
    if callable(kind):
        return kind(task, cost_model, features, seed)
    raise ValueError(f"unknown search strategy {kind!r}; use 'evolutionary' or 'random'")


# -------------------------------------------------------------------------------------------------------
# the job
# -------------------------------------------------------------------------------------------------------
class _Job:
    def __init__(self, tasks, target, db, farm, strategy, scheduler, cost_model, max_trials, trials_per_round,
                 timeout_s, measure, seed, pipeline, progress, max_trials_per_task, job_name,
                 early_stop=EARLY_STOP_FACTOR):
        self.tasks: list[TuneTask] = tasks
        self.target = target
        self.target_str = str(target)
        self.db = db
        self.farm = farm
        self.scheduler = scheduler
        self.cost_model = cost_model
        self.max_trials = max_trials
        self.trials_per_round = trials_per_round
        self.timeout_s = timeout_s
        self.measure = measure
        self.early_stop = early_stop
        self.pipeline = pipeline
        self.max_trials_per_task = max_trials_per_task
        self.features = FeatureCache(n_cores=getattr(target, "num_cores", 1) or 1)
        self.strategies = [make_strategy(strategy, t, cost_model, self.features, seed + 7919 * k)
                           for k, t in enumerate(tasks)]
        self.errors: dict = {}
        self.new_trials = 0
        self.search_cpu = 0.0  # driver CPU seconds spent proposing candidates
        self.model_cpu = 0.0   # ... and featurizing + training the cost model
        self.job_name = job_name
        self.progress_live = progress
        self.workload_texts: dict[str, str] = {}
        self.watch = FailureWatch()  # stops a task whose first rounds all fail with one error

    # -- setup ------------------------------------------------------------------------------------------
    def register(self) -> None:
        from ..ir.serialize import to_json

        for t in self.tasks:
            ir = to_json(t.func)
            text = json.dumps(ir, separators=(",", ":"))
            self.workload_texts[t.key] = text
            self.db.commit_workload(t.key, t.name, text, t.state.flop)

    def warm_start(self) -> int:
        """Load stored records of every task: dedup hashes, cost-model samples, search seeds. Returns the count."""
        total = 0
        feats, groups, lats = [], [], []
        for t, strategy in zip(self.tasks, self.strategies):
            t.known_hashes |= self.db.measured_hashes(t.key, self.target_str)
            n = self.db.count_records(t.key, self.target_str)
            t.state.trials = n
            total += n
            if not n:
                continue
            df = self.db.records(t.key, target=self.target_str)
            if len(df) > WARM_START_LIMIT:  # replaying every stored trace would take minutes: keep the best half
                best = df.sort_values("min_us").head(WARM_START_LIMIT // 2)
                rest = df.drop(best.index).sample(WARM_START_LIMIT // 2, random_state=0)
                import pandas as pd

                df = pd.concat([best, rest])
            for row in df.itertuples(index=False):
                prog = t.from_stored(json.loads(row.trace_json))
                if prog is None:
                    continue
                ok = str(row.status) == "ok" and row.min_us == row.min_us
                lat = row.min_us / 1e6 if ok else None
                t.known_hashes.add(prog.hash)
                strategy.notify([prog], [lat])
                if lat is not None:
                    t.state.best_latency = min(t.state.best_latency, row.median_us / 1e6)
                prog.features = self.features.get(prog.hash, prog.func)
                feats.append(prog.features)
                groups.append(t.key)
                lats.append(lat)
            log.info("task %s: resuming from %d stored records (best %.3f us)", t.name, n,
                     t.state.best_latency * 1e6 if math.isfinite(t.state.best_latency) else math.nan)
        if feats:
            self.cost_model.update(feats, groups, lats, retrain=True)
        return total

    # -- rounds -----------------------------------------------------------------------------------------
    def _task_done(self, i: int) -> bool:
        t = self.tasks[i]
        if self.max_trials_per_task is not None and t.state.trials + self._inflight_of(i) >= self.max_trials_per_task:
            return True
        return t.state.done

    def _inflight_of(self, i: int) -> int:
        return sum(len(b[1]) for b in self._inflight if b[0] == i)

    def _next_batch(self, remaining: int):
        while remaining > 0:
            for i, t in enumerate(self.tasks):
                if self._task_done(i):
                    t.state.done = True
            i = self.scheduler.next_task([t.state for t in self.tasks])
            if i is None:
                return None
            t = self.tasks[i]
            n = min(self.trials_per_round, remaining)
            if self.max_trials_per_task is not None:
                n = min(n, self.max_trials_per_task - t.state.trials - self._inflight_of(i))
            strat = self.strategies[i]
            t0 = time.thread_time()
            try:
                progs = strat.propose(n)
            except SearchError as e:
                log.error("%s", e)
                self.errors[t.name] = str(e)
                t.state.done = True
                continue
            if not progs:
                log.info("task %s: the space has no unmeasured program left (%d valid samples, %d invalid); "
                         "task finished", t.name, t.n_valid, t.n_invalid)
                t.state.done = True
                continue
            for p in progs:
                t.known_hashes.add(p.hash)
            t.state.inflight += 1
            self.search_cpu += time.thread_time() - t0
            return i, progs
        return None

    def _candidates(self, i: int, progs: list[Program]):
        from ..farm import Candidate

        t = self.tasks[i]
        timeout = self.timeout_s.get(t.name, 10.0) if isinstance(self.timeout_s, dict) else self.timeout_s
        best = t.state.best_latency
        stop = self.early_stop * best if self.early_stop and math.isfinite(best) and best > 0 else None
        return [Candidate(t.key, self.workload_texts[t.key], p.trace_json(), self.target_str,
                          timeout_s=timeout, task=t.name, stop_above_s=stop, **self.measure) for p in progs]

    def _process(self, i: int, progs: list[Program], results) -> None:
        from ..database import Record

        t = self.tasks[i]
        base = t.state.trials
        records, lats, medians = [], [], []
        for k, (p, r) in enumerate(zip(progs, results)):
            # learning uses the fastest repeat: on a busy machine the others are inflated by preemption
            lats.append(min(r.run_secs) if r.ok else None)
            medians.append(r.median_secs if r.ok else math.inf)
            records.append(Record(t.key, p.trace_json(), p.hash, self.target_str, r, self.job_id, base + k))
        self.db.commit_records(records)
        self.strategies[i].notify(progs, lats)
        if (stop := self.watch.observe(t.name, results)) is not None:
            self.errors[t.name], t.state.done = stop, True
        t.state.inflight -= 1
        t.state.record_round(len(progs), min(medians, default=math.inf))
        self.new_trials += len(progs)
        statuses: dict = {}
        for r in results:
            statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
        if len(statuses) > 1 or "ok" not in statuses:
            log.info("task %s: batch statuses %s", t.name, statuses)
            for r in results:
                if not r.ok and r.error:
                    log.debug("task %s: %s: %s", t.name, r.status.value, r.error.splitlines()[0][:300])
        t0 = time.thread_time()
        feats = [self.features.get(p.hash, p.func) for p in progs]
        if self.cost_model.update(feats, [t.key] * len(progs), lats, retrain=True):
            for s in self.strategies:
                s.new_round()
        self.model_cpu += time.thread_time() - t0
        self.progress.round(i, len(progs))

    def _submit(self, pool, batch):
        i, progs = batch
        self._inflight.append((i, progs))
        return i, progs, pool.submit(self.farm.measure, self._candidates(i, progs))

    def run(self, remaining: int) -> None:
        """Measure up to ``remaining`` new programs. With ``pipeline`` the next batch is searched while the farm
        measures the current one (a helper thread only drives the farm) and is handed to the farm before the
        driver learns from the finished batch, so workers wait neither for the search nor for the model."""
        self._inflight: list = []
        self.progress = Progress([t.state for t in self.tasks], self.max_trials, live=self.progress_live,
                                 failures=self.watch)
        submitted = 0
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tunefarm-measure")
        try:
            pending = None  # (task index, programs, future)
            while True:
                batch = None
                if submitted < remaining and (self.pipeline or pending is None):
                    batch = self._next_batch(remaining - submitted)
                if pending is not None:
                    i, progs, fut = pending
                    results = fut.result()
                    pending = None
                    self._inflight = [b for b in self._inflight if b[1] is not progs]
                    if batch is not None:
                        pending = self._submit(pool, batch)
                        submitted += len(batch[1])
                        batch = None
                    self._process(i, progs, results)
                    if pending is None and submitted < remaining:
                        batch = self._next_batch(remaining - submitted)
                if batch is not None:
                    pending = self._submit(pool, batch)
                    submitted += len(batch[1])
                elif pending is None:
                    break
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            for t in self.tasks:  # a task that never succeeded (here or in stored records) ends with its error
                if not math.isfinite(t.state.best_latency) and (why := self.watch.summary(t.name)):
                    self.errors.setdefault(t.name, why)
            self.progress.finish()


def tune_tasks(tasks, target=None, max_trials: int = 64, trials_per_round: int = 64, space=None, database=None,
               farm=None, seed: int | None = None, *, strategy: str = "evolutionary",
               task_scheduler: str = "gradient", postprocs=None, cost_model: XGBCostModel | None = None,
               timeout_s: float | dict = 10.0, measure: dict | None = None, pipeline: bool | None = None,
               progress: bool | None = None, max_trials_per_task: int | None = None, job_name: str | None = None,
               raise_on_error: bool = False, early_stop: float | None = EARLY_STOP_FACTOR) -> TuneResult:
    """Tune several workloads in one job, sharing the trial budget by the task scheduler.

    ``tasks``: ``[(name, func, weight), ...]`` (``func`` a PrimFunc or an IRModule with one). ``space``: one
    space for every task (None = AutoSpace, a schedule function, ``"file.py:fn"``, a registered name), or a
    dict ``name -> space``. ``max_trials`` is the total budget across tasks, counting records already in the
    database (see the module doc on resume). Tasks whose space yields no valid program end with their error
    in ``result.errors`` (or raise ``SearchError`` with ``raise_on_error``). ``timeout_s`` is the budget of one
    trial (replay + build + check + timing), or a dict ``task name -> seconds`` (10 s for tasks not named).
    ``early_stop``: a candidate whose check run and first two timed repeats are all slower than this multiple of
    its task's best latency so far is not timed further (see ``EARLY_STOP_FACTOR``); None or 0 times every
    candidate ``repeat`` times.
    """
    if not isinstance(max_trials, int) or isinstance(max_trials, bool) or max_trials < 0:
        raise ValueError(f"max_trials must be an integer >= 0, got {max_trials!r}")
    if not isinstance(trials_per_round, int) or isinstance(trials_per_round, bool) or trials_per_round < 1:
        raise ValueError(f"trials_per_round must be an integer >= 1, got {trials_per_round!r}")
    if not tasks:
        raise ValueError("tune_tasks needs at least one task")
    if early_stop is not None and (not isinstance(early_stop, (int, float)) or isinstance(early_stop, bool)
                                   or not (early_stop == 0 or 1.0 <= early_stop < math.inf)):
        raise ValueError(f"early_stop must be None, 0 or a factor >= 1, got {early_stop!r}")
    t0 = time.perf_counter()
    seed = random.SystemRandom().randrange(1 << 31) if seed is None else int(seed)
    own_farm = farm is None
    if own_farm:
        from ..farm import RayFarm

        farm = RayFarm(target=target) if target is not None else RayFarm()
    try:
        target = resolve_target(target, farm)
        db = open_database(database)
        post = default_postprocs() if postprocs is None else list(postprocs)
        tune_tasks_list = []
        names = set()
        for k, item in enumerate(tasks):
            if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
                raise TypeError(f"task {k} must be (name, func) or (name, func, weight), got {item!r}")
            name, func = item[0], item[1]
            weight = float(item[2]) if len(item) == 3 else 1.0
            if name in names:
                raise ValueError(f"two tasks are named {name!r}")
            names.add(name)
            sp = space.get(name) if isinstance(space, dict) else space
            tune_tasks_list.append(TuneTask(name, as_workload(func, f"task {name!r}"), resolve_space(sp, target),
                                            post, weight, seed=seed + k))
        model = cost_model or XGBCostModel(seed=seed)
        if pipeline is None:
            pipeline = (getattr(target, "num_cores", 1) or 1) <= 1
        job_config = {"tasks": [[t.name, t.key, t.state.weight] for t in tune_tasks_list], "target": str(target),
                      "max_trials": max_trials, "trials_per_round": trials_per_round, "strategy": str(strategy),
                      "task_scheduler": str(task_scheduler), "seed": seed,
                      "spaces": [t.space.name for t in tune_tasks_list], "early_stop": early_stop}
        job = _Job(tune_tasks_list, target, db, farm, strategy, make_task_scheduler(task_scheduler, seed), model,
                   max_trials, trials_per_round, timeout_s, dict(measure or DEFAULT_MEASURE), seed, pipeline,
                   progress, max_trials_per_task, job_name, early_stop)
        job.register()
        existing = job.warm_start()
        job.job_id = db.start_job(job_name or "+".join(t.name for t in tune_tasks_list)[:200], job_config)
        remaining = max(0, max_trials - existing)
        if existing:
            log.info("resuming: %d trials already in %s, %d to go (max_trials=%d counts stored trials)",
                     existing, db.path, remaining, max_trials)
        status = "finished"
        try:
            job.run(remaining)
        except BaseException:
            status = "failed"
            raise
        finally:
            if job.errors and status == "finished":
                status = "finished_with_errors"
            db.finish_job(job.job_id, status)
    finally:
        if own_farm:
            farm.close()
    result = TuneResult(db, job.job_id, str(target), [t.state for t in tune_tasks_list],
                        [t.key for t in tune_tasks_list], job.new_trials, time.perf_counter() - t0, model,
                        dict(job.errors), job.search_cpu, job.model_cpu)
    if job.errors and raise_on_error:
        raise SearchError("; ".join(job.errors.values()))
    return result


def tune(func, target=None, max_trials: int = 64, trials_per_round: int = 64, space=None, database=None,
         farm=None, seed: int | None = None, *, task_name: str | None = None, **kwargs) -> TuneResult:
    """Tune one workload (the course's ``ms.tune_tir``). Returns a ``TuneResult`` (``.database``,
    ``.best_trace``, ``.best_latency_us``); raises ``SearchError`` when the space yields no valid program."""
    pf = as_prim_func(func)
    name = task_name or (pf.attrs.get("global_symbol") or pf.name or "main")
    kwargs.setdefault("raise_on_error", True)
    return tune_tasks([(name, pf, 1.0)], target, max_trials, trials_per_round, space, database, farm, seed,
                      **kwargs)


# -------------------------------------------------------------------------------------------------------
# using the results
# -------------------------------------------------------------------------------------------------------
def _best_record(database, func, target):
    from ..database import UnknownWorkloadError
    from ..ir.structural import workload_key

    if database is None:
        raise TypeError("a database (a path or a tunefarm.Database) is needed")
    db = open_database(database)
    pf = as_workload(func)
    target_str = None if target is None else str(resolve_target(target))
    try:
        return pf, db.best(workload_key(pf), target=target_str)
    except UnknownWorkloadError:
        return pf, None


def best_schedule(database, func, target=None):
    """The best stored trace of ``func`` replayed into a Schedule, or None when nothing is stored.

    ``target=None`` uses the target the workload was tuned for (an error if it was tuned for several).
    """
    from ..schedule import Trace

    pf, rec = _best_record(database, func, target)
    return None if rec is None else Trace.from_json(rec.trace_json).replay(pf)


def compile_tir(database, func, target=None):
    """Build ``func`` with its best stored schedule (the course's ``ms.tir_integration.compile_tir``).

    Returns a runtime Module: ``mod["main"](*arrays)``. ``target=None`` builds for the target the workload was
    tuned for. Raises ``SearchError`` when the database has no successful record of this workload (on this
    target).
    """
    from ..runtime import build
    from ..schedule import Trace
    from ..target import Target

    pf, rec = _best_record(database, func, target)
    if rec is None:
        where = "" if target is None else f" for target {str(resolve_target(target))!r}"
        raise SearchError(f"no successful tuning record of this workload{where} in "
                          f"{getattr(database, 'path', database)!r}; tune it first")
    sch = Trace.from_json(rec.trace_json).replay(pf)
    return build(sch.mod["main"], resolve_target(target) if target is not None else Target(rec.target))
