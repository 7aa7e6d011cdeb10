"""``tvm.tir.schedule.Trace`` / ``Instruction``: TVM's shapes over tunefarm's traces.

TVM's trace is mutable (``append`` / ``pop``), keys decisions by instruction, prints as
``def apply_trace(sch: tir.Schedule) -> None:`` and serializes to ``[[insts], [decisions]]``; tunefarm's is
immutable, keyed by position, and its JSON is a dict. This class converts at the edges and replays through
tunefarm's trace (JSON is validated, never executed).
"""
from __future__ import annotations

from ....ir.expr import FloatImm, IntImm
from ....schedule import instruction as _inst
from ....schedule.random_variables import RandomVariable
from ....schedule import trace as _trace

_PURE = frozenset({"GetBlock", "GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers", "SamplePerfectTile",
                   "SampleCategorical", "SampleComputeLocation"})
"""Kinds that only look things up or sample: ``simplified`` drops them when nothing uses their results."""


def _plain(x):
    if isinstance(x, (IntImm, FloatImm)):
        return x.value
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


class Instruction(_inst.Instruction):
    """``Instruction(kind=InstructionKind.get("Split"), inputs=..., attrs=..., outputs=...)``."""

    __slots__ = ()

    def __init__(self, kind, inputs, attrs, outputs):
        name = kind.name if isinstance(kind, _inst.InstructionKind) else kind
        inputs, attrs = list(inputs), [_plain(a) for a in attrs]
        if name == "Split" and len(attrs) == 1:  # v0.16's split had no disable_predication
            attrs.append(False)
        if name == "Annotate" and len(attrs) == 1:  # TVM passes the value as an input, literal or not
            value = inputs.pop()
            inputs.append(value if isinstance(value, RandomVariable) else None)
            attrs.append(None if isinstance(value, RandomVariable) else _plain(value))
        super().__init__(name, inputs, attrs, outputs)

    def same_as(self, other) -> bool:
        return self is other


def _tvm_line(line: str) -> str:
    """TVM v0.16 prints ``split`` without ``disable_predication`` (a later keyword) when it is False."""
    return line.replace(", disable_predication=False)", ")")


class Trace:
    """A list of instructions and the decisions of the sampling ones (``{instruction: decision}``)."""

    def __init__(self, insts=(), decisions=None):
        self.insts = list(insts)
        self.decisions = dict(decisions or {})

    def core(self) -> _trace.Trace:
        """tunefarm's trace of the same instructions and decisions."""
        index = {id(inst): i for i, inst in enumerate(self.insts)}
        return _trace.Trace(self.insts, {index[id(k)]: d for k, d in self.decisions.items() if id(k) in index})

    def get_decision(self, inst):
        return self.decisions.get(inst)

    def append(self, inst, decision=None) -> None:
        self.insts.append(inst)
        if decision is not None:
            self.decisions[inst] = decision

    def pop(self):
        if not self.insts:
            return None
        inst = self.insts.pop()
        self.decisions.pop(inst, None)
        return inst

    def simplified(self, remove_postproc: bool) -> "Trace":
        """Without postprocessing (when asked) and without look-ups and samples nothing uses."""
        insts = list(self.insts)
        if remove_postproc:
            cut = next((i for i, inst in enumerate(insts) if inst.kind == "EnterPostproc"), len(insts))
            insts = insts[:cut]
        used: set = set()
        kept = []
        for inst in reversed(insts):
            if inst.kind in _PURE and not any(o in used for o in inst.outputs):
                continue
            kept.append(inst)
            used.update(_rvs(inst.inputs))
        kept.reverse()
        return Trace(kept, {k: d for k, d in self.decisions.items() if k in kept})

    def as_python(self, remove_postproc: bool = False) -> list[str]:
        trace = self.simplified(True) if remove_postproc else self
        return [_tvm_line(line) for line in trace.core().as_python()]

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        return "\n".join(["# from tvm import tir", "def apply_trace(sch: tir.Schedule) -> None:"]
                         + ["  " + line for line in body])

    def show(self) -> None:
        print(self)

    def as_json(self, remove_postproc: bool = False) -> list:
        trace = self.simplified(True) if remove_postproc else self
        data = trace.core().as_json()
        return [data["insts"], data["decisions"]]

    def apply_to_schedule(self, sch, remove_postproc: bool, decision_provider=None) -> None:
        if decision_provider is not None:
            raise NotImplementedError("decision_provider is not supported; edit decisions with with_decision")
        trace = self.simplified(True) if remove_postproc else self
        trace.core().apply_to_schedule(sch)

    @staticmethod
    def apply_json_to_schedule(json_obj, sch) -> None:
        insts, decisions = json_obj
        _trace.Trace.from_json({"insts": insts, "decisions": decisions}).apply_to_schedule(sch)


def _rvs(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _rvs(v)
        else:
            yield v


__all__ = ["Instruction", "Trace"]
