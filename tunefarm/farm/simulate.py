"""Simulated measurement: worker behaviour without a compiler, for capacity planning and fault drills.

A farm started with ``measurer="simulate"`` runs this instead of replay/build/time. The candidate's trace JSON
says what the "measurement" does: spend some build time (CPU spinning or sleeping), hold the host measurement lock
for some run time, or fail in a real way (a genuine segfault of the worker process, a hang, an exception, a wrong
result, or ``lost_reply``: a good measurement whose worker then dies before replying, which is what happens to a
finished trial's reply when the next trial crashes the process at once). The farm machinery around it (processes,
actors, timeouts, crash recovery, backpressure, metrics) is exactly the production one, so this measures the
farm's own overhead and lets one rehearse hundreds of workers on a laptop (see benchmarks/bench_farm.py).
"""
from __future__ import annotations

import ctypes
import socket
import time

from .candidate import Candidate
from .progress import Progress
from .measure_lock import HostMeasureLock
from .result import MeasureResult, MeasureStatus

BEHAVIORS = ("ok", "segfault", "hang", "raise", "wrong", "build_error", "lost_reply")


def simulated_trace(behavior: str = "ok", build_secs: float = 0.0, run_secs: float = 1e-4,
                    spin: bool = False, lock: bool = True) -> dict:
    """The trace JSON of a simulated candidate.

    ``spin`` burns CPU during the build phase (like LLVM does) instead of sleeping; ``lock`` takes the host
    measurement lock for ``run_secs`` during the timing phase.
    """
    if behavior not in BEHAVIORS:
        raise ValueError(f"unknown simulated behavior {behavior!r}; use one of {BEHAVIORS}")
    return {"simulate": {"behavior": behavior, "build_secs": float(build_secs), "run_secs": float(run_secs),
                         "spin": bool(spin), "lock": bool(lock)}}


def _spin(secs: float) -> None:
    end = time.perf_counter() + secs
    x = 0
    while time.perf_counter() < end:
        for i in range(200):
            x += i * i


class SimulatedMeasurer:
    """Same interface as ``measure.Measurer``; ``compiles`` counts simulated builds."""

    def __init__(self, lock_path: str | None = None):
        self.lock = HostMeasureLock(lock_path).open()
        self.compiles = 0
        self.host = socket.gethostname()
        self.exit_after_reply_is_journalled = False  # set by a lost_reply trial; the Ray worker obeys it

    def measure(self, cand: Candidate, progress: Progress | None = None) -> MeasureResult:
        spec = cand.trace_value()
        if not isinstance(spec, dict) or not isinstance(spec.get("simulate"), dict):
            raise ValueError("a simulated candidate's trace_json must come from simulated_trace()")
        s = spec["simulate"]
        behavior = s.get("behavior", "ok")
        t0 = time.perf_counter()
        (_spin if s.get("spin") else time.sleep)(float(s.get("build_secs", 0.0)))
        self.compiles += 1
        build_secs = time.perf_counter() - t0
        if behavior == "segfault":
            ctypes.string_at(0)  # a genuine SIGSEGV: the worker process dies
        if behavior == "hang":
            while True:
                time.sleep(0.05)
        if behavior == "raise":
            return MeasureResult(MeasureStatus.RUN_ERROR, [], build_secs, "run: simulated exception", self.host)
        if behavior == "build_error":
            return MeasureResult(MeasureStatus.BUILD_ERROR, [], build_secs, "build: simulated error", self.host)
        if behavior == "wrong":
            return MeasureResult(MeasureStatus.WRONG_RESULT, [], build_secs, "output: simulated mismatch", self.host)
        run = float(s.get("run_secs", 1e-4))
        if s.get("lock", True):
            if progress is not None:
                progress.pause("lock")
            self.lock.acquire()
            if progress is not None:
                progress.resume()
            try:
                time.sleep(run * cand.repeat)
            finally:
                self.lock.release()
        else:
            time.sleep(run * cand.repeat)
        self.exit_after_reply_is_journalled = behavior == "lost_reply"
        return MeasureResult(MeasureStatus.OK, [run] * cand.repeat, build_secs, None, self.host)
