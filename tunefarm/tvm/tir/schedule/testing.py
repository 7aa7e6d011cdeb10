"""``tvm.tir.schedule.testing``: the two helpers TVM's schedule tests use."""
from __future__ import annotations

from ...ir.structural import assert_structural_equal
from ....schedule import Trace
from ....schedule.trace_python import apply_python
from .schedule import Schedule


def assert_structural_equal_ignore_global_symbol(func1, func2, *args, **kwargs) -> None:
    """Structural equality of two PrimFuncs whatever their names (``global_symbol``)."""
    assert_structural_equal(func1.with_attr("global_symbol", "main"), func2.with_attr("global_symbol", "main"),
                            *args, **kwargs)


def verify_trace_roundtrip(sch, mod, *, debug_mask="all", text_format=("python", "json")):
    """Replay ``sch``'s trace on a fresh schedule of ``mod`` from its JSON and from its Python text (read as data,
    never executed) and check both give the same module and print the same trace; returns the last replay."""
    if not isinstance(text_format, str):
        new_sch = None
        for fmt in text_format:
            new_sch = verify_trace_roundtrip(sch, mod, debug_mask=debug_mask, text_format=fmt)
        return new_sch
    trace = sch.trace
    new_sch = Schedule(mod, debug_mask=debug_mask)
    if text_format == "json":
        Trace.from_json(trace.as_json()).apply_to_schedule(new_sch)
    elif text_format == "python":
        apply_python(trace.as_python(), new_sch)
    else:
        raise ValueError(f"unknown text format {text_format!r} (expected 'python' or 'json')")
    assert_structural_equal(new_sch.mod, sch.mod)
    assert trace.as_python() == new_sch.trace.as_python()
    return new_sch


__all__ = ["assert_structural_equal_ignore_global_symbol", "verify_trace_roundtrip"]
