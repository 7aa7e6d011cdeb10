"""Scalar helpers for fcompute bodies: math intrinsics, ``if_then_else``, literals and casts."""
from __future__ import annotations

from ..ir import expr as E
from ..ir.dtype import is_float


def _float_arg(fn: str, x) -> E.PrimExpr:
    x = E.as_expr(x)
    if not is_float(x.dtype):
        raise TypeError(f"te.{fn} needs a float argument, got {x!r} of dtype {x.dtype} (cast it first)")
    return x


def exp(x):
    return E.Call("exp", (_float_arg("exp", x),))


def log(x):
    return E.Call("log", (_float_arg("log", x),))


def sqrt(x):
    return E.Call("sqrt", (_float_arg("sqrt", x),))


def tanh(x):
    return E.Call("tanh", (_float_arg("tanh", x),))


def sigmoid(x):
    return E.Call("sigmoid", (_float_arg("sigmoid", x),))


def erf(x):
    return E.Call("erf", (_float_arg("erf", x),))


def floor(x):
    return E.Call("floor", (_float_arg("floor", x),))


def ceil(x):
    return E.Call("ceil", (_float_arg("ceil", x),))


def round(x):  # noqa: A001 - TVM's name
    return E.Call("round", (_float_arg("round", x),))


def abs(x):  # noqa: A001
    x = E.as_expr(x)
    return E.Call("fabs" if is_float(x.dtype) else "abs", (x,))


def power(x, y):
    x = _float_arg("power", x)
    return E.Call("pow", (x, E.as_expr(y, x.dtype)))


def if_then_else(cond, t, f):
    """``t`` where ``cond`` holds, else ``f`` (an IR ``Select``).

    Compiled code may evaluate both sides, so both must be safe to evaluate: keep loads in bounds (clamp
    the indices, as ``ops.nn`` does for padding) rather than relying on ``cond`` to guard them.
    """
    return E.select(cond, t, f)


def const(value, dtype: str | None = None):
    return E.const(value, dtype)


def cast(x, dtype: str):
    return E.cast(dtype, x)


def floordiv(a, b):
    return E.floordiv(a, b)


def floormod(a, b):
    return E.floormod(a, b)


def all(*conds):  # noqa: A001
    out = E.const(True, "bool")
    for c in conds:
        out = E.logical_and(out, c)
    return out


def any(*conds):  # noqa: A001
    out = E.const(False, "bool")
    for c in conds:
        out = E.logical_or(out, c)
    return out
