"""Validation and canonical text of trace JSON.

Traces arrive from other processes and other machines (imports), so the database checks their *shape*
before storing them: a list of instructions ``[kind: str, inputs: list, attrs: list | dict, outputs: list]``,
optionally wrapped as ``{"insts": [...], "decisions": [[inst_index, decision], ...]}``. It never interprets
them further: a trace is data, and loading one never executes Python (no pickle, no eval).
"""
from __future__ import annotations

import json
from typing import Any

from tunefarm.database.errors import InvalidTraceError

_SEQ = (list, tuple)


def _type(x: Any) -> str:
    return type(x).__name__


def validate_trace(trace: Any) -> None:
    """Raise :class:`InvalidTraceError` unless ``trace`` has the trace JSON shape (see module doc)."""
    if isinstance(trace, dict):
        unknown = sorted(set(trace) - {"insts", "decisions"})
        if unknown or "insts" not in trace:
            raise InvalidTraceError(
                "a wrapped trace must be {\"insts\": [...], \"decisions\": [...]}; "
                f"got keys {sorted(map(str, trace))!r}")
        insts, decisions = trace["insts"], trace.get("decisions", [])
    elif isinstance(trace, _SEQ):
        insts, decisions = trace, []
    else:
        raise InvalidTraceError(
            f"a trace must be a list of [kind, inputs, attrs, outputs] instructions, got {_type(trace)}")
    if not isinstance(insts, _SEQ):
        raise InvalidTraceError(f"trace 'insts' must be a list, got {_type(insts)}")
    for i, inst in enumerate(insts):
        if not isinstance(inst, _SEQ) or len(inst) != 4:
            raise InvalidTraceError(
                f"trace instruction {i} must be [kind, inputs, attrs, outputs], got {_short(inst)}")
        kind, inputs, attrs, outputs = inst
        if not isinstance(kind, str) or not kind:
            raise InvalidTraceError(f"trace instruction {i}: kind must be a non-empty string, got {_short(kind)}")
        if not isinstance(inputs, _SEQ):
            raise InvalidTraceError(f"trace instruction {i} ({kind}): inputs must be a list, got {_type(inputs)}")
        if not isinstance(attrs, (*_SEQ, dict)):
            raise InvalidTraceError(
                f"trace instruction {i} ({kind}): attrs must be a list or a dict, got {_type(attrs)}")
        if not isinstance(outputs, _SEQ):
            raise InvalidTraceError(f"trace instruction {i} ({kind}): outputs must be a list, got {_type(outputs)}")
    if not isinstance(decisions, _SEQ):
        raise InvalidTraceError(f"trace 'decisions' must be a list, got {_type(decisions)}")
    seen: set[int] = set()
    for j, dec in enumerate(decisions):
        if not isinstance(dec, _SEQ) or len(dec) != 2:
            raise InvalidTraceError(f"trace decision {j} must be [inst_index, decision], got {_short(dec)}")
        idx = dec[0]
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < len(insts):
            raise InvalidTraceError(
                f"trace decision {j}: inst_index must be an integer in [0, {len(insts)}), got {_short(idx)}")
        if idx in seen:
            raise InvalidTraceError(f"trace decision {j}: instruction {idx} has two decisions")
        seen.add(idx)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def trace_to_text(trace: Any) -> str:
    """Validate a trace (a JSON value, JSON text, or an object with ``to_json()``) and return JSON text.

    Text is stored as given once it parses as standard JSON (no NaN / Infinity) into a valid trace: a tuning
    job's traces arrive as the workers' compact text, and encoding them again was a twentieth of the driver's
    CPU per trial."""
    if hasattr(trace, "to_json") and callable(trace.to_json):
        trace = trace.to_json()
    if isinstance(trace, (str, bytes)):
        try:
            text = trace if isinstance(trace, str) else trace.decode("utf-8")
            parsed = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError) as e:
            raise InvalidTraceError(f"trace text is not valid JSON: {e}") from None
        validate_trace(parsed)
        return text
    validate_trace(trace)
    try:
        return json.dumps(trace, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InvalidTraceError(f"trace is not plain JSON data: {e}") from None


def trace_from_text(text: str) -> Any:
    """Parse stored trace text (plain ``json.loads``: data only)."""
    return json.loads(text)


def _short(x: Any, limit: int = 60) -> str:
    s = repr(x)
    return s if len(s) <= limit else s[: limit - 3] + "..."
