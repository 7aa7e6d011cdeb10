"""Budgets by progress: a task that has not improved its best in ``patience`` measured trials ends, and its share
of the job's trials goes to the tasks still improving (Ansor's per-task early stopping).

``patience`` is a number of trials for every task, or a dict ``task name -> trials`` (as ``timeout_s``: tasks not
named are never ended by it). A trial improves the best only when it is faster by more than ``MIN_GAIN`` (1%):
a best that moved by less than the timing noise of one host has made no progress. The job's total budget is shared by its tasks (the scheduler hands out rounds), so a task that ends early leaves
its trials to the others; the task table shows ``patience`` under Done for it. A task counts its trials from its
start in this job, so a resumed job gives each task ``patience`` trials before judging it.
"""
from __future__ import annotations

import math

STATUS = "patience"
MIN_GAIN = 0.01


def _check_one(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"patience must be an integer >= 1 (measured trials), a dict of them, or None, got {n!r}")
    return n


def check_patience(n) -> int | dict | None:
    if n is None:
        return None
    if isinstance(n, dict):
        return {str(k): _check_one(v) for k, v in n.items()}
    return _check_one(n)


class Patience:
    """Counts each task's measured trials since its best last improved (``n`` None: never ends a task)."""

    def __init__(self, n: int | dict | None = None):
        self.n = check_patience(n)
        self.since_best: dict[str, int] = {}
        self.best: dict[str, float] = {}

    def measured(self, task: str, latency: float | None) -> bool:
        """One measured trial of ``task`` (its median seconds, None when it failed); True when the task has now
        gone ``n`` trials without a better best."""
        best = self.best.get(task, math.inf)
        if latency is not None and latency < best * (1 - MIN_GAIN):
            self.since_best[task] = 0
        else:
            self.since_best[task] = self.since_best.get(task, 0) + 1
        if latency is not None:
            self.best[task] = min(best, latency)
        n = self.n.get(task) if isinstance(self.n, dict) else self.n
        return n is not None and self.since_best[task] >= n
