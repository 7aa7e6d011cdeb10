"""``time_evaluator``: timing a compiled function with the native timing loop.

Each repeat is one call of the emitted ``__tf_timer(entry, args, number)`` (``tunefarm.codegen.timing``,
compiled once per process on first use), which runs the kernel ``number`` times between two
``clock_gettime(CLOCK_MONOTONIC)`` reads: no Python in the measured interval.
``min_repeat_ms`` grows ``number`` (like TVM) until one repeat lasts at least that long; the grown number is
kept for later repeats. ``flush_cache`` writes a buffer larger than the last-level cache before each repeat
so every repeat starts cold. One untimed warm-up call precedes the repeats (``warm_up=False``: the caller just
ran the function on these arrays). ``stop_above_s`` stops early: once the first ``STOP_AFTER_REPEATS`` repeats
are all slower than that per call, no further repeats run (the tuner's cutoff for programs that cannot win).
"""
from __future__ import annotations

import ctypes
import statistics
import threading
import time

import numpy as np

from ..target import Target
from .jit import LoadedObject

_GOLDEN = 1.618
# Repeats an early-stopped timing still gets: on a shared machine single repeats of a fast program were seen 2x
# slower now and then, and one such repeat must not cut the program short.
STOP_AFTER_REPEATS = 2
_TIMER_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_timer_lock = threading.Lock()
_timer = None  # (LoadedObject, ctypes function), built once per process


def native_timer():
    """``timer(entry_address, args_address, number) -> elapsed ns`` (compiled on first use)."""
    global _timer
    with _timer_lock:
        if _timer is None:
            from ..codegen.llvm_compile import compile_ir  # on use: a loaded module runs without the compiler
            # on use: a loaded module runs without the compiler
            from ..codegen.timing import TIMER_SYMBOL, timer_module_ir
            host = Target.host()
            code = compile_ir(timer_module_ir(), host, keep_ll=False)
            loaded = LoadedObject(code.object, host.cpu, host.feature_string)
            _timer = (loaded, _TIMER_TYPE(loaded.address(TIMER_SYMBOL)))
        return _timer[1]


class BenchmarkResult:
    """Seconds per call, one entry per repeat (``results``), with summary statistics; ``number`` is how many
    calls each repeat timed (after ``min_repeat_ms`` growth)."""

    __slots__ = ("results", "number")

    def __init__(self, results, number: int = 1):
        self.results = tuple(float(r) for r in results)
        self.number = int(number)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results) if len(self.results) > 1 else 0.0

    def __repr__(self) -> str:
        return (f"BenchmarkResult(median={self.median * 1e6:.3f} us, mean={self.mean * 1e6:.3f} us, "
                f"min={self.min * 1e6:.3f} us, repeats={len(self.results)})")


def _llc_bytes() -> int:
    try:
        for idx in range(4, -1, -1):
            path = f"/sys/devices/system/cpu/cpu0/cache/index{idx}/size"
            with open(path) as fh:
                text = fh.read().strip().upper()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
            return int(text.rstrip("KMG")) * mult
    except (OSError, ValueError):
        pass
    return 32 << 20


class TimeEvaluator:
    """``f(*arrays) -> BenchmarkResult`` for one compiled function."""

    def __init__(self, function, number: int = 10, repeat: int = 1, min_repeat_ms: float = 0.0,
                 flush_cache: bool = False):
        if int(number) < 1 or int(repeat) < 1:
            raise ValueError(f"number and repeat must be >= 1, got number={number}, repeat={repeat}")
        if min_repeat_ms < 0:
            raise ValueError(f"min_repeat_ms must be >= 0, got {min_repeat_ms}")
        self.function = function
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = float(min_repeat_ms)
        self.flush_cache = bool(flush_cache)
        self._flush_buf = None

    def _flush(self) -> None:
        if self._flush_buf is None:
            self._flush_buf = np.empty(max(_llc_bytes() * 3 // 2, 1 << 20) // 8, dtype=np.int64)
        self._flush_buf.fill(self._flush_buf.size)

    def __call__(self, *arrays, warm_up: bool = True, stop_above_s: float | None = None) -> BenchmarkResult:
        bound = self.function.bind(*arrays)
        timer = native_timer()
        entry = self.function.entry_address
        args = bound._args
        if warm_up:
            bound()  # first-touch, instruction cache, thread team start
        number = self.number
        min_ns = self.min_repeat_ms * 1e6
        results = []
        for _ in range(self.repeat):
            while True:
                if self.flush_cache:
                    self._flush()
                ns = timer(entry, args, number)
                if ns >= min_ns:
                    break
                per_call = max(ns, 1) / number
                number = max(int(min_ns / per_call) + 1, int(number * _GOLDEN) + 1)
            results.append(ns / number / 1e9)
            if stop_above_s is not None and len(results) >= STOP_AFTER_REPEATS and min(results) > stop_above_s:
                break
        return BenchmarkResult(results, number)


def time_python_calls(call, number: int = 10, repeat: int = 1, min_repeat_ms: float = 0.0) -> BenchmarkResult:
    """Time ``call()`` from Python: ``number`` calls between two clock reads per repeat, after one warm-up call.

    For what has no single native entry to hand to the native loop -- a compiled model, which may call
    registered Python functions between its kernels; the time includes what a Python caller pays per call.
    ``number`` grows as in ``TimeEvaluator`` until a repeat lasts ``min_repeat_ms``.
    """
    if int(number) < 1 or int(repeat) < 1:
        raise ValueError(f"number and repeat must be >= 1, got number={number}, repeat={repeat}")
    if min_repeat_ms < 0:
        raise ValueError(f"min_repeat_ms must be >= 0, got {min_repeat_ms}")
    number = int(number)
    call()
    results = []
    for _ in range(int(repeat)):
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                call()
            secs = time.perf_counter() - t0
            if secs * 1e3 >= min_repeat_ms:
                break
            per_call = max(secs, 1e-9) / number
            number = max(int(min_repeat_ms / 1e3 / per_call) + 1, int(number * _GOLDEN) + 1)
        results.append(secs / number)
    return BenchmarkResult(results, number)

