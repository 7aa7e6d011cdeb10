"""Instructions and the one registry of instruction kinds.

A trace is a list of ``Instruction(kind, inputs, attrs, outputs)``. ``inputs`` hold random variables and
plain numbers (``None``, ints, floats, lists of those); ``attrs`` hold JSON scalars and lists; ``outputs``
are the random variables the call created. Everything a kind needs -- the Schedule method it replays, the
shape of its inputs/attributes/outputs (used to validate traces loaded from JSON), and how it prints as a
line of Python -- is declared once, in ``INSTRUCTION_KINDS`` below. Adding a primitive means adding one
entry there and one Schedule method.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

from .random_variables import RandomVariable


class Instruction:
    """One recorded schedule call. Immutable by convention; ``kind`` is the kind's name (e.g. ``"Split"``)."""

    __slots__ = ("kind", "inputs", "attrs", "outputs")

    def __init__(self, kind: str, inputs, attrs, outputs):
        self.kind = kind
        self.inputs = tuple(inputs)
        self.attrs = tuple(attrs)
        self.outputs = tuple(outputs)

    @property
    def spec(self) -> "InstructionKind":
        return INSTRUCTION_KINDS[self.kind]

    def __repr__(self) -> str:
        return f"Instruction({self.kind}, inputs={list(self.inputs)!r}, attrs={list(self.attrs)!r}, " \
               f"outputs={len(self.outputs)})"


# --------------------------------------------------------------------------------------------------------
# Attribute checkers (used to validate loaded traces; they return an error text or None)
# --------------------------------------------------------------------------------------------------------
def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x) -> bool:
    return (_is_int(x) or isinstance(x, float)) and not (isinstance(x, float) and not math.isfinite(x))


def check_str(x):
    return None if isinstance(x, str) else "a string"


def check_bool(x):
    return None if isinstance(x, bool) else "true or false"


def check_int(x):
    return None if _is_int(x) else "an integer"


def check_int_list(x):
    return None if isinstance(x, (list, tuple)) and all(_is_int(v) for v in x) and x else "a non-empty list of integers"


def check_num_list(x):
    return None if isinstance(x, (list, tuple)) and all(_is_num(v) for v in x) and x else "a non-empty list of numbers"


def check_ann_literal(x):
    return None if x is None or isinstance(x, (str, bool)) or _is_num(x) else "null, a number, a string or a bool"


# --------------------------------------------------------------------------------------------------------
# Python rendering
# --------------------------------------------------------------------------------------------------------
def py_literal(x) -> str:
    """A value as Python source (strings with double quotes, like TVM's printed traces)."""
    if x is None:
        return "None"
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, (int, float)):
        return repr(x)
    if isinstance(x, str):
        return json.dumps(x)
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(py_literal(v) for v in x) + "]"
    raise TypeError(f"cannot print {type(x).__name__} in a trace")


def render_input(x, names: dict) -> str:
    if isinstance(x, RandomVariable):
        return names[x]
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(render_input(v, names) for v in x) + "]"
    return py_literal(x)


# --------------------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InstructionKind:
    """How one kind of instruction is validated, replayed and printed.

    ``inputs`` lists input types ("block", "loop", "block_or_loop", "factor" = ExprRV/int/None,
    "expr_or_none" = ExprRV/None); a type ending in ``+`` takes the rest of the inputs (at least one).
    ``attrs`` pairs each attribute name with a checker. ``outputs`` is the output RV type ("" for none) and
    ``n_outputs(inputs, attrs)`` the expected count (None = any, known only when replayed). ``returns_list``
    says whether the Python method returns a list (printed ``a, b = ...``) or one value.
    """

    name: str
    method: str
    inputs: tuple
    attrs: tuple
    outputs: str
    n_outputs: Callable[[tuple, tuple], int | None]
    apply: Callable[[Any, tuple, tuple, Any], Any]
    call_args: Callable[[list, tuple, Any], list]  # rendered inputs, attrs, decision -> ["k=v", ...]
    returns_list: bool = False
    sampling: bool = False
    check_decision: Callable[[Any, tuple], str | None] | None = None

    @staticmethod
    def get(name: str) -> "InstructionKind":
        """The registered kind called ``name`` (TVM's ``InstructionKind.get``)."""
        try:
            return INSTRUCTION_KINDS[name]
        except KeyError:
            raise ValueError(f"unknown instruction kind {name!r}; known: {sorted(INSTRUCTION_KINDS)}") from None

    def to_python(self, inst: Instruction, names: dict, decision=None) -> str:
        rendered = [render_input(x, names) for x in inst.inputs]
        args = ", ".join(self.call_args(rendered, inst.attrs, decision))
        call = f"sch.{self.method}({args})"
        outs = [names[o] for o in inst.outputs]
        if not outs:
            return call
        if self.returns_list:
            lhs = outs[0] + "," if len(outs) == 1 else ", ".join(outs)
        else:
            lhs = outs[0]
        return f"{lhs} = {call}"


def _fixed(n: int):
    return lambda inputs, attrs: n


def _any(inputs, attrs):
    return None


def _kw(name: str, value: str) -> str:
    return f"{name}={value}"


def _decision_tile(decision, attrs):
    n = attrs[0]
    if not isinstance(decision, (list, tuple)) or len(decision) != n or not all(_is_int(d) for d in decision):
        return f"a list of {n} integers"
    return None


def _decision_int(decision, attrs):
    return None if _is_int(decision) else "an integer"


def _list_to_py(items: list) -> str:
    return "[" + ", ".join(items) + "]"


def _annotate_value(rendered, attrs):
    return rendered[1] if rendered[1] != "None" else py_literal(attrs[1])


def _on_rvs(kind: str, method: str, names: tuple, output: str, n_outputs, returns_list: bool = False):
    """An instruction whose arguments are only random variables, passed by keyword: ``names`` are both the
    keywords and the input kinds (``sch.parallel(loop=l1)``, ``sch.decompose_padding(block=b0, loop=l1)``)."""
    return InstructionKind(
        kind, method, names, (), output, n_outputs, returns_list=returns_list,
        apply=lambda s, i, a, d: getattr(s, method)(**dict(zip(names, i))),
        call_args=lambda r, a, d: [_kw(k, v) for k, v in zip(names, r)])


_KINDS = [
    InstructionKind(
        "GetBlock", "get_block", (), (("name", check_str), ("func_name", check_str)), "block", _fixed(1),
        apply=lambda s, i, a, d: s.get_block(name=a[0], func_name=a[1]),
        call_args=lambda r, a, d: [_kw("name", py_literal(a[0])), _kw("func_name", py_literal(a[1]))]),
    _on_rvs("GetLoops", "get_loops", ("block",), "loop", _any, returns_list=True),
    InstructionKind(
        "GetChildBlocks", "get_child_blocks", ("block_or_loop",), (), "block", _any, returns_list=True,
        apply=lambda s, i, a, d: s.get_child_blocks(i[0]),
        call_args=lambda r, a, d: [r[0]]),
    _on_rvs("GetProducers", "get_producers", ("block",), "block", _any, returns_list=True),
    _on_rvs("GetConsumers", "get_consumers", ("block",), "block", _any, returns_list=True),
    InstructionKind(
        "Split", "split", ("loop", "factor+"),
        (("preserve_unit_iters", check_bool), ("disable_predication", check_bool)),
        "loop", lambda i, a: len(i) - 1, returns_list=True,
        apply=lambda s, i, a, d: s.split(loop=i[0], factors=list(i[1:]), preserve_unit_iters=a[0],
                                         disable_predication=a[1]),
        call_args=lambda r, a, d: [_kw("loop", r[0]), _kw("factors", _list_to_py(r[1:])),
                                   _kw("preserve_unit_iters", py_literal(a[0])),
                                   _kw("disable_predication", py_literal(a[1]))]),
    InstructionKind(
        "Fuse", "fuse", ("loop+",), (("preserve_unit_iters", check_bool),), "loop", _fixed(1),
        apply=lambda s, i, a, d: s.fuse(*i, preserve_unit_iters=a[0]),
        call_args=lambda r, a, d: [*r, _kw("preserve_unit_iters", py_literal(a[0]))]),
    InstructionKind(
        "Reorder", "reorder", ("loop+",), (), "", _fixed(0),
        apply=lambda s, i, a, d: s.reorder(*i),
        call_args=lambda r, a, d: list(r)),
    _on_rvs("AddUnitLoop", "add_unit_loop", ("block_or_loop",), "loop", _fixed(1)),
    InstructionKind(
        "Blockize", "blockize", ("loop",), (("preserve_unit_iters", check_bool),), "block", _fixed(1),
        apply=lambda s, i, a, d: s.blockize(target=i[0], preserve_unit_iters=a[0]),
        call_args=lambda r, a, d: [_kw("target", r[0]), _kw("preserve_unit_iters", py_literal(a[0]))]),
    _on_rvs("Parallel", "parallel", ("loop",), "", _fixed(0)),
    _on_rvs("Vectorize", "vectorize", ("loop",), "", _fixed(0)),
    _on_rvs("Unroll", "unroll", ("loop",), "", _fixed(0)),
    _on_rvs("ComputeInline", "compute_inline", ("block",), "", _fixed(0)),
    _on_rvs("ReverseComputeInline", "reverse_compute_inline", ("block",), "", _fixed(0)),
    InstructionKind(
        "ComputeAt", "compute_at", ("block", "loop"), (("preserve_unit_loops", check_bool),), "", _fixed(0),
        apply=lambda s, i, a, d: s.compute_at(block=i[0], loop=i[1], preserve_unit_loops=a[0]),
        call_args=lambda r, a, d: [_kw("block", r[0]), _kw("loop", r[1]),
                                   _kw("preserve_unit_loops", py_literal(a[0]))]),
    InstructionKind(
        "ReverseComputeAt", "reverse_compute_at", ("block", "loop"), (("preserve_unit_loops", check_bool),), "",
        _fixed(0),
        apply=lambda s, i, a, d: s.reverse_compute_at(block=i[0], loop=i[1], preserve_unit_loops=a[0]),
        call_args=lambda r, a, d: [_kw("block", r[0]), _kw("loop", r[1]),
                                   _kw("preserve_unit_loops", py_literal(a[0]))]),
    *[InstructionKind(
        kind, method, ("block",), ((index_name, check_int), ("storage_scope", check_str)), "block", _fixed(1),
        apply=lambda s, i, a, d, method=method: getattr(s, method)(i[0], a[0], a[1]),
        call_args=lambda r, a, d, index_name=index_name: [
            _kw("block", r[0]), _kw(index_name, py_literal(a[0])), _kw("storage_scope", py_literal(a[1]))])
      for kind, method, index_name in (("CacheRead", "cache_read", "read_buffer_index"),
                                       ("CacheWrite", "cache_write", "write_buffer_index"))],
    *[InstructionKind(
        kind, method, ("block",), ((index_name, check_int), ("storage_scope", check_str), ("index_map", check_str)),
        "block", _fixed(1),
        apply=lambda s, i, a, d, method=method: getattr(s, method)(i[0], a[0], a[1], a[2]),
        # the map prints as the lambda it is (TVM's form); replaying the text reads it as data
        call_args=lambda r, a, d, index_name=index_name: [
            _kw("block", r[0]), _kw(index_name, py_literal(a[0])), _kw("storage_scope", py_literal(a[1])),
            _kw("index_map", a[2])])
      for kind, method, index_name in (("ReindexCacheRead", "reindex_cache_read", "read_buffer_index"),
                                       ("ReindexCacheWrite", "reindex_cache_write", "write_buffer_index"))],
    _on_rvs("DecomposePadding", "decompose_padding", ("block", "loop"), "block", _fixed(1)),
    _on_rvs("DecomposeReduction", "decompose_reduction", ("block", "loop"), "block", _fixed(1)),
    InstructionKind(
        "RFactor", "rfactor", ("loop",), (("factor_axis", check_int),), "block", _fixed(1),
        apply=lambda s, i, a, d: s.rfactor(loop=i[0], factor_axis=a[0]),
        call_args=lambda r, a, d: [_kw("loop", r[0]), _kw("factor_axis", py_literal(a[0]))]),
    InstructionKind(
        # the value is an input when it is a sampled ExprRV, an attribute when it is a literal
        "Annotate", "annotate", ("block_or_loop", "expr_or_none"),
        (("ann_key", check_str), ("ann_val", check_ann_literal)), "", _fixed(0),
        apply=lambda s, i, a, d: s.annotate(block_or_loop=i[0], ann_key=a[0],
                                            ann_val=i[1] if i[1] is not None else a[1]),
        call_args=lambda r, a, d: [_kw("block_or_loop", r[0]), _kw("ann_key", py_literal(a[0])),
                                   _kw("ann_val", _annotate_value(r, a))]),
    InstructionKind(
        "Unannotate", "unannotate", ("block_or_loop",), (("ann_key", check_str),), "", _fixed(0),
        apply=lambda s, i, a, d: s.unannotate(block_or_loop=i[0], ann_key=a[0]),
        call_args=lambda r, a, d: [_kw("block_or_loop", r[0]), _kw("ann_key", py_literal(a[0]))]),
    InstructionKind(
        "SamplePerfectTile", "sample_perfect_tile", ("loop",),
        (("n", check_int), ("max_innermost_factor", check_int)), "expr", lambda i, a: a[0], returns_list=True,
        sampling=True, check_decision=_decision_tile,
        apply=lambda s, i, a, d: s.sample_perfect_tile(loop=i[0], n=a[0], max_innermost_factor=a[1], decision=d),
        call_args=lambda r, a, d: [_kw("loop", r[0]), _kw("n", py_literal(a[0])),
                                   _kw("max_innermost_factor", py_literal(a[1])), _kw("decision", py_literal(d))]),
    InstructionKind(
        "SampleCategorical", "sample_categorical", (), (("candidates", check_int_list), ("probs", check_num_list)),
        "expr", _fixed(1), sampling=True, check_decision=_decision_int,
        apply=lambda s, i, a, d: s.sample_categorical(candidates=list(a[0]), probs=list(a[1]), decision=d),
        call_args=lambda r, a, d: [_kw("candidates", py_literal(a[0])), _kw("probs", py_literal(a[1])),
                                   _kw("decision", py_literal(d))]),
    InstructionKind(
        "SampleComputeLocation", "sample_compute_location", ("block",), (), "loop", _fixed(1), sampling=True,
        check_decision=_decision_int,
        apply=lambda s, i, a, d: s.sample_compute_location(block=i[0], decision=d),
        call_args=lambda r, a, d: [_kw("block", r[0]), _kw("decision", py_literal(d))]),
    InstructionKind(
        "EnterPostproc", "enter_postproc", (), (), "", _fixed(0),
        apply=lambda s, i, a, d: s.enter_postproc(),
        call_args=lambda r, a, d: []),
]

INSTRUCTION_KINDS: dict[str, InstructionKind] = {k.name: k for k in _KINDS}
"""Every instruction kind, by name (the names MetaSchedule uses in its trace JSON)."""
