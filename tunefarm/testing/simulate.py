"""Simulated measurement: worker behaviour without a compiler, for capacity planning and fault drills.

A batch measured with this handler (``testing.batch.measure(farm, candidates, SIMULATE)``) runs it for its
candidates instead of replay/build/time. The candidate's trace JSON says what the "measurement" does: spend some build time (CPU
spinning or sleeping), hold the host measurement lock for some run time, or fail in a real way (a genuine
segfault of the worker process, a hang, an error result, or ``lost_reply``: a good measurement whose Ray worker
then dies before replying, which is what happens to a finished trial's reply when the next trial crashes the
process at once). The farm machinery around it (processes, actors, timeouts, crash recovery, backpressure,
metrics) is exactly the production one, so this measures the farm's own overhead and lets one rehearse
hundreds of workers on a laptop (see benchmarks/bench_farm.py).
"""
from __future__ import annotations

import ctypes
import time

from tunefarm.farm.measure_input import MeasureInput
from tunefarm.farm.journal import DRILL_EXIT_AFTER_JOURNAL
from tunefarm.farm.measure_lock import HostMeasureLock
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.farm.work import WorkerContext

SIMULATE = "tunefarm.testing.simulate:measure_candidate"
BEHAVIORS = ("ok", "segfault", "hang", "raise", "wrong", "build_error", "lost_reply")
_LOCK = "tunefarm.testing.simulate:lock"  # this process's HostMeasureLock in WorkerContext.state


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


def spin(secs: float) -> None:
    """Burn CPU for ``secs`` seconds (what a compiler does), holding the GIL like Python code does."""
    end = time.perf_counter() + secs
    x = 0
    while time.perf_counter() < end:
        for i in range(200):
            x += i * i


def hold_timing_lock(ctx: WorkerContext, secs: float) -> tuple[float, float, int]:
    """Hold the worker's host measurement lock for ``secs`` as a timing loop does (waiting for it is paused
    time); returns when the hold started and ended (``time.monotonic``) and the lock's number of slots."""
    lock = ctx.state.get(_LOCK)
    if lock is None:
        lock = ctx.state[_LOCK] = HostMeasureLock(ctx.lock_path).open()
    ctx.clock.pause("lock")
    lock.acquire()
    ctx.clock.resume()
    try:
        start = time.monotonic()
        time.sleep(secs)
        return start, time.monotonic(), lock.slots
    finally:
        lock.release()


def measure_candidate(payload: list, ctx: WorkerContext) -> dict:
    """Same contract as ``testing.batch.measure_candidate``; one simulated build per candidate."""
    cand = MeasureInput.from_payload(payload, ctx.shared)
    spec = cand.trace_value()
    if not isinstance(spec, dict) or not isinstance(spec.get("simulate"), dict):
        raise ValueError("a simulated candidate's trace_json must come from simulated_trace()")
    s = spec["simulate"]
    behavior = s.get("behavior", "ok")
    t0 = time.perf_counter()
    (spin if s.get("spin") else time.sleep)(float(s.get("build_secs", 0.0)))
    ctx.count_compiles(1)
    build_secs = time.perf_counter() - t0
    if behavior == "segfault":
        ctypes.string_at(0)  # a genuine SIGSEGV: the worker process dies
    if behavior == "hang":
        while True:
            time.sleep(0.05)
    failures = {"raise": (MeasureStatus.RUN_ERROR, "run: simulated exception"),
                "build_error": (MeasureStatus.BUILD_ERROR, "build: simulated error"),
                "wrong": (MeasureStatus.WRONG_RESULT, "output: simulated mismatch")}
    if behavior in failures:
        status, text = failures[behavior]
        return {"result": MeasureResult(status, [], build_secs, text, ctx.host).to_dict()}
    run = float(s.get("run_secs", 1e-4))
    if s.get("lock", True):
        hold_timing_lock(ctx, run * cand.repeat)
    else:
        time.sleep(run * cand.repeat)
    if behavior == "lost_reply":
        ctx.state[DRILL_EXIT_AFTER_JOURNAL] = True
    return {"result": MeasureResult(MeasureStatus.OK, [run] * cand.repeat, build_secs, None, ctx.host).to_dict()}
