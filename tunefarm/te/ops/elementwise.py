"""Elementwise operators: broadcasting binary arithmetic (numpy rules) and unary functions."""
from __future__ import annotations

from ...ir import expr as E
from .. import intrin
from ..compute import compute
from ..tensor import Tensor
from .broadcast import broadcast_load, broadcast_shapes


def _operand(x, name: str):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, E.PrimExpr)):
        return x
    raise TypeError(f"{name}: operands must be te Tensors or scalars, got {type(x).__name__}")


def _binary(a, b, fn, name: str) -> Tensor:
    a, b = _operand(a, name), _operand(b, name)
    tensors = [x for x in (a, b) if isinstance(x, Tensor)]
    if not tensors:
        raise TypeError(f"{name}: at least one operand must be a te Tensor")
    shape = broadcast_shapes(*(t.shape for t in tensors))

    def f(*idx):
        return fn(broadcast_load(a, idx), broadcast_load(b, idx))

    return compute(shape, f, name=name)


def add(a, b, name: str = "T_add") -> Tensor:
    """``a + b`` with numpy broadcasting (e.g. (1, 128) + (128,))."""
    return _binary(a, b, lambda x, y: E.add(x, y), name)


def subtract(a, b, name: str = "T_subtract") -> Tensor:
    return _binary(a, b, lambda x, y: E.sub(x, y), name)


def multiply(a, b, name: str = "T_multiply") -> Tensor:
    return _binary(a, b, lambda x, y: E.mul(x, y), name)


def divide(a, b, name: str = "T_divide") -> Tensor:
    """True division; for integer tensors it truncates like C (as TVM's ``divide``)."""
    return _binary(a, b, lambda x, y: E.div(x, y), name)


def maximum(a, b, name: str = "T_maximum") -> Tensor:
    return _binary(a, b, lambda x, y: E.max_(x, y), name)


def minimum(a, b, name: str = "T_minimum") -> Tensor:
    return _binary(a, b, lambda x, y: E.min_(x, y), name)


def _unary(x: Tensor, fn, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a te Tensor, got {type(x).__name__}")
    return compute(x.shape, lambda *i: fn(x(*i)), name=name)


def relu(x: Tensor, name: str = "relu") -> Tensor:
    """``max(x, 0)``, written as in the course's ``te_relu``."""
    return _unary(x, lambda v: E.max_(v, 0), name)


def exp(x: Tensor, name: str = "T_exp") -> Tensor:
    return _unary(x, intrin.exp, name)


def log(x: Tensor, name: str = "T_log") -> Tensor:
    return _unary(x, intrin.log, name)


def sqrt(x: Tensor, name: str = "T_sqrt") -> Tensor:
    return _unary(x, intrin.sqrt, name)


def tanh(x: Tensor, name: str = "T_tanh") -> Tensor:
    return _unary(x, intrin.tanh, name)


def sigmoid(x: Tensor, name: str = "T_sigmoid") -> Tensor:
    return _unary(x, intrin.sigmoid, name)


def negative(x: Tensor, name: str = "T_negative") -> Tensor:
    return _unary(x, lambda v: E.sub(E.const(0, v.dtype), v), name)
