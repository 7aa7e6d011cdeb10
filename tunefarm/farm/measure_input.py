"""MeasureInput: one (workload, trace) pair to build, validate and time, as plain data (what
``Measurer.measure`` takes; a tuning job's candidates are ``search.strategy.Candidate``, measured from the
workers' own caches).

A measure input crosses process and machine boundaries, so it holds JSON (the workload as serialized by
``tunefarm.ir.serialize.to_json``, the trace as ``Trace.to_json``) and plain numbers, never live IR objects.
The workload JSON may be given as a dict or as its JSON text: the farms encode it to text once per workload
and send the same string with every trial, which is much cheaper than re-serializing a nested dict.
"""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Any


_WIRE_FIELDS = 12
_OLD_WIRE_FIELDS = 11  # before ``stop_above_s``: still accepted (no early stop)


class MeasureInputError(ValueError):
    """A measure input's fields are malformed (names the field and what is wrong)."""


@dataclasses.dataclass
class MeasureInput:
    """What to measure and how.

    - ``workload_key``: stable key of the unscheduled PrimFunc (``tunefarm.ir.structural.workload_key``);
      workers cache the parsed workload, its inputs and its reference output under it.
    - ``workload_json``: the unscheduled PrimFunc (dict or JSON text).
    - ``trace_json``: the schedule trace to replay on it (the ``Trace.to_json`` value, or its JSON text).
    - ``target``: canonical target string (``str(Target)``) the program is built for.
    - ``timeout_s``: wall-clock budget of this trial (replay + build + check + timing), excluding time spent
      waiting for the host's measurement lock and computing the per-workload reference (see measure.py).
    - ``number`` / ``repeat`` / ``min_repeat_ms``: passed to ``time_evaluator`` (``repeat`` timings, each the
      mean of ``number`` calls, ``number`` raised until one timing lasts ``min_repeat_ms``).
    - ``check``: compare the output with the unscheduled function's before timing.
    - ``task``: a human name for metrics and logs (defaults to the workload key).
    - ``reference_json``: optional program (dict or JSON text, same parameters as the workload) whose output
      defines "correct"; by default the unscheduled workload itself (tinygrad-style validation). Useful to
      check a hand-written kernel against a simple one.
    - ``stop_above_s``: optional early stop of the timing (seconds per call). A candidate whose check run
      (``perf_counter`` around it) and first two timed repeats all take longer than this gets no further
      repeats: its ``run_secs`` holds those two timings (real, under the host lock) instead of ``repeat``, and
      the check run served as its warm-up call. Without ``check`` the repeats alone decide. The tuner sets it
      to a multiple of the task's best latency so far: a program several times slower than the best cannot
      become the best, and its repeats were most of the measurement time of slow kernels.
    """

    workload_key: str
    workload_json: Any
    trace_json: Any
    target: str
    timeout_s: float = 10.0
    number: int = 1
    repeat: int = 3
    min_repeat_ms: float = 0.0
    check: bool = True
    task: str = ""
    reference_json: Any = None
    stop_above_s: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.workload_key, str) or not self.workload_key:
            raise MeasureInputError(f"workload_key must be a non-empty string, got {self.workload_key!r}")
        if not isinstance(self.workload_json, (dict, str)):
            raise MeasureInputError("workload_json must be a dict or its JSON text, got "
                                 f"{type(self.workload_json).__name__}")
        if self.trace_json is None:
            raise MeasureInputError("trace_json is missing (use the empty trace's JSON for the unscheduled program)")
        if not isinstance(self.target, str) or not self.target.strip():
            raise MeasureInputError(f"target must be a target string such as 'llvm -num-cores=1', got {self.target!r}")
        if not isinstance(self.timeout_s, (int, float)) or not math.isfinite(self.timeout_s) or self.timeout_s <= 0:
            raise MeasureInputError(f"timeout_s must be a positive number of seconds, got {self.timeout_s!r}")
        for name in ("number", "repeat"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise MeasureInputError(f"{name} must be an integer >= 1, got {v!r}")
        if not isinstance(self.min_repeat_ms, (int, float)) or self.min_repeat_ms < 0:
            raise MeasureInputError(f"min_repeat_ms must be >= 0, got {self.min_repeat_ms!r}")
        if self.reference_json is not None and not isinstance(self.reference_json, (dict, str)):
            raise MeasureInputError("reference_json must be None, a dict or its JSON text, got "
                                 f"{type(self.reference_json).__name__}")
        if self.stop_above_s is not None and (
                not isinstance(self.stop_above_s, (int, float)) or isinstance(self.stop_above_s, bool)
                or not math.isfinite(self.stop_above_s) or self.stop_above_s <= 0):
            raise MeasureInputError(f"stop_above_s must be None or a positive number of seconds, got "
                                 f"{self.stop_above_s!r}")
        if not isinstance(self.task, str):
            raise MeasureInputError(f"task must be a string, got {type(self.task).__name__}")
        if not self.task:
            self.task = self.workload_key

    # ------------------------------------------------------------------ views used by workers
    def workload_dict(self) -> dict:
        """The workload JSON as a dict (parsing the text form when needed)."""
        return _as_dict(self.workload_json, "workload_json")

    def trace_value(self) -> Any:
        """The trace JSON value (parsing the text form when needed)."""
        if isinstance(self.trace_json, str):
            try:
                return json.loads(self.trace_json)
            except json.JSONDecodeError as e:
                raise MeasureInputError(f"trace_json is not valid JSON: {e}") from None
        return self.trace_json

    # ------------------------------------------------------------------ wire form (plain tuple)
    def to_wire(self, workload_text: str | None = None) -> tuple:
        """A flat tuple of plain values for sending to a worker; ``workload_text`` replaces the workload."""
        return (self.workload_key, workload_text if workload_text is not None else self.workload_json,
                self.trace_json, self.target, float(self.timeout_s), self.number, self.repeat,
                float(self.min_repeat_ms), bool(self.check), self.task, self.reference_json,
                None if self.stop_above_s is None else float(self.stop_above_s))

    @classmethod
    def from_wire(cls, wire: tuple) -> "MeasureInput":
        if not isinstance(wire, (tuple, list)) or len(wire) not in (_WIRE_FIELDS, _OLD_WIRE_FIELDS):
            raise MeasureInputError(f"a wire measure input is a {_WIRE_FIELDS}-tuple made by MeasureInput.to_wire")
        return cls(*wire)

    @classmethod
    def from_payload(cls, payload: list, shared) -> "MeasureInput":
        """The candidate of a measure work item: its wire form (``to_wire("")``), whose workload text travels
        in the item's shared texts under the workload key (each worker receives it once)."""
        if not isinstance(payload, list) or not payload or not isinstance(payload[0], str):
            raise MeasureInputError("a measure payload is the list MeasureInput.to_wire('') makes")
        wire = list(payload)
        try:
            wire[1] = shared[wire[0]]
        except KeyError:
            raise MeasureInputError(f"the workload text of {wire[0]!r} did not reach this worker") from None
        return cls.from_wire(wire)

    def with_workload_text(self) -> "MeasureInput":
        """A copy whose workload is JSON text (what farms send)."""
        if isinstance(self.workload_json, str):
            return self
        return dataclasses.replace(self, workload_json=json.dumps(self.workload_json, separators=(",", ":")))


def _as_dict(value, field: str) -> dict:
    if isinstance(value, str):
        try:
            d = json.loads(value)
        except json.JSONDecodeError as e:
            raise MeasureInputError(f"{field} is not valid JSON: {e}") from None
        if not isinstance(d, dict):
            raise MeasureInputError(f"{field} text must encode a JSON object")
        return d
    return value
