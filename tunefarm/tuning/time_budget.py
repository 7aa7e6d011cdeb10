"""Budgets by time: a job that stops cleanly after ``time_budget_s`` seconds (Optuna's ``optimize(timeout=)``,
Ray Tune's ``time_budget_s``): clusters are paid by the hour, not by the trial.

The clock starts when ``tune`` is called (starting the farm and the warm start count). Once it runs out the job
hands out no more work; measurements in flight get ``GRACE_S`` to come back and be stored with the rest, and
whatever is still running then is dropped from the farm (its claims end with the job; nothing is half written:
every record is stored by the job's own transactions). The job's status then reads ``time budget``.
"""
from __future__ import annotations

import math
import time

STATUS = "time budget"
GRACE_S = 2.0  # how long work in flight may still come back once the budget is spent


def check_time_budget(seconds) -> float | None:
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < math.inf:
        raise ValueError(f"time_budget_s must be a number of seconds > 0, or None, got {seconds!r}")
    return float(seconds)


class TimeBudget:
    """A job's deadline (``seconds`` None: none) and whether it ended the job."""

    def __init__(self, seconds: float | None = None, start: float | None = None):
        seconds = check_time_budget(seconds)
        start = time.monotonic() if start is None else start
        self.deadline = None if seconds is None else start + seconds
        self.spent = False  # the budget ran out while the job still had work: it ended the job

    def expired(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.spent = True
        return self.spent

    def wait(self, longest: float) -> float:
        """How long the loop may wait for the farm now: ``longest``, or less when the deadline is nearer."""
        if self.deadline is None:
            return longest
        return max(0.0, min(longest, self.deadline - time.monotonic()))

    def wind_down(self, farm, handle) -> int:
        """Give the work in flight ``GRACE_S`` to come back (``handle`` takes each ``Done``), then drop what is
        left from the farm; returns how many items were dropped."""
        end = time.monotonic() + GRACE_S
        while farm.pending and time.monotonic() < end:
            for d in farm.poll(max(0.0, end - time.monotonic())):
                handle(d)
        dropped = farm.pending
        if dropped:
            farm.abandon()  # no stale reply of theirs may reach a later job on this farm
        return dropped
