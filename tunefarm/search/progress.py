"""Progress of a tuning job: MetaSchedule's task table through ``logging``, and a live line on a terminal.

The table (ID | Name | FLOP | Weight | Speed (GFLOPS) | Latency (us) | Weighted Latency (us) | Trials | Done)
is logged at INFO after every round, so it lands in whatever log the user configured; a task that has failed
every trial so far gets a row under the table with its error (status and first line), and a task stopped for
it shows ``stop`` under Done; a task ended by its patience shows ``patience`` there and is named under the
table with its share given to the others. Every line fits ``WIDTH`` columns (long names are cut in the middle, where
they differ least: ``fused_matm…_64x128``).

Like MetaSchedule, the Python API shows the table even when the application configured no logging: then the
``tunefarm`` logger gets a console handler on stderr at INFO. To silence it, set a level on that logger
(``logging.getLogger("tunefarm").setLevel(logging.WARNING)``) or configure logging yourself; either makes
tunefarm add nothing. When stderr is a terminal a single progress line is also redrawn in place.
"""
from __future__ import annotations

import logging
import math
import sys
import time

from .task_scheduler import TaskState

log = logging.getLogger("tunefarm.search")

WIDTH = 120
_HEADER = ("ID", "Name", "FLOP", "Weight", "Speed (GFLOPS)", "Latency (us)", "Weighted Latency (us)", "Trials",
           "Done")
_SEP = " | "


def _fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "N/A"
    return f"{x:.{digits}f}"


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters in the middle (names differ at their ends: kernel and shape)."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _cut(line: str, width: int = WIDTH) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def task_table(tasks: list[TaskState], failures=None) -> str:
    """The task table as text (MetaSchedule's columns), with a row per failing task's error under it.

    ``failures``: a ``FailureWatch`` (``error(name)``, ``stopped(name)``), or None.
    """
    rows, errors, ended = [], [], []
    total_lat = 0.0
    for i, t in enumerate(tasks):
        lat_us = t.best_latency * 1e6 if math.isfinite(t.best_latency) else math.nan
        if math.isfinite(lat_us):
            total_lat += lat_us * t.weight
        stopped = failures is not None and failures.stopped(t.name)
        rows.append([str(i), t.name, str(int(t.flop)) if t.flop else "N/A", f"{t.weight:g}", _fmt(t.gflops),
                     _fmt(lat_us), _fmt(lat_us * t.weight), str(t.trials),
                     "stop" if stopped else t.ended or ("Y" if t.done else "")])
        if t.ended:
            ended.append(_cut(f"  #{i} {t.name}: {t.ended}"))
        error = failures.error(t.name) if failures is not None else None
        if error:
            errors.append(_cut(f"  #{i} {t.name}: {error}"))
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(_HEADER)]
    room = WIDTH - (sum(widths) - widths[1]) - len(_SEP) * (len(_HEADER) - 1)
    widths[1] = max(len(_HEADER[1]), min(widths[1], room))
    for r in rows:
        r[1] = shorten(r[1], widths[1])

    def line(cells):
        return _SEP.join(c.ljust(w) if k < 2 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))

    sep = "-" * len(line(_HEADER))
    out = [line(_HEADER), sep] + [line(r) for r in rows] + [sep]
    if errors:
        out += ["Tasks with no successful trial (status: first line of the error):"] + errors
    if ended:
        out += ["Tasks ended early, their share of the trials given to the others (not 1% better in their last "
                "`patience` trials):"] + ended
    out.append(f"Total trials: {sum(t.trials for t in tasks)}")
    out.append(f"Total latency (us): {total_lat:g}")
    return "\n".join(out)


class _ConsoleHandler(logging.StreamHandler):
    """stderr at INFO for the ``tunefarm`` logger, silent once the application configures logging."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:  # configured after all: the application's handlers print it
            return
        self.setStream(sys.stderr)  # the stderr of now (tests and notebooks replace it)
        super().emit(record)


def show_without_logging_config() -> None:
    """Give the ``tunefarm`` logger a console handler unless the application set up logging or a level."""
    package = logging.getLogger("tunefarm")
    if logging.getLogger().handlers or package.handlers or package.level != logging.NOTSET:
        return
    handler = _ConsoleHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(message)s"))
    package.addHandler(handler)
    package.setLevel(logging.INFO)


class Progress:
    """Reports rounds of a job; ``live`` defaults to whether stderr is a terminal; ``failures`` is the job's
    ``FailureWatch`` (its errors are shown with the table)."""

    def __init__(self, tasks: list[TaskState], max_trials: int, live: bool | None = None, stream=None,
                 failures=None):
        self.tasks = tasks
        self.max_trials = max_trials
        self.failures = failures
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.start = time.perf_counter()
        self._drawn = False
        show_without_logging_config()

    def round(self, task_index: int, n_new: int) -> None:
        t = self.tasks[task_index]
        log.info("[Updated] Task #%d: %r (+%d trials)\n%s", task_index, t.name, n_new,
                 task_table(self.tasks, self.failures))
        if self.live:
            self._draw()

    def _draw(self) -> None:
        trials = sum(t.trials for t in self.tasks)
        el = time.perf_counter() - self.start
        best = " ".join(f"{t.name}={_fmt(t.best_latency * 1e6, 2)}us" for t in self.tasks[:4])
        msg = f"\r[tunefarm] trials {trials}/{self.max_trials}  {trials / el if el else 0:.1f}/s  best {best}"
        self.stream.write(_cut(msg, WIDTH - 1).ljust(80))
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
        log.info("Tuning finished in %.1f s\n%s", time.perf_counter() - self.start,
                 task_table(self.tasks, self.failures))
