"""The operator's other drill: a worker frozen (SIGSTOP) in the middle of a 150-trial tuning job, exactly while
it runs a search item (budget: minutes) or a training of the cost model (budget: ten minutes). The job must
not wait for it: it finds the silent worker, runs the item elsewhere, and goes on with its healthy workers. So
the job measures its whole budget, measures no program twice, loses no record, and is held up by no more than
its trial budget (the per-trial timeout it is configured with) plus 10 s.

How long the job is held up is measured as the stall itself, which a loaded host does not blur the way it blurs
a comparison of two whole jobs: the longest time, from the SIGSTOP to the job's end, in which the job
committed no record; and how long the stopped process lived on (a frozen worker that is never replaced would
halve the job's speed without a single long gap).
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time

import pytest

from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning.api import tune
from tunefarm.tuning.job import TRAIN_HANDLER
from tunefarm.tuning.job_task import SEARCH_HANDLER

pytestmark = pytest.mark.timeout(600)

TRIALS = 150
TRIAL_BUDGET_S = 10.0     # the job's per-trial timeout: the delay allowed is this plus ALLOWED_EXTRA_S
ALLOWED_EXTRA_S = 10.0
STORED_BEFORE_STOP = 20   # records committed before the stop: the job is in full stride
TRIES = 4                 # stops tried (an item can end between the look and the SIGSTOP: then try the next)
# what the job logs when the item of each kind was ended because its worker stopped answering
_TIMED_OUT = {SEARCH_HANDLER: "search work lost", TRAIN_HANDLER: "cost model training failed (timeout)"}


class _Log(logging.Handler):
    """The job's warnings, with the time they were emitted."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[tuple[float, str]] = []

    def emit(self, record):
        self.lines.append((time.time(), record.getMessage()))

    def since(self, t: float, text: str) -> bool:
        return any(at >= t and text in line for at, line in list(self.lines))


def _local_running(farm) -> list[tuple]:
    """``(pid, handler)`` of each LocalFarm worker's running item (drill tooling: farm internals)."""
    out = []
    for w in list(farm._workers):
        try:
            sent = w.sent[0]
        except IndexError:
            continue
        if w.started is not None:
            out.append((w.process.pid, sent.item.work.handler))
    return out


def _ray_running(farm) -> list[tuple]:
    """``(pid, handler)`` of the item each RayFarm actor says it runs (drill tooling: farm internals)."""
    out = []
    for s in [s for s in list(farm._slots) if s.state == "ready"]:
        try:
            snap = farm._ray.get(s.actor.progress.remote(), timeout=5)
        except Exception:  # noqa: BLE001 - an actor restarting cannot answer: it runs nothing
            continue
        call = next((c for c in list(s.calls) if c.token == snap["token"]), None)
        if call is not None and not snap["paused"] and s.worker_id:
            out.append((int(s.worker_id.rsplit(":", 1)[1]), call.item.work.handler))
    return out


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (the farm killed it but did not reap it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


def _stored(path: str) -> int:
    from tunefarm.database import Database

    if not os.path.exists(path):
        return 0
    with Database(path, create=False) as db:
        return db.count_records()


class _Freezer:
    """A thread that, once the job has stored ``STORED_BEFORE_STOP`` records, SIGSTOPs a worker exactly while it
    runs an item of ``handler``, waits for the farm to kill it, and checks (by the job's log) that the item it
    froze was of that kind; if the item ended between the look and the stop, it tries the next one."""

    def __init__(self, running, handler: str, db_path: str, log: _Log, recheck: bool = False):
        self.running, self.handler, self.db_path, self.log = running, handler, db_path, log
        self.recheck = recheck  # the farm's view of what runs may lag: look again once the worker is stopped
        self.done = threading.Event()
        self.stops: list[dict] = []     # {pid, at, killed_after, hit}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(180)
        for stop in self.stops:  # never leave a stopped process behind (one seen dead may be a new one's pid)
            for sig in (signal.SIGCONT, signal.SIGKILL) if not stop["dead"] else ():
                try:
                    os.kill(stop["pid"], sig)
                except ProcessLookupError:
                    pass

    @property
    def hit(self) -> dict | None:
        return next((s for s in self.stops if s["hit"]), None)

    def _run(self) -> None:
        while not self.done.is_set() and _stored(self.db_path) < STORED_BEFORE_STOP:
            time.sleep(0.2)
        while not self.done.is_set() and len(self.stops) < TRIES and self.hit is None:
            pid = self._running_one()
            if pid is None:
                continue
            os.kill(pid, signal.SIGSTOP)
            if self.recheck and not self._still_running(pid):
                os.kill(pid, signal.SIGCONT)  # the item had ended: the stop missed it, so it is undone at once
                continue
            stop = {"pid": pid, "at": time.time(), "killed_after": None, "dead": False, "hit": False}
            self.stops.append(stop)
            while _alive(pid) and time.time() - stop["at"] < 120:
                time.sleep(0.05)
            stop["killed_after"] = time.time() - stop["at"]
            stop["dead"] = not _alive(pid)
            deadline = time.time() + 10  # the job logs the item's end once its driver takes the result
            while not stop["hit"] and time.time() < deadline and not self.done.is_set():
                stop["hit"] = self.log.since(stop["at"], _TIMED_OUT[self.handler])
                time.sleep(0.05)
            stop["hit"] = self.log.since(stop["at"], _TIMED_OUT[self.handler])

    def _still_running(self, pid: int) -> bool:
        """Whether the farm, once it read what the stopped worker wrote before the stop (a LocalFarm driver
        lets messages gather while every worker is well fed, LINGER_S at most), still sees it run the item."""
        time.sleep(0.3)
        try:
            return (pid, self.handler) in self.running()
        except Exception:  # noqa: BLE001 - the farm's bookkeeping changed under us: count it as a miss
            return False

    def _running_one(self):
        try:
            running = self.running()
        except Exception:  # noqa: BLE001 - the farm's bookkeeping changed under us: look again
            running = []
        for pid, handler in running:
            if handler == self.handler:
                return pid
        time.sleep(0.002)
        return None


def _drill(farm, running, handler: str, tmp_path, target, recheck: bool = False) -> None:
    path = str(tmp_path / "frozen.sqlite")
    log, logger = _Log(), logging.getLogger("tunefarm.tuning")
    logger.addHandler(log)
    try:
        with _Freezer(lambda: running(farm), handler, path, log, recheck) as freezer:
            t0 = time.time()
            result = tune(builtin_workload("matmul-64"), target=target, max_trials=TRIALS, trials_per_round=16,
                          database=path, farm=farm, seed=5, timeout_s=TRIAL_BUDGET_S, progress=False)
            ended = time.time()
    finally:
        logger.removeHandler(log)
    hit = freezer.hit
    assert hit is not None, f"no stop hit a running {handler} item: {freezer.stops}"
    assert result.errors == {}
    df = result.database.records()
    # the whole budget, each program once, every record kept; a stop that missed its item froze a measurement,
    # which is a timed-out trial
    assert len(df) == TRIALS == df.program_hash.nunique()
    assert (df.job_id == df.job_id.iloc[0]).all()
    missed = len(freezer.stops) - 1
    assert set(df.status) <= {"ok", "timeout"} and (df.status != "ok").sum() <= missed, df.status.value_counts()
    commits = sorted(t for t in df.created.astype("int64").to_numpy() / 1e9 if t >= hit["at"])
    marks = [hit["at"], *commits, ended]
    stall = max(b - a for a, b in zip(marks, marks[1:]))
    allowed = TRIAL_BUDGET_S + ALLOWED_EXTRA_S
    print(f"\n{type(farm).__name__}, worker frozen in {handler.rsplit(':', 1)[1]} at {hit['at'] - t0:.1f} s of a "
          f"{ended - t0:.1f} s job ({len(freezer.stops)} stop(s)): killed after {hit['killed_after']:.1f} s, "
          f"longest time without a commit after the stop {stall:.1f} s, allowed {allowed:g} s")
    assert hit["killed_after"] <= allowed, f"the frozen worker lived {hit['killed_after']:.0f} s"
    assert stall <= allowed, f"the job committed nothing for {stall:.0f} s after the stop"


@pytest.mark.parametrize("handler", [SEARCH_HANDLER, TRAIN_HANDLER], ids=["search", "training"])
def test_a_worker_frozen_in_a_local_farm_item_holds_the_job_up_no_longer_than_a_trial_budget(handler, tmp_path,
                                                                                             target):
    from tunefarm.farm import LocalFarm

    with LocalFarm(2, target=target) as farm:
        _drill(farm, _local_running, handler, tmp_path, target, recheck=True)


@pytest.mark.slow  # a private Ray starts for it (run by CI in the slow step)
@pytest.mark.parametrize("handler", [SEARCH_HANDLER, TRAIN_HANDLER], ids=["search", "training"])
def test_a_worker_frozen_in_a_ray_actor_item_holds_the_job_up_no_longer_than_a_trial_budget(handler, tmp_path,
                                                                                             target):
    ray = pytest.importorskip("ray")
    from tunefarm.farm import RayFarm

    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with RayFarm(target=target) as farm:
            _drill(farm, _ray_running, handler, tmp_path, target)
    finally:
        ray.shutdown()
