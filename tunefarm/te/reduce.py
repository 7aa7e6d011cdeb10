"""Reductions: ``te.sum(expr, axis=k)``, ``te.max``, ``te.min``, ``te.prod`` and ``comm_reducer``.

A reduction is a ``Reduce`` expression that must be the whole body of a compute; ``create_prim_func``
turns it into a block with reduction iteration variables, an ``init`` storing the reducer's identity and
an update ``out = combine(out, source)``. ``te.max(a, b)`` without an axis is the elementwise maximum, as
in the course's ``te.max(A(*i), 0)``.
"""
from __future__ import annotations

import numpy as np

from ..ir import expr as E
from ..ir.dtype import is_float
from ..ir.printer import expr_to_str
from .tensor import Axis


def min_value(dtype: str) -> E.PrimExpr:
    """Smallest value of ``dtype`` (``-inf`` for floats): the identity of ``max``."""
    return _extreme(dtype, -1)


def max_value(dtype: str) -> E.PrimExpr:
    """Largest value of ``dtype`` (``+inf`` for floats): the identity of ``min``."""
    return _extreme(dtype, 1)


def _extreme(dtype: str, sign: int) -> E.PrimExpr:
    if is_float(dtype):
        return E.FloatImm(sign * float("inf"), dtype)
    if dtype == "bool":
        return E.const(sign > 0, "bool")
    info = np.iinfo(dtype)
    return E.const(int(info.max if sign > 0 else info.min), dtype)


class CommReducer:
    """A commutative, associative reduction: ``fcombine(lhs, rhs)`` and ``fidentity(dtype)``."""

    def __init__(self, fcombine, fidentity, name: str = "reduce"):
        self.fcombine = fcombine
        self.fidentity = fidentity
        self.name = name

    def combine(self, lhs: E.PrimExpr, rhs: E.PrimExpr) -> E.PrimExpr:
        out = E.as_expr(self.fcombine(lhs, rhs))
        if out.dtype != lhs.dtype:
            out = E.cast(lhs.dtype, out)
        return out

    def identity(self, dtype: str) -> E.PrimExpr:
        v = self.fidentity(dtype)
        return E.as_expr(v, dtype) if not isinstance(v, E.PrimExpr) else v

    def __call__(self, expr, axis=None, where=None):
        if axis is None:
            raise TypeError(f"{self.name}: a reduction needs axis= (one reduce_axis or a list of them)")
        return Reduce(self, expr, axis, where)

    def __repr__(self) -> str:
        return f"CommReducer({self.name})"


def comm_reducer(fcombine, fidentity, name: str = "reduce") -> CommReducer:
    """Define a reduction like TVM's ``te.comm_reducer``: ``r = comm_reducer(lambda x, y: x + y,
    lambda t: const(0, t)); te.compute(..., lambda i: r(A[i, k], axis=k))``."""
    return CommReducer(fcombine, fidentity, name)


def _axes(axis) -> tuple:
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    if not axes:
        raise ValueError("a reduction needs at least one reduce_axis")
    for a in axes:
        if not isinstance(a, Axis) or a.iter_type != "R":
            raise TypeError(f"reduction axis must come from te.reduce_axis, got {a!r}")
    if len(set(axes)) != len(axes):
        raise ValueError("the same reduce_axis appears twice in one reduction")
    return axes


class Reduce(E.PrimExpr):
    """``combiner`` over ``axis`` of ``source`` (where ``where`` holds): only valid as a compute's body."""

    __slots__ = ("combiner", "source", "axis", "where")

    def __init__(self, combiner: CommReducer, source, axis, where=None):
        self.combiner = combiner
        self.source = E.as_expr(source)
        self.axis = _axes(axis)
        self.where = None if where is None else E.as_expr(where, "bool")
        if isinstance(self.source, Reduce):
            raise ValueError("nested reductions are not supported; use two computes")
        self.dtype = self.source.dtype

    def __repr__(self) -> str:
        names = ", ".join(a.name for a in self.axis)
        return f"{self.combiner.name}({expr_to_str(self.source)}, axis=[{names}])"


def _is_axis_arg(x) -> bool:
    if isinstance(x, Axis):
        return True
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(a, Axis) for a in x)


sum_reducer = CommReducer(lambda x, y: E.add(x, y), lambda t: E.const(0, t), "sum")
prod_reducer = CommReducer(lambda x, y: E.mul(x, y), lambda t: E.const(1, t), "prod")
max_reducer = CommReducer(lambda x, y: E.max_(x, y), min_value, "max")
min_reducer = CommReducer(lambda x, y: E.min_(x, y), max_value, "min")


def sum(expr, axis=None, where=None):  # noqa: A001 - TVM's name
    """Sum of ``expr`` over the reduce axes ``axis``."""
    return sum_reducer(expr, axis, where)


def prod(expr, axis=None, where=None):
    return prod_reducer(expr, axis, where)


def max(a, b=None, axis=None, where=None):  # noqa: A001
    """``te.max(expr, axis=k)`` reduces; ``te.max(a, b)`` is the elementwise maximum."""
    return _reduce_or_pair("max", max_reducer, E.max_, a, b, axis, where)


def min(a, b=None, axis=None, where=None):  # noqa: A001
    """``te.min(expr, axis=k)`` reduces; ``te.min(a, b)`` is the elementwise minimum."""
    return _reduce_or_pair("min", min_reducer, E.min_, a, b, axis, where)


def _reduce_or_pair(name: str, reducer: CommReducer, pair, a, b, axis, where):
    """TVM's two-faced ``te.max`` / ``te.min``: a reduction over ``axis`` (also given as the second argument),
    or the elementwise function of two operands."""
    if axis is None and b is not None and _is_axis_arg(b):
        axis, b = b, None
    if axis is not None:
        if b is not None:
            raise TypeError(f"te.{name}: give either a second operand or axis=, not both")
        return reducer(a, axis, where)
    if b is None:
        raise TypeError(f"te.{name} needs a second operand (elementwise) or axis= (reduction)")
    return pair(a, b)
