"""Measure one candidate in this process: replay the trace -> build -> check against the reference -> time.

This is the code every farm worker runs (a LocalFarm process or a Ray actor). It never lets an exception
escape for a bad candidate: each failure becomes a ``MeasureResult`` with an explicit status. What it cannot
turn into a result (a segfault or a hang inside JIT-compiled code) is handled by the process that owns the
worker: it kills or loses the worker and records ``timeout`` / ``worker_lost``.

Validation follows tinygrad: the reference is the *unscheduled* function (or an explicit reference program the
candidate names), built and run once per worker per workload, on inputs generated deterministically from the
workload key (so every worker of every machine checks against the same numbers). The outputs are pre-filled
with deterministic noise, so a schedule that forgets to write part of an output is caught.

Timing is ``time_evaluator`` with its early stop: a candidate whose check run *and* first two timed repeats
are all slower than ``Candidate.stop_above_s`` (the tuner sets a multiple of the task's best latency) gets no
further repeats, so its record holds two run times (real timings under the lock) instead of ``repeat``. Every
array is a 64-byte-aligned copy (``runtime/aligned.py``).

Inputs and the comparison live in check.py; ``Progress`` (progress.py) tells the worker's owner how much of
the trial's budget is used (waiting for the host measurement lock and computing the reference are paused).
"""
from __future__ import annotations

import collections
import hashlib
import json
import socket
import time
import traceback

import numpy as np

from .candidate import Candidate
from .check import compare_output, make_arrays, output_params
from .measure_lock import HostMeasureLock
from .progress import Paused, Progress
from .result import MeasureResult, MeasureStatus

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


def _error_text(prefix: str, exc: BaseException, with_trace: bool = False) -> str:
    text = f"{prefix}{type(exc).__name__}: {exc}"
    if with_trace:
        text += "\n" + "".join(traceback.format_exception(exc)[-6:])
    return text[:_MAX_ERROR_TEXT]


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
    def _workload(self, cand: Candidate) -> _Workload:
        w = self._workloads.get(cand.workload_key)
        if w is not None:
            self._workloads.move_to_end(cand.workload_key)
            return w
        from tunefarm.ir.serialize import from_json

        func = from_json(cand.workload_dict())
        arrays = make_arrays(func, cand.workload_key)
        outputs = output_params(func)
        if not outputs:
            raise ValueError(f"workload {cand.task!r} writes none of its parameters, so there is nothing to check")
        w = _Workload(func, arrays, outputs)
        self._workloads[cand.workload_key] = w
        while len(self._workloads) > self.cache_size:
            self._workloads.popitem(last=False)
        return w

    def _build(self, func, target):
        """Compile and load ``func``, without keeping the optimized LLVM IR text (nobody inspects it here)."""
        from tunefarm.codegen import compile_funcs
        from tunefarm.runtime import Module

        self.compiles += 1
        return Module.from_artifact(compile_funcs(func, target, keep_ll=False))

    def _reference(self, cand: Candidate, w: _Workload, target) -> list[np.ndarray]:
        """Outputs of the reference program (the unscheduled workload unless the candidate names one)."""
        ref_json = cand.reference_json
        key = "" if ref_json is None else hashlib.sha256(
            (ref_json if isinstance(ref_json, str) else json.dumps(ref_json, sort_keys=True)).encode()).hexdigest()
        cached = w.references.get(key)
        if cached is not None:
            return cached
        func = w.func
        if ref_json is not None:
            from tunefarm.ir.serialize import from_json

            try:
                func = from_json(cand.reference_dict())
            except Exception as e:  # noqa: BLE001
                raise _ReferenceError(MeasureStatus.BUILD_ERROR, _error_text("reference program: ", e))
            if not _same_signature(func, w.func):
                raise _ReferenceError(MeasureStatus.BUILD_ERROR, "reference program: its parameters differ "
                                      "in number, shape or dtype from the workload's")
        try:
            mod = self._build(func, target)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            raise _ReferenceError(MeasureStatus.BUILD_ERROR, _error_text("reference (unscheduled) build: ", e))
        from tunefarm.runtime import aligned

        arrays = [aligned.copy(a) for a in w.arrays]
        try:
            mod["main"](*arrays)
        except Exception as e:  # noqa: BLE001
            raise _ReferenceError(MeasureStatus.RUN_ERROR, _error_text("reference (unscheduled) run: ", e))
        w.references[key] = [arrays[i] for i in w.outputs]
        return w.references[key]

    # --- one trial
    def measure(self, cand: Candidate, progress: Progress | None = None) -> MeasureResult:
        """Replay, build, run, check and time ``cand``; every candidate failure becomes a status.

        The candidate runs once *before* the reference is computed, so a candidate that crashes or hangs does
        so on its own budget; the reference computation (once per workload) is paused time.
        """
        host = self.host
        t0 = time.perf_counter()

        def fail(status: MeasureStatus, text: str, build_secs: float | None = None) -> MeasureResult:
            secs = time.perf_counter() - t0 if build_secs is None else build_secs
            return MeasureResult(status, [], secs, text[:_MAX_ERROR_TEXT], host)

        from tunefarm.runtime import aligned
        from tunefarm.schedule import ScheduleError, Trace
        from tunefarm.target import Target

        try:
            target = Target(cand.target)
        except (TypeError, ValueError) as e:
            return fail(MeasureStatus.BUILD_ERROR, _error_text("target: ", e))
        try:
            w = self._workload(cand)
        except Exception as e:  # noqa: BLE001 - a workload we cannot load cannot be built
            return fail(MeasureStatus.BUILD_ERROR, _error_text("workload: ", e))

        # replay + build (the build time the cost model and the report see)
        try:
            trace = Trace.from_json(cand.trace_value())
            sch = trace.replay(w.func)
            scheduled = sch.mod["main"]
        except ScheduleError as e:
            return fail(MeasureStatus.BUILD_ERROR, f"schedule: {e}")
        except Exception as e:  # noqa: BLE001 - a malformed trace is this candidate's build failure
            return fail(MeasureStatus.BUILD_ERROR, _error_text("trace replay: ", e))
        try:
            scheduled, packers = rewrite_layout_free(scheduled)
        except Exception as e:  # noqa: BLE001
            return fail(MeasureStatus.BUILD_ERROR, _error_text("layout rewrite: ", e))
        try:
            mod = self._build(scheduled, target)
        except Exception as e:  # noqa: BLE001
            return fail(MeasureStatus.BUILD_ERROR, _error_text("build: ", e))
        build_secs = time.perf_counter() - t0

        # every array on a cache line boundary: otherwise a trial's time depends on where malloc put its copies
        arrays = [aligned.copy(a) for a in w.arrays]
        for i, pack in packers:
            arrays[i] = aligned.copy(pack(arrays[i]))
        warmed = False  # the check run serves as the timing's warm-up call when it is already over the cutoff
        if cand.check:
            try:
                c0 = time.perf_counter()
                mod["main"](*arrays)
                check_secs = time.perf_counter() - c0
            except Exception as e:  # noqa: BLE001
                return fail(MeasureStatus.RUN_ERROR, _error_text("run: ", e), build_secs)
            warmed = cand.stop_above_s is not None and check_secs > cand.stop_above_s
            try:
                with Paused(progress, "reference"):
                    reference = self._reference(cand, w, target)
            except _ReferenceError as e:
                return fail(e.status, str(e), build_secs)
            for i, expected in zip(w.outputs, reference):
                problem = compare_output(w.func.params[i].name, arrays[i], expected,
                                         "the unscheduled program" if cand.reference_json is None
                                         else "the reference program")
                if problem is not None:
                    return fail(MeasureStatus.WRONG_RESULT, problem, build_secs)

        # witnesses before an early stop: the check run and the first timed repeats must all be over the cutoff,
        # so a repeat inflated by other load on the machine does not cut a fast program short
        stop_above_s = cand.stop_above_s if (warmed or not cand.check) else None
        try:
            timer = mod.time_evaluator("main", number=cand.number, repeat=cand.repeat,
                                       min_repeat_ms=cand.min_repeat_ms)
            with Paused(progress, "lock"):
                self.lock.acquire()
            try:
                run_secs = list(timer(*arrays, warm_up=not warmed, stop_above_s=stop_above_s).results)
            finally:
                self.lock.release()
        except Exception as e:  # noqa: BLE001
            return fail(MeasureStatus.RUN_ERROR, _error_text("timing: ", e), build_secs)
        if not run_secs:
            return fail(MeasureStatus.RUN_ERROR, "timing: the time evaluator returned no results", build_secs)
        return MeasureResult(MeasureStatus.OK, run_secs, build_secs, None, host)


def rewrite_layout_free(func) -> tuple[object, list]:
    """Store the workload's constant weights (``layout_free_buffers``) the way the compiled model will.

    ``tunefarm.compile`` packs a bound weight in the order its scheduled kernel reads it (TVM's
    RewriteLayout); a kernel tuned with the plain layout would be timed on a different memory walk than the one
    it runs in the model. Returns the rewritten function and ``(param index, pack)`` pairs for the inputs.
    """
    indices = func.attrs.get("layout_free_buffers") or ()
    if not indices:
        return func, []
    from tunefarm.graph.layout import rewrite_layout

    packers = []
    for i in sorted({int(i) for i in indices}):
        r = rewrite_layout(func, i)
        if r is not None:
            func, pack = r
            packers.append((i, pack))
    return func, packers


def internal_error_result(exc: BaseException, host: str = "") -> MeasureResult:
    """What a worker reports when measuring itself failed unexpectedly (a bug, not the candidate)."""
    return MeasureResult(MeasureStatus.RUN_ERROR, [], 0.0, _error_text("internal error: ", exc, True),
                         host or socket.gethostname())


def make_measurer(kind: str, lock_path: str | None = None):
    """The measurer a worker runs, by name: ``"tunefarm"`` (real) or ``"simulate"`` (see simulate.py)."""
    if kind == "tunefarm":
        return Measurer(lock_path)
    if kind == "simulate":
        from .simulate import SimulatedMeasurer

        return SimulatedMeasurer(lock_path)
    raise ValueError(f"unknown measurer {kind!r}; use 'tunefarm' or 'simulate'")
