"""Measure one candidate in this process: replay the trace -> build -> check against the reference -> time.

This is the code every farm worker runs (a LocalFarm process or a Ray actor) for a measurement: the tuning
job's handler (``tuning/handlers.py``) calls ``Measurer.measure_func``, the tail of a measurement, with the
scheduled function it built when it searched (or ``replay`` first); ``Measurer.measure`` takes a whole
``MeasureInput`` (a trace and its workload as data: ``tunefarm.testing.batch``). It never
lets an exception escape for a bad candidate: each failure becomes a ``MeasureResult`` with an explicit
status. What it cannot turn into a result (a segfault or a hang inside JIT-compiled code) is handled by the
process that owns the worker: it kills or loses the worker and records ``timeout`` / ``worker_lost``.

Validation follows tinygrad: the reference is the *unscheduled* function (or an explicit reference program the
candidate names), built and run once per worker per workload, on inputs generated deterministically from the
workload key (so every worker of every machine checks against the same numbers). The outputs are pre-filled
with deterministic noise, so a schedule that forgets to write part of an output is caught.

Timing is ``time_evaluator`` with its early stop: a candidate whose check run *and* first two timed repeats
are all slower than ``MeasureInput.stop_above_s`` (the tuner sets a multiple of the task's best latency) gets no
further repeats, so its record holds two run times (real timings under the lock) instead of ``repeat``. Every
array is a 64-byte-aligned copy (``runtime/aligned.py``).

Inputs and the comparison live in check.py; ``TrialClock`` (trial_clock.py) tells the worker's owner how much of
the trial's budget is used (waiting for the host measurement lock and computing the reference are paused).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import json
import socket
import time
from typing import Any

import numpy as np

# heavy imports at module level: a worker preloads this handler module before it reports ready, so they are
# not charged to the first trial's budget (the farm's driver names the handler and never imports it)
from tunefarm.codegen import compile_funcs
from tunefarm.codegen.layout import rewrite_layout
from tunefarm.ir.serialize import from_json
from tunefarm.runtime import Module, aligned
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.target import as_target

from .measure_input import MeasureInput
from .check import compare_output, make_arrays, output_params
from .measure_lock import HostMeasureLock
from .trial_clock import Paused, TrialClock
from ..runtime.measure_result import MeasureResult, MeasureStatus
from .work import WorkerContext

_MAX_ERROR_TEXT = 2000


class _Workload:
    """A parsed workload with its deterministic arrays and its reference outputs (per reference program)."""

    __slots__ = ("func", "arrays", "outputs", "references")

    def __init__(self, func, arrays, outputs):
        self.func = func
        self.arrays = arrays
        self.outputs = outputs
        self.references: dict[str, list[np.ndarray]] = {}


class _ReferenceError(Exception):
    def __init__(self, status: MeasureStatus, text: str):
        super().__init__(text)
        self.status = status


def _error_text(prefix: str, exc: BaseException) -> str:
    return f"{prefix}{type(exc).__name__}: {exc}"[:_MAX_ERROR_TEXT]


@dataclasses.dataclass(frozen=True)
class MeasureSettings:
    """How a program is checked and timed: the ``MeasureInput`` fields of the same names."""

    number: int = 1
    repeat: int = 3
    min_repeat_ms: float = 0.0
    check: bool = True
    stop_above_s: float | None = None
    reference_json: Any = None

    @classmethod
    def of(cls, cand: MeasureInput) -> "MeasureSettings":
        return cls(cand.number, cand.repeat, cand.min_repeat_ms, cand.check, cand.stop_above_s,
                   cand.reference_json)


def _same_signature(a, b) -> bool:
    return len(a.params) == len(b.params) and all(
        p.const_shape() == q.const_shape() and p.dtype == q.dtype for p, q in zip(a.params, b.params))


class Measurer:
    """Measures candidates in this process, caching parsed workloads and their references (LRU).

    ``compiles`` counts LLVM builds (candidates and references): owners recycle the process after a few
    hundred because llvmlite leaks memory per optimizer run.
    """

    def __init__(self, lock_path: str | None = None, cache_size: int = 8):
        self.lock = HostMeasureLock(lock_path).open()
        self.cache_size = cache_size
        self.compiles = 0
        self.host = socket.gethostname()
        self._workloads: collections.OrderedDict[str, _Workload] = collections.OrderedDict()

    # --- caches
    def _workload(self, key: str, workload, name: str) -> _Workload:
        """The parsed workload ``key`` (``workload``: its JSON as a dict or text, parsed on a cache miss)."""
        w = self._workloads.get(key)
        if w is not None:
            self._workloads.move_to_end(key)
            return w
        func = from_json(json.loads(workload) if isinstance(workload, str) else workload)
        arrays = make_arrays(func, key)
        outputs = output_params(func)
        if not outputs:
            raise ValueError(f"workload {name!r} writes none of its parameters, so there is nothing to check")
        w = _Workload(func, arrays, outputs)
        self._workloads[key] = w
        while len(self._workloads) > self.cache_size:
            self._workloads.popitem(last=False)
        return w

    def _build(self, func, target):
        """Compile and load ``func``, without keeping the optimized LLVM IR text (nobody inspects it here)."""
        self.compiles += 1
        return Module.from_artifact(compile_funcs(func, target, keep_ll=False))

    def _reference(self, ref_json, w: _Workload, target, clock: TrialClock | None = None) -> list[np.ndarray]:
        """Outputs of the reference program (the unscheduled workload unless ``ref_json`` names one); computing
        them (once per workload and process) is paused time."""
        key = "" if ref_json is None else hashlib.sha256(
            (ref_json if isinstance(ref_json, str) else json.dumps(ref_json, sort_keys=True)).encode()).hexdigest()
        cached = w.references.get(key)
        if cached is not None:
            return cached
        with Paused(clock, "reference"):
            return self._compute_reference(ref_json, key, w, target)

    def _compute_reference(self, ref_json, key: str, w: _Workload, target) -> list[np.ndarray]:
        func = w.func
        if ref_json is not None:
            try:
                func = from_json(json.loads(ref_json) if isinstance(ref_json, str) else ref_json)
            except Exception as e:  # noqa: BLE001
                raise _ReferenceError(MeasureStatus.BUILD_ERROR, _error_text("reference program: ", e))
            if not _same_signature(func, w.func):
                raise _ReferenceError(MeasureStatus.BUILD_ERROR, "reference program: its parameters differ "
                                      "in number, shape or dtype from the workload's")
        try:
            mod = self._build(func, target)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            raise _ReferenceError(MeasureStatus.BUILD_ERROR, _error_text("reference (unscheduled) build: ", e))
        arrays = [aligned.copy(a) for a in w.arrays]
        try:
            mod["main"](*arrays)
        except Exception as e:  # noqa: BLE001
            raise _ReferenceError(MeasureStatus.RUN_ERROR, _error_text("reference (unscheduled) run: ", e))
        w.references[key] = [arrays[i] for i in w.outputs]
        return w.references[key]

    # --- one trial
    def measure(self, cand: MeasureInput, clock: TrialClock | None = None) -> MeasureResult:
        """Replay ``cand``'s trace, then build, run, check and time it (``measure_func``)."""
        t0 = time.perf_counter()
        try:
            w = self._workload(cand.workload_key, cand.workload_json, cand.task)
        except Exception as e:  # noqa: BLE001 - a workload we cannot load cannot be built
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("workload: ", e), t0)
        scheduled = self.replay(cand.trace_value(), w.func, t0)
        if isinstance(scheduled, MeasureResult):
            return scheduled
        return self.measure_func(cand.workload_key, cand.workload_json, scheduled, cand.target,
                                 MeasureSettings.of(cand), clock, started=t0, name=cand.task)

    def replay(self, trace_json, func, started: float):
        """``func`` scheduled by the trace (its JSON value), or the BUILD_ERROR result of a trace that does not
        replay on it (a malformed trace, or a schedule that no longer applies, is this candidate's failure)."""
        try:
            return Schedule.from_trace(Trace.from_json(trace_json), func).mod["main"]
        except ScheduleError as e:
            return self._fail(MeasureStatus.BUILD_ERROR, f"schedule: {e}", started)
        except Exception as e:  # noqa: BLE001
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("trace replay: ", e), started)

    def measure_func(self, workload_key: str, workload, scheduled_func, target, settings: MeasureSettings,
                     clock: TrialClock | None = None, *, started: float | None = None,
                     name: str = "") -> MeasureResult:
        """Build, run, check and time ``scheduled_func``, a schedule of the workload ``workload_key``.

        ``workload`` is the unscheduled workload's JSON (dict or text; parsed once per key, it defines the
        inputs and the reference); ``target`` a Target or its string. ``started`` (a ``perf_counter`` time) is
        when the caller began on this candidate, so that ``build_secs`` includes its replay. Every candidate
        failure becomes a status. The candidate runs once *before* the reference is computed, so a candidate
        that crashes or hangs does so on its own budget; the reference computation (once per workload) is
        paused time.
        """
        t0 = time.perf_counter() if started is None else started
        try:
            target = as_target(target)
        except (TypeError, ValueError) as e:
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("target: ", e), t0)
        try:
            w = self._workload(workload_key, workload, name or workload_key)
        except Exception as e:  # noqa: BLE001 - a workload we cannot load cannot be built
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("workload: ", e), t0)
        try:
            scheduled, packers = rewrite_layout_free(scheduled_func)
        except Exception as e:  # noqa: BLE001
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("layout rewrite: ", e), t0)
        try:
            mod = self._build(scheduled, target)
        except Exception as e:  # noqa: BLE001
            return self._fail(MeasureStatus.BUILD_ERROR, _error_text("build: ", e), t0)
        build_secs = time.perf_counter() - t0

        # every array on a cache line boundary: otherwise a trial's time depends on where malloc put its copies
        arrays = [aligned.copy(a) for a in w.arrays]
        for i, pack in packers:
            arrays[i] = aligned.copy(pack(arrays[i]))
        warmed = False  # the check run serves as the timing's warm-up call when it is already over the cutoff
        if settings.check:
            try:
                c0 = time.perf_counter()
                mod["main"](*arrays)
                check_secs = time.perf_counter() - c0
            except Exception as e:  # noqa: BLE001
                return self._fail(MeasureStatus.RUN_ERROR, _error_text("run: ", e), t0, build_secs)
            warmed = settings.stop_above_s is not None and check_secs > settings.stop_above_s
            try:
                reference = self._reference(settings.reference_json, w, target, clock)
            except _ReferenceError as e:
                return self._fail(e.status, str(e), t0, build_secs)
            for i, expected in zip(w.outputs, reference):
                problem = compare_output(w.func.params[i].name, arrays[i], expected,
                                         "the unscheduled program" if settings.reference_json is None
                                         else "the reference program")
                if problem is not None:
                    return self._fail(MeasureStatus.WRONG_RESULT, problem, t0, build_secs)
        return self._time(mod, arrays, settings, warmed, clock, t0, build_secs)

    def _time(self, mod, arrays, settings: MeasureSettings, warmed: bool, clock, t0: float,
              build_secs: float) -> MeasureResult:
        """The timing loop, under the host measurement lock (waiting for it is paused time)."""
        # witnesses before an early stop: the check run and the first timed repeats must all be over the cutoff,
        # so a repeat inflated by other load on the machine does not cut a fast program short
        stop_above_s = settings.stop_above_s if (warmed or not settings.check) else None
        try:
            timer = mod.time_evaluator("main", number=settings.number, repeat=settings.repeat,
                                       min_repeat_ms=settings.min_repeat_ms)
            if not self.lock.try_acquire():  # a wait for the lock is paused time (reported only when it happens)
                with Paused(clock, "lock"):
                    self.lock.acquire()
            try:
                run_secs = list(timer(*arrays, warm_up=not warmed, stop_above_s=stop_above_s).results)
            finally:
                self.lock.release()
        except Exception as e:  # noqa: BLE001
            return self._fail(MeasureStatus.RUN_ERROR, _error_text("timing: ", e), t0, build_secs)
        if not run_secs:
            return self._fail(MeasureStatus.RUN_ERROR, "timing: the time evaluator returned no results", t0,
                              build_secs)
        return MeasureResult(MeasureStatus.OK, run_secs, build_secs, None, self.host)

    def _fail(self, status: MeasureStatus, text: str, t0: float, build_secs: float | None = None) -> MeasureResult:
        secs = time.perf_counter() - t0 if build_secs is None else build_secs
        return MeasureResult(status, [], secs, text[:_MAX_ERROR_TEXT], self.host)


_MEASURER = "tunefarm.farm.measure:Measurer"  # this process's Measurer in WorkerContext.state


@contextlib.contextmanager
def worker_measurer(ctx: WorkerContext):
    """The worker process's one Measurer (its workloads, references and lock), for every handler that measures;
    the builds done inside the block count toward the worker's recycling."""
    measurer = ctx.state.get(_MEASURER)
    if measurer is None:
        measurer = ctx.state[_MEASURER] = Measurer(ctx.lock_path)
    before = measurer.compiles
    try:
        yield measurer
    finally:
        ctx.count_compiles(measurer.compiles - before)


def rewrite_layout_free(func) -> tuple[object, list]:
    """Store the workload's constant weights (``layout_free_buffers``) the way the compiled model will.

    ``tunefarm.compile`` packs a bound weight in the order its scheduled kernel reads it (TVM's
    RewriteLayout); a kernel tuned with the plain layout would be timed on a different memory walk than the one
    it runs in the model. Returns the rewritten function and ``(param index, pack)`` pairs for the inputs.
    """
    indices = func.attrs.get("layout_free_buffers") or ()
    if not indices:
        return func, []
    packers = []
    for i in sorted({int(i) for i in indices}):
        r = rewrite_layout(func, i)
        if r is not None:
            func, pack = r
            packers.append((i, pack))
    return func, packers
