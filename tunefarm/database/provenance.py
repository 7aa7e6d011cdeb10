"""Provenance of tuning results: which code generator built a record and on which CPU it was timed.

A schedule's measured speed belongs to the compiler that built it: a newer LLVM may vectorize the same loops
differently, so a database that outlives an upgrade holds figures of two code generators. Each job stores the
tunefarm, llvmlite and LLVM versions of its driver (``JOB_COLUMNS``), each record the CPU model name of the host
that timed it (the target string is LLVM's view of the CPU, not the product a person recognises). The *code
generator version* of a record is its job's (llvmlite, LLVM) pair; ``compile`` passes over records of another
one unless asked (``best.current_best``). A record with no job or a job stored before provenance existed has
an unknown version, which is not "another" one: older databases stay usable.
"""
from __future__ import annotations

import functools
import importlib.metadata
import platform

JOB_COLUMNS = ("tunefarm_version", "llvmlite_version", "llvm_version")
# the columns of a record query (records r LEFT JOIN jobs j) that ``record_fields`` reads, in order
RECORD_SQL = ("r.confirmed_secs, r.confirmed_p10_secs, r.confirmed_p90_secs, j.llvmlite_version, "
              "j.llvm_version, r.cpu_model")
# best first: confirmed records by their confirmed median, then the others by the farm's (the two figures come
# from different conditions, so they are not compared: an unconfirmed record outranks none that is confirmed);
# ties by commit order
TRUSTED_ORDER = "(r.confirmed_secs IS NULL), coalesce(r.confirmed_secs, r.median_secs), r.id"


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def code_versions() -> tuple[str | None, str | None, str]:
    """(tunefarm, llvmlite, LLVM) versions of this process, in ``JOB_COLUMNS`` order."""
    import llvmlite.binding as llvm  # on use: `import tunefarm.database` loads no LLVM

    return _version("tunefarm"), _version("llvmlite"), ".".join(map(str, llvm.llvm_version_info))


def codegen_version() -> tuple[str | None, str]:
    """This process's code generator version: (llvmlite, LLVM)."""
    return code_versions()[1:]


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU model name of this host (``/proc/cpuinfo``'s ``model name``; the platform's processor else)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def record_fields(values) -> tuple:
    """``TuningRecord``'s confirmed, codegen and cpu_model fields from the ``RECORD_SQL`` columns."""
    med, p10, p90, llvmlite_v, llvm_v, cpu = values
    confirmed = None if med is None else (med, p10, p90)
    codegen = None if llvm_v is None else (llvmlite_v, llvm_v)
    return confirmed, codegen, cpu


def same_codegen(record) -> bool:
    """Whether a ``TuningRecord`` was built by this process's code generator (unknown counts as the same)."""
    return record.codegen is None or tuple(record.codegen) == codegen_version()
