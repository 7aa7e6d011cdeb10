"""``FailureWatch``: stop a task whose first rounds all fail with the same error, and say which error.

A space or a workload that cannot work (a schedule function that asks for a block that is not there, a kernel
that always crashes) makes every trial fail the same way. Unwatched, the job spends its whole budget on it
and ends with "no successful trial". The job feeds the watch each measured batch of a task as it arrives.
While the task has not had one successful trial and all its failures share one signature (status and first
line of the error, with numbers blanked out so that "differs at [3, 5]" and "at [7, 1]" count as one), the
watch counts rounds; after ``rounds`` such rounds and at least ``min_trials`` trials it tells the job to stop
the task, with a one-line error. One successful trial disarms it for that task.

The watch knows nothing of the job loop: it sees ``MeasureResult``s per task name and answers with text.
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import re
from collections.abc import Iterable

log = logging.getLogger("tunefarm.search")

MAX_ERROR_CHARS = 200
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def error_line(result) -> str:
    """``status: first line of the error`` (at most ``MAX_ERROR_CHARS``), e.g. ``run_error: run: KeyError: ...``."""
    text = (result.error or "").strip().splitlines()
    line = f"{result.status.value}: {text[0]}" if text else result.status.value
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def _signature(line: str) -> str:
    return _NUMBER.sub("#", line)


@dataclasses.dataclass
class _TaskRecord:
    trials: int = 0
    ok: int = 0
    failing_rounds: int = 0          # rounds so far in which every trial failed with the first signature
    same_error: bool = True          # every failure so far had the first failure's signature
    first_error: str | None = None
    stopped: bool = False
    errors: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def _stop_message(task: str, rec: _TaskRecord) -> str:
    return f"task {task!r} stopped after {rec.trials} trials, all failed with the same error: {rec.first_error}"


class FailureWatch:
    """Per task: has it failed every trial so far, the same way, for ``rounds`` rounds (and ``min_trials``)?"""

    def __init__(self, rounds: int = 2, min_trials: int = 8):
        if rounds < 1 or min_trials < 1:
            raise ValueError(f"rounds and min_trials must be >= 1, got {rounds}, {min_trials}")
        self.rounds = rounds
        self.min_trials = min_trials
        self._tasks: dict[str, _TaskRecord] = {}

    def observe(self, task: str, results: Iterable) -> str | None:
        """Take one measured batch of ``task``; returns the stop message the first time the task must stop."""
        rec = self._tasks.setdefault(task, _TaskRecord())
        results = list(results)
        for r in results:
            rec.trials += 1
            if r.ok:
                rec.ok += 1
                continue
            line = error_line(r)
            rec.errors[line] += 1
            if rec.first_error is None:
                rec.first_error = line
            elif _signature(line) != _signature(rec.first_error):
                rec.same_error = False
        if rec.ok or not rec.same_error or rec.stopped or not results:
            return None
        rec.failing_rounds += 1
        if rec.failing_rounds < self.rounds or rec.trials < self.min_trials:
            return None
        rec.stopped = True
        message = _stop_message(task, rec)
        log.error("%s", message)
        return message

    def stopped(self, task: str) -> bool:
        rec = self._tasks.get(task)
        return rec is not None and rec.stopped

    def error(self, task: str) -> str | None:
        """The task's one-line error while it has had no successful trial (its most frequent one), else None."""
        rec = self._tasks.get(task)
        if rec is None or rec.ok or not rec.errors:
            return None
        return rec.first_error if rec.same_error else rec.errors.most_common(1)[0][0]

    def summary(self, task: str) -> str | None:
        """At the end of a job: why a task that never succeeded failed (None if it succeeded or never ran)."""
        rec = self._tasks.get(task)
        if rec is None or rec.ok or not rec.errors:
            return None
        if rec.stopped:
            return _stop_message(task, rec)
        if rec.trials == 1:
            return f"task {task!r}: its only trial failed: {self.error(task)}"
        kinds = "the same error" if rec.same_error else f"{len(rec.errors)} different errors, most often"
        return f"task {task!r}: all {rec.trials} trials failed ({kinds}): {self.error(task)}"
