"""Which task gets the next round of trials when several workloads are tuned together.

``RoundRobin`` cycles. ``GradientScheduler`` follows Ansor / MetaSchedule: the objective is the weighted
sum of best latencies ``f = sum_i w_i * g_i``, and the next round goes to the task whose ``g_i`` is expected
to fall fastest per round: ``w_i * (ALPHA * backward_i + (1 - ALPHA) * forward_i)`` where ``backward_i`` is the
observed improvement over the last ``WINDOW`` rounds and ``forward_i = -g_i / rounds_i`` is the optimistic
guess that more rounds keep paying off at the average rate so far. Each task first gets one warm-up round;
with probability ``epsilon`` a random unfinished task is picked (exploration).
"""
from __future__ import annotations

import dataclasses
import math
import random

ALPHA = 0.2   # weight of the observed improvement against the optimistic guess
WINDOW = 3    # rounds the observed improvement is taken over


@dataclasses.dataclass
class TaskState:
    """One tuning task as the scheduler and the progress table see it."""

    name: str
    weight: float = 1.0
    flop: float | None = None
    trials: int = 0
    rounds: int = 0
    best_latency: float = math.inf  # seconds
    done: bool = False
    history: list = dataclasses.field(default_factory=list)  # best latency after each round
    inflight: int = 0  # rounds handed out whose results are not recorded yet (the driver pipeline)
    ended: str = ""    # why the task ended before its budget ("patience": it stopped improving), if it did

    def record_trial(self, median_s: float | None) -> None:
        """One measured trial, with its median latency when it succeeded."""
        self.trials += 1
        if median_s is not None:
            self.best_latency = min(self.best_latency, median_s)

    def close_round(self) -> None:
        """The task's round of trials is measured: the scheduler's history grows by its best latency."""
        self.rounds += 1
        self.history.append(self.best_latency)

    @property
    def gflops(self) -> float:
        if not self.flop or not math.isfinite(self.best_latency):
            return math.nan
        return self.flop / self.best_latency / 1e9


class TaskScheduler:
    """Base class: ``next_task(tasks)`` returns an index into ``tasks`` or None when all are done."""

    def next_task(self, tasks: list[TaskState]) -> int | None:  # pragma: no cover - interface
        raise NotImplementedError


class RoundRobin(TaskScheduler):
    def __init__(self):
        self._cursor = -1

    def next_task(self, tasks):
        n = len(tasks)
        for step in range(1, n + 1):
            i = (self._cursor + step) % n
            if not tasks[i].done:
                self._cursor = i
                return i
        return None


class GradientScheduler(TaskScheduler):
    def __init__(self, epsilon: float = 0.05, seed: int | None = None):
        self.epsilon = epsilon
        self._rng = random.Random(seed)

    def gradient(self, t: TaskState) -> float:
        """Expected change of the weighted objective per extra round of this task (more negative = better)."""
        if t.rounds == 0 or not math.isfinite(t.best_latency):
            return -math.inf
        g = t.best_latency
        if len(t.history) > WINDOW:
            prev = t.history[-1 - WINDOW]
            backward = (g - prev) / WINDOW if math.isfinite(prev) else -g
        else:
            backward = -g / t.rounds
        forward = -g / t.rounds
        return t.weight * (ALPHA * backward + (1.0 - ALPHA) * forward)

    def next_task(self, tasks):
        live = [i for i, t in enumerate(tasks) if not t.done]
        if not live:
            return None
        for i in live:  # warm-up: every task gets one round before gradients mean anything
            if tasks[i].rounds == 0 and tasks[i].inflight == 0:  # one in flight is its warm-up round
                return i
        measured = [i for i in live if tasks[i].rounds > 0]
        if not measured:  # every warm-up round is still in flight: spread the next batches over the tasks
            return min(live, key=lambda i: tasks[i].inflight)
        if self._rng.random() < self.epsilon:
            return self._rng.choice(live)
        return min(measured, key=lambda i: (self.gradient(tasks[i]), tasks[i].rounds))


def create(kind: str = "gradient", seed: int | None = None) -> TaskScheduler:
    """The task scheduler named ``kind``: ``"gradient"`` (``GradientScheduler``) or ``"round-robin"``."""
    if kind == "round-robin":
        return RoundRobin()
    if kind == "gradient":
        return GradientScheduler(seed=seed)
    raise ValueError(f"unknown task scheduler {kind!r}; use 'gradient' or 'round-robin'")
