"""A sampled program: its design trace, the postprocessed schedule, and the hash that identifies it.

The *design trace* is what a space recorded (everything before ``EnterPostproc``); mutation edits its
decisions. The *full trace* adds the postprocessors' primitives; it is what the farm replays and the database
stores. Two traces that produce the same scheduled function share a ``program_hash`` (the structural hash
of the scheduled PrimFunc), which is how the search never measures one program twice.
"""
from __future__ import annotations

from ..ir.function import PrimFunc
from ..ir.structural import program_hash  # noqa: F401 - re-exported: how the search names programs
from ..schedule import Schedule, Trace


def design_part(trace: Trace) -> Trace:
    """The instructions before the first ``EnterPostproc`` (all of them if there is none), with their decisions."""
    for i, inst in enumerate(trace.insts):
        if inst.kind == "EnterPostproc":
            return Trace(trace.insts[:i], {k: v for k, v in trace.decisions.items() if k < i})
    return trace


class Program:
    """One candidate of a task as the worker that built it holds it: design trace, schedule and hash (the
    driver knows it as a ``strategy.Candidate``: plain data)."""

    __slots__ = ("design", "sch", "hash", "_json", "described")

    def __init__(self, design: Trace, sch: Schedule, hash_: str):
        self.design = design
        self.sch = sch
        self.hash = hash_
        self._json = None
        self.described = None      # (full trace text, encoded features, sketch) once a search reply has it

    @property
    def func(self) -> PrimFunc:
        return self.sch.mod["main"]

    @property
    def trace(self) -> Trace:
        return self.sch.trace

    def trace_json(self) -> dict:
        if self._json is None:
            self._json = self.sch.trace.as_json()
        return self._json

    def decisions_key(self) -> tuple:
        return decisions_key(self.design)

    def __repr__(self) -> str:
        return f"Program({self.hash[:12]}, {len(self.design)} design instructions)"


_STRUCTURES: dict = {}  # id(insts tuple) -> (insts tuple kept alive, structure signature)


def sketch_key(trace: Trace) -> str:
    """What a design trace is apart from its decisions: programs with the same key are one *sketch*."""
    return _structure(trace)


def _structure(trace: Trace) -> str:
    insts = trace.insts
    got = _STRUCTURES.get(id(insts))
    if got is None or got[0] is not insts:
        import json

        sig = json.dumps(Trace(insts).as_json()["insts"], separators=(",", ":"))
        if len(_STRUCTURES) > 4096:
            _STRUCTURES.clear()
        got = _STRUCTURES[id(insts)] = (insts, sig)
    return got[1]


def decisions_key(trace: Trace) -> tuple:
    """A hashable summary of a design trace: its instructions and decisions (equal keys, equal programs)."""
    return (_structure(trace),) + tuple((i, tuple(d) if isinstance(d, list) else d)
                                        for i, d in sorted(trace.decisions.items()))
