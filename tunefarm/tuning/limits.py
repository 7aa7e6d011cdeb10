"""What this host can hold, checked before a job starts anything: workers, a workload's buffers, timeouts, seeds.

A worker count the host cannot run (``--workers 1000`` on two cores) drove a host into the OOM killer; a
workload whose buffers cannot be allocated (``matmul-99999999``: 71 PiB) stored a ``build_error`` per trial
before the job gave up. Both are refused here with one line, before a process starts or a row is written.

- ``WORKERS_PER_CORE``: more workers than this per core only queue on the CPU (each one builds with LLVM and
  times under the host lock), so their trials time out instead of finishing.
- ``WORKER_MEMORY_BYTES``: what one worker process holds once it has worked (Python, numpy, llvmlite, the
  XGBoost library, its caches): 160 MB resident after searching, training and measuring matmul-128 on x86-64
  Linux; 256 MiB leaves room for larger workloads.
- a workload's buffers are allocated twice while measuring (the program's arrays and the reference output),
  so they must fit twice in the host's memory.
"""
from __future__ import annotations

import math
import numbers
import os

from ..ir import dtype as dtypes

WORKERS_PER_CORE = 4
WORKER_MEMORY_BYTES = 256 << 20
MEASURE_COPIES = 2
MAX_SEED = (1 << 31) - 1


def host_cores() -> int:
    return os.cpu_count() or 1


def host_memory_bytes() -> int | None:
    """Memory available to new processes now (``MemAvailable``); None where /proc cannot tell."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_workers(workers: int | None, where: str = "this host") -> None:
    """Refuse a worker count this host cannot hold, by its cores and by its memory per worker."""
    if workers is None:
        return
    cores = host_cores()
    if workers > WORKERS_PER_CORE * cores:
        raise ValueError(f"{workers} workers is more than {where} can run: it has {cores} cores (at most "
                         f"{WORKERS_PER_CORE * cores} workers, {WORKERS_PER_CORE} per core)")
    memory = host_memory_bytes()
    if memory is not None and workers * WORKER_MEMORY_BYTES > memory:
        fit = memory // WORKER_MEMORY_BYTES
        raise ValueError(f"{workers} workers need about {workers * WORKER_MEMORY_BYTES / 2**30:.1f} GiB but {where} "
                         f"has {memory / 2**30:.1f} GiB available (at most {fit} workers of "
                         f"{WORKER_MEMORY_BYTES >> 20} MiB each)")


def buffer_bytes(func) -> int:
    """Bytes of a PrimFunc's parameter buffers of known shape (symbolic dimensions count as one element)."""
    total = 0
    for buf in func.params:
        shape = buf.const_shape() or ()
        total += math.prod(shape) * dtypes.nbytes(buf.dtype)
    return total


def check_buffers(name: str, func) -> None:
    """Refuse a workload whose buffers this host cannot allocate for a measurement."""
    need = MEASURE_COPIES * buffer_bytes(func)
    memory = host_memory_bytes()
    if memory is not None and need > memory:
        raise ValueError(f"workload {name!r} cannot be measured here: its buffers need {_size(need)} "
                         f"({MEASURE_COPIES} copies while measuring) but this host has {_size(memory)} available")


def _size(n: int) -> str:
    for unit, shift in (("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def check_timeout(timeout_s) -> None:
    """A trial's budget: a positive, finite number of seconds (or a dict of them per task)."""
    values = timeout_s.values() if isinstance(timeout_s, dict) else [timeout_s]
    for t in values:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise ValueError(f"the trial timeout must be a positive, finite number of seconds, got {t!r}")


def check_seed(seed) -> None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or not 0 <= seed <= MAX_SEED):
        raise ValueError(f"the seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
