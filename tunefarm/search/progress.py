"""Progress of a tuning job: MetaSchedule's task table through ``logging``, and a live line on a terminal.

The table (ID | Name | FLOP | Weight | Speed (GFLOPS) | Latency (us) | Weighted Latency (us) | Trials | Done)
is logged at INFO after every round, so it lands in whatever log the user configured. When stderr is a
terminal a single progress line is also redrawn in place (never when it is a file or a pipe).
"""
from __future__ import annotations

import logging
import math
import sys
import time

from .task_scheduler import TaskState

log = logging.getLogger("tunefarm.search")

_HEADER = ("ID", "Name", "FLOP", "Weight", "Speed (GFLOPS)", "Latency (us)", "Weighted Latency (us)", "Trials",
           "Done")


def _fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "N/A"
    return f"{x:.{digits}f}"


def task_table(tasks: list[TaskState]) -> str:
    """The task table as text (same columns as MetaSchedule's task scheduler log)."""
    rows = []
    total_lat = 0.0
    for i, t in enumerate(tasks):
        lat_us = t.best_latency * 1e6 if math.isfinite(t.best_latency) else math.nan
        if math.isfinite(lat_us):
            total_lat += lat_us * t.weight
        rows.append((str(i), t.name, str(int(t.flop)) if t.flop else "N/A", f"{t.weight:g}", _fmt(t.gflops),
                     _fmt(lat_us), _fmt(lat_us * t.weight), str(t.trials), "Y" if t.done else ""))
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(_HEADER)]
    line = lambda cells: " | ".join(c.ljust(w) if k < 2 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))
    sep = "-" * len(line(_HEADER))
    out = [line(_HEADER), sep] + [line(r) for r in rows] + [sep]
    out.append(f"Total trials: {sum(t.trials for t in tasks)}")
    out.append(f"Total latency (us): {total_lat:g}")
    return "\n".join(out)


class Progress:
    """Reports rounds of a job; ``live`` defaults to whether stderr is a terminal."""

    def __init__(self, tasks: list[TaskState], max_trials: int, live: bool | None = None, stream=None):
        self.tasks = tasks
        self.max_trials = max_trials
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.start = time.perf_counter()
        self._drawn = False

    def round(self, task_index: int, n_new: int) -> None:
        t = self.tasks[task_index]
        log.info("[Updated] Task #%d: %r (+%d trials)\n%s", task_index, t.name, n_new, task_table(self.tasks))
        if self.live:
            self._draw()

    def _draw(self) -> None:
        trials = sum(t.trials for t in self.tasks)
        el = time.perf_counter() - self.start
        best = " ".join(f"{t.name}={_fmt(t.best_latency * 1e6, 2)}us" for t in self.tasks[:4])
        msg = f"\r[tunefarm] trials {trials}/{self.max_trials}  {trials / el if el else 0:.1f}/s  best {best}"
        self.stream.write(msg[:200].ljust(80))
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
        log.info("Tuning finished in %.1f s\n%s", time.perf_counter() - self.start, task_table(self.tasks))
