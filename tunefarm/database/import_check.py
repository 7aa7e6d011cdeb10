"""What an imported export must prove before it is stored: its workloads and traces are real programs.

An export is untrusted input: a record whose trace names an unknown instruction, does not replay on its
workload, or claims a program hash its trace does not produce would become a "best" that nothing can build
(``tunefarm bench``, ``tunefarm.compile`` and ``tune --resume`` would all fail on it later). So an import checks:

* a workload's IR JSON decodes to a PrimFunc whose ``workload_key`` is the key the file gives it;
* a record's trace loads (every instruction kind known, inputs, attributes and decisions well formed) and
  replays on its workload; the structural hash of the scheduled function is the record's program hash
  (a record without one gets it);
* an ``ok`` record's run times are positive, and a ``build_error`` record has none (a failed build never ran);
* no run time is faster than a CPU can go: below ``TIMER_FLOOR_S`` (an indirect call and the timing loop around
  it take longer), or faster than the program's FLOPs at a generous peak of the record's target
  (``peak_flops``: every vector lane of two FMA units per core, each cycle, at ``CLOCK_HZ``, times
  ``PEAK_MARGIN``).

Replaying is deterministic, so results are cached by (IR text, trace text): importing the same records
again, or many records of one trace, replays once.
"""
from __future__ import annotations

import functools
import json
import math

from tunefarm.database.errors import InvalidRecordError, InvalidTraceError
from tunefarm.ir.function import PrimFunc
from tunefarm.ir.serialize import from_json
from tunefarm.ir.structural import program_hash, workload_key
from tunefarm.schedule import Schedule, Trace
from tunefarm.target import Target
from tunefarm.te.flop import estimate_flop

TIMER_FLOOR_S = 2e-9   # one call of a program through the timing loop takes longer than this on any CPU
CLOCK_HZ = 6.0e9       # above any x86-64 core's boost clock
PEAK_MARGIN = 2.0      # room for counting differences (LLVM may fold work the FLOP count includes)
WIDEST_VECTOR_BITS = 512


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(e).__name__}: {first}"[:300]


@functools.lru_cache(maxsize=64)
def workload_func(key: str, ir_text: str) -> PrimFunc:
    """The PrimFunc of a workload line, checked against its key."""
    try:
        func = from_json(json.loads(ir_text))
    except (ValueError, TypeError, RecursionError) as e:
        raise InvalidRecordError(f"workload {key!r}: its IR JSON is not a tunefarm program ({_one_line(e)})") from None
    if not isinstance(func, PrimFunc):
        raise InvalidRecordError(f"workload {key!r}: its IR JSON holds a {type(func).__name__}, not a PrimFunc")
    actual = workload_key(func)
    if actual != key:
        raise InvalidRecordError(f"workload {key!r}: its IR's workload key is {actual}, not the one given")
    return func


@functools.lru_cache(maxsize=4096)
def _replayed_hash(key: str, ir_text: str, trace_text: str) -> str:
    func = workload_func(key, ir_text)
    try:
        trace = Trace.from_json(json.loads(trace_text))
    except (ValueError, TypeError, KeyError, RecursionError) as e:
        raise InvalidTraceError(f"the trace cannot be loaded: {_one_line(e)}") from None
    try:
        sch = Schedule.from_trace(trace, func)
        return program_hash(sch.mod["main"])
    except Exception as e:  # noqa: BLE001 - any failure of an untrusted trace is that record's refusal
        raise InvalidTraceError(f"the trace does not replay on workload {key[:16]}...: {_one_line(e)}") from None


def checked_program_hash(key: str, ir_text: str, trace_text: str, claimed: str | None) -> str:
    """The program hash of the trace replayed on the workload; refuses a record that claims another one."""
    actual = _replayed_hash(key, ir_text, trace_text)
    if claimed is not None and claimed != actual:
        raise InvalidRecordError(f"program_hash {claimed[:40]!r} does not match the trace's program ({actual})")
    return actual


def check_run_secs(status: str, run_secs: list[float]) -> None:
    """An ``ok`` record's run times must be positive (a zero or missing time would make it the best)."""
    if status == "ok" and not all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in run_secs):
        raise InvalidRecordError(f"an ok record needs positive run times, got {run_secs[:8]!r}")


def check_no_run_secs_on_build_error(status: str, run_secs: list[float]) -> None:
    if status == "build_error" and run_secs:
        raise InvalidRecordError(f"a build_error record cannot have run times (its program never ran), got "
                                 f"{run_secs[:8]!r}")


def peak_flops(target_text: str) -> float | None:
    """A generous peak of the target in FLOP/s (see the module doc); None for a target this cannot read.
    A target that lists no features (a named CPU implies them) is taken to have the widest vectors."""
    try:
        target = Target(target_text)
    except (TypeError, ValueError):
        return None
    bits = target.vector_bits if target.features else WIDEST_VECTOR_BITS
    return bits / 32 * 2 * 2 * target.num_cores * CLOCK_HZ * PEAK_MARGIN


@functools.lru_cache(maxsize=64)
def _flop(key: str, ir_text: str) -> float | None:
    try:
        return estimate_flop(workload_func(key, ir_text))
    except (TypeError, ValueError, KeyError, RecursionError):
        return None


def check_latency(key: str, ir_text: str, target_text: str, run_secs: list[float]) -> None:
    """Refuse run times no CPU reaches: below the timer's floor, or above the target's peak FLOP rate."""
    if not run_secs:
        return
    fastest = min(run_secs)
    if fastest < TIMER_FLOOR_S:
        raise InvalidRecordError(f"run time {fastest:g} s is below what can be timed ({TIMER_FLOOR_S:g} s)")
    flop, peak = _flop(key, ir_text), peak_flops(target_text)
    if flop and peak and fastest < flop / peak:
        raise InvalidRecordError(f"run time {fastest:g} s means {flop / fastest / 1e9:,.0f} GFLOP/s, beyond the "
                                 f"{peak / 1e9:,.0f} GFLOP/s no CPU of target {target_text[:60]!r} reaches")
