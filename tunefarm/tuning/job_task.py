"""One task of a tuning job as the driver sees it: its search state, its spec for the workers, its counters.

A task's search work goes to the workers as requests about the task named by its *spec digest*; the spec (a
small JSON text) and the workload's JSON travel once per worker as the farm's shared texts. A space that no
worker can import (a function defined in ``__main__``, a closure) is sampled here: the driver runs the space
for fresh designs and the workers replay, postprocess, hash, featurize, mutate and measure them. A task whose
postprocessors cannot be described as data runs its whole search here (``local`` reply cache).
"""
from __future__ import annotations

import json
import logging
import math
import random

from ..farm import Work
from ..ir.serialize import to_json
from ..schedule import ScheduleError
from ..search.errors import SearchError
from ..search.strategy import SearchStrategy
from ..search.generate import TaskCache, generate
from ..search.task import TuneTask
from ..search.task_spec import postprocs_spec, space_spec, spec_digest

log = logging.getLogger("tunefarm.tuning")

SEARCH_HANDLER = "tunefarm.tuning.handlers:search"
REQUEST_MIN, REQUEST_MAX = 8, 32   # candidates per search request (bounds the reply's latency and size)
SEARCH_TIMEOUT_S = 300.0           # one search request (a few dozen candidates) never takes minutes
MAX_SEARCH_FAILURES = 3            # failed search requests in a row before the task ends with the error
MAX_SEARCH_LOSSES = 10             # times one request is lost (worker died, timed out, node left) before it fails


class JobTask:
    """A workload being tuned, the one owner of its state: ``tune_task`` (replay + postprocess on this side),
    ``search`` (its ``SearchStrategy``), ``state`` (what the scheduler and the progress table read) and the
    job's counters. The job changes them through the methods below."""

    def __init__(self, tune_task: TuneTask, n_cores: int, search: SearchStrategy):
        self.tune_task = tune_task
        self.name, self.key, self.state = tune_task.name, tune_task.key, tune_task.state
        self.search = search
        self.workload_text = json.dumps(to_json(tune_task.func), separators=(",", ":"))
        posts = postprocs_spec(tune_task.postprocs)
        spec = {"key": self.key, "name": self.name, "space": space_spec(tune_task.space), "postprocs": posts,
                "n_cores": n_cores}
        self.digest = spec_digest(spec)
        self.shared = {f"task:{self.digest}": json.dumps(spec, separators=(",", ":")),
                       f"workload:{self.key}": self.workload_text}
        self.samples_here = spec["space"] is None
        self.local = TaskCache(tune_task, n_cores) if posts is None else None
        self.requests_in_flight = 0
        self.fruitful = True        # the last search reply brought new candidates (searching ahead may pay)
        self.measures_in_flight = 0
        self.search_failures = 0
        self.submitted = 0          # measurements put on the farm by this job
        self.round_results = 0      # results since the task's last round closed
        self.max_trials: float = math.inf
        self.budget_spent = False   # the database says the budget is used up (concurrent jobs share it)
        self.ended: str | None = None  # why the task ended before its budget (patience), if it did

    # -- state -------------------------------------------------------------------------------------------
    @property
    def error(self) -> str | None:
        return self.search.error

    def budget_left(self) -> bool:
        return not self.budget_spent and self.state.trials + self.measures_in_flight < self.max_trials

    def open(self) -> bool:
        """Still searching and measuring (no error, space not used up, budget left)."""
        if self.error is not None or self.ended or not self.budget_left():
            return False
        return not self.search.exhausted(self.requests_in_flight)

    def refresh(self) -> None:
        """What the task scheduler reads: ``done`` once the task takes no more picks, ``inflight`` while it has
        measurements out (one rule for each, here)."""
        self.state.done = not self.open()
        self.state.inflight = 1 if self.measures_in_flight else 0

    def fail(self, error: str) -> None:
        """The task ends with ``error`` (the first one given is kept)."""
        self.search.fail(error)

    # -- measuring -------------------------------------------------------------------------------------
    def pick(self, worker: str | None):
        """The next candidate to measure on ``worker`` (held as in flight until its claim is answered)."""
        candidate = self.search.pick(worker)
        if candidate is not None:
            self.measures_in_flight += 1
        return candidate

    def refused(self, candidate) -> None:
        """A pick is not measured: the database refused its claim (another job holds or measured it, or the budget
        is spent), or the task ended before it was put."""
        self.measures_in_flight -= 1
        self.search.mark_known([candidate.hash])

    def sent(self) -> None:
        """A claimed pick went to the farm."""
        self.submitted += 1
        self.state.inflight = 1

    def measured(self, result, failures, trials_per_round: int) -> int:
        """A measurement of this task came back: the counters, the failure watch (which may end the task),
        and the round. Returns the size of the round it closed (0 if none)."""
        self.measures_in_flight -= 1
        self.state.inflight = 1 if self.measures_in_flight else 0
        self.state.record_trial(result.median_secs if result.ok else None)
        if not result.ok and result.error:
            log.debug("task %s: %s: %s", self.name, result.status.value, result.error.splitlines()[0][:300])
        stop = failures.observe(self.name, [result])
        if stop is not None:
            self.fail(stop)
        self.round_results += 1
        return self.close_round() if self.round_results >= trials_per_round else 0

    def end(self, reason: str) -> None:
        """End the task before its budget (``reason``: "patience"); the task table shows why."""
        self.ended = self.state.ended = reason

    def close_round(self) -> int:
        """End the task's round (the scheduler's history); returns how many results it held."""
        n, self.round_results = self.round_results, 0
        if n:
            self.state.close_round()
        return n

    def wants_search(self, cap: int) -> bool:
        if self.requests_in_flight >= cap or not self.open():
            return False
        pool = len(self.search.pool)
        return self.search.credit >= REQUEST_MIN or (pool < REQUEST_MIN and self.requests_in_flight == 0)

    # -- search work -------------------------------------------------------------------------------------
    def search_work(self, ahead: bool = False) -> Work | dict:
        """The next search request: a farm ``Work`` item, or (for a task searched here) its reply. ``ahead``:
        a full request on credit (the farm has room no measurement can take)."""
        n = REQUEST_MAX if ahead else int(min(REQUEST_MAX, max(REQUEST_MIN, self.search.credit)))
        self.search.take_credit(n)
        request = self.search.request(n)
        if self.samples_here and request.get("fresh"):
            request["designs"] = self.sample_designs(request.pop("fresh"), request["seed"])
        return self._send(request)

    def search_request_for_designs(self, designs: list[str]) -> Work | dict:
        """Replay and describe these trace texts (a resumed job's stored records)."""
        return self._send({"designs": designs, "seed": 0})

    def _send(self, request: dict) -> Work | dict:
        if self.local is not None:
            return generate(self.local, request)
        self.requests_in_flight += 1
        return Work(SEARCH_HANDLER, {"task": self.digest, "request": request}, timeout_s=SEARCH_TIMEOUT_S,
                    shared=self.shared)

    def sample_designs(self, n: int, seed: int) -> list[str]:
        """``n`` designs sampled here (a space the workers cannot import); failures are counted as invalid."""
        rng = random.Random(seed)
        out = []
        t = self.tune_task
        for _ in range(max(1, 2 * n)):
            if len(out) >= n:
                break
            try:
                sch = t.space.sample(t.func, rng.randrange(1 << 62))
            except ScheduleError as e:
                self.search.count_invalid(f"space: {e}".split("\n")[0][:160])
                continue
            except Exception as e:  # noqa: BLE001 - a bug in a user's schedule function ends the task
                raise SearchError(f"task {self.name!r}: the space {t.space.name!r} raised "
                                  f"{type(e).__name__}: {e}") from e
            out.append(json.dumps(sch.trace.as_json(), separators=(",", ":")))
        return out

    def search_lost(self, work: Work, why: str | None, losses: int) -> Work | None:
        """A request whose worker died, timed out or left (``losses`` times before): the same request again,
        since a lost item says nothing about the space (three errors of the space end the task; lost items must
        not). A request lost ``MAX_SEARCH_LOSSES`` times counts as one failure (a request that kills every
        worker still ends)."""
        losses += 1
        if losses >= MAX_SEARCH_LOSSES:
            self.search_done(None, "", f"lost {losses} times, last: {why}")
            return None
        log.warning("task %s: search work lost (%s); retrying it", self.name, why)
        self.requests_in_flight += 1
        return Work(work.handler, work.payload, timeout_s=work.timeout_s, shared=work.shared)

    def search_done(self, reply: dict | None, worker: str, failure: str | None = None) -> int:
        """A search reply (or why there is none); returns the number of new candidates."""
        if reply is not None and reply.get("unavailable"):
            log.warning("task %s: the workers cannot load its space (%s); sampling it in the driver",
                        self.name, reply["unavailable"])
            self.samples_here = True
            return 0
        if reply is None:
            self.search_failures += 1
            log.warning("task %s: search work failed: %s", self.name, failure)
            if self.search_failures >= MAX_SEARCH_FAILURES:
                self.fail(f"task {self.name!r}: search work failed {self.search_failures} times: {failure}")
            return 0
        self.search_failures = 0
        n = self.search.receive(reply, worker)
        self.fruitful = n > 0
        return n
