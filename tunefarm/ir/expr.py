"""Scalar expressions of the tensor IR.

Nodes are immutable by convention (never assign to a field after construction) so that schedules can share
subtrees and copy in O(1). Equality and hashing are by identity; use ``structural_equal`` to compare shapes.
Arithmetic operators build nodes, folding constants on the way so that schedules do not pile up ``x * 1 + 0``.
"""
from __future__ import annotations

import itertools
import math

from .dtype import DType, is_float, result_dtype

_var_ids = itertools.count()


class PrimExpr:
    """Base of all scalar expressions. ``dtype`` is a string such as ``"float32"`` or ``"int64"``."""

    __slots__ = ("dtype",)
    _fields: tuple[str, ...] = ()

    # --- operator sugar (used by te lambdas, schedules and tests) ---
    def __add__(self, o):
        return add(self, o)

    def __radd__(self, o):
        return add(o, self)

    def __sub__(self, o):
        return sub(self, o)

    def __rsub__(self, o):
        return sub(o, self)

    def __mul__(self, o):
        return mul(self, o)

    def __rmul__(self, o):
        return mul(o, self)

    def __truediv__(self, o):
        return div(self, o)

    def __rtruediv__(self, o):
        return div(o, self)

    def __floordiv__(self, o):
        return floordiv(self, o)

    def __rfloordiv__(self, o):
        return floordiv(o, self)

    def __mod__(self, o):
        return floormod(self, o)

    def __rmod__(self, o):
        return floormod(o, self)

    def __neg__(self):
        return sub(const(0, self.dtype), self)

    def __lt__(self, o):
        return Binary("<", self, as_expr(o, self.dtype))

    def __le__(self, o):
        return Binary("<=", self, as_expr(o, self.dtype))

    def __gt__(self, o):
        return Binary(">", self, as_expr(o, self.dtype))

    def __ge__(self, o):
        return Binary(">=", self, as_expr(o, self.dtype))

    def equal(self, o) -> "PrimExpr":
        """Build ``self == o`` (Python's ``==`` stays identity so nodes can key dicts)."""
        return Binary("==", self, as_expr(o, self.dtype))

    def __bool__(self):
        raise TypeError(f"cannot use a symbolic expression as a Python bool: {self!r}")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from .printer import expr_to_str  # cycle: printer imports this module

        return expr_to_str(self)

    def astype(self, dtype: str) -> "PrimExpr":
        return cast(dtype, self)


class Var(PrimExpr):
    """A named scalar variable: loop variable, block iteration variable or symbolic dimension.

    Identity matters: two ``Var("i")`` are different variables. ``uid`` gives a creation order for
    deterministic sorting.
    """

    __slots__ = ("name", "uid")

    def __init__(self, name: str, dtype: DType = "int32"):
        self.name = name
        self.dtype = dtype
        self.uid = next(_var_ids)

    def copy_with_name(self, name: str | None = None) -> "Var":
        return Var(self.name if name is None else name, self.dtype)


class IntImm(PrimExpr):
    __slots__ = ("value",)

    def __init__(self, value: int, dtype: DType = "int32"):
        self.value = int(value)
        self.dtype = dtype

    def __int__(self) -> int:
        """``int(shape[0])``, as TVM's constants allow."""
        return self.value


class FloatImm(PrimExpr):
    __slots__ = ("value",)

    def __init__(self, value: float, dtype: DType = "float32"):
        self.value = float(value)
        self.dtype = dtype


BINARY_OPS = ("+", "-", "*", "/", "//", "%", "min", "max", "==", "!=", "<", "<=", ">", ">=", "and", "or")
COMPARE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
LOGIC_OPS = frozenset({"and", "or"})


class Binary(PrimExpr):
    """``a op b``. ``/`` is true division (floats); ``//`` and ``%`` are floor division and modulo."""

    __slots__ = ("op", "a", "b")
    _fields = ("a", "b")

    def __init__(self, op: str, a: PrimExpr, b: PrimExpr):
        if op not in BINARY_OPS:
            raise ValueError(f"unknown binary operator {op!r}")
        self.op = op
        self.a = a
        self.b = b
        self.dtype = "bool" if (op in COMPARE_OPS or op in LOGIC_OPS) else result_dtype(a.dtype, b.dtype)


class Not(PrimExpr):
    __slots__ = ("a",)
    _fields = ("a",)

    def __init__(self, a: PrimExpr):
        self.a = a
        self.dtype = "bool"


class Select(PrimExpr):
    """``true_value if cond else false_value`` (both sides may be evaluated)."""

    __slots__ = ("cond", "true_value", "false_value")
    _fields = ("cond", "true_value", "false_value")

    def __init__(self, cond: PrimExpr, true_value: PrimExpr, false_value: PrimExpr):
        self.cond = cond
        self.true_value = true_value
        self.false_value = false_value
        self.dtype = result_dtype(true_value.dtype, false_value.dtype)


class Cast(PrimExpr):
    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, dtype: DType, value: PrimExpr):
        self.dtype = dtype
        self.value = value


# Intrinsic math functions a Call may name; all take and return floats of one dtype.
INTRINSICS = frozenset({"exp", "log", "sqrt", "tanh", "sigmoid", "fabs", "abs", "floor", "ceil", "round",
                        "sin", "cos", "erf", "pow"})


class Call(PrimExpr):
    """A call to a math intrinsic (``exp``, ``sqrt``, ...)."""

    __slots__ = ("op", "args")
    _fields = ("args",)

    def __init__(self, op: str, args: tuple, dtype: DType | None = None):
        if op not in INTRINSICS:
            raise ValueError(f"unknown intrinsic {op!r}; known: {sorted(INTRINSICS)}")
        self.op = op
        self.args = tuple(args)
        self.dtype = dtype or self.args[0].dtype


class BufferLoad(PrimExpr):
    __slots__ = ("buffer", "indices")
    _fields = ("indices",)

    def __init__(self, buffer, indices):
        self.buffer = buffer
        self.indices = tuple(indices)
        self.dtype = buffer.dtype


# ---------------------------------------------------------------------------------------------------------
# Constructors with constant folding. They keep the IR small and the printed form readable.
# ---------------------------------------------------------------------------------------------------------
def const(value, dtype: DType | None = None) -> PrimExpr:
    """A typed literal; ``dtype`` defaults to int32 for ints and float32 for floats."""
    if isinstance(value, bool):
        return IntImm(int(value), dtype or "bool")
    if isinstance(value, int):
        if dtype is not None and is_float(dtype):
            return FloatImm(float(value), dtype)
        return IntImm(value, dtype or "int32")
    if isinstance(value, float):
        if dtype is not None and not is_float(dtype):
            raise TypeError(f"float literal {value} given integer dtype {dtype}")
        return FloatImm(value, dtype or "float32")
    raise TypeError(f"cannot make a constant of {type(value).__name__}")


def as_expr(value, dtype_hint: DType | None = None) -> PrimExpr:
    """Convert Python numbers to literals (typed like ``dtype_hint`` when given)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)) or hasattr(value, "dtype") and hasattr(value, "item"):
        if hasattr(value, "item"):
            value = value.item()
        if dtype_hint is not None:
            if isinstance(value, float) and not is_float(dtype_hint):
                return FloatImm(value, "float32")
            return const(value, dtype_hint if not isinstance(value, bool) else "bool")
        return const(value)
    raise TypeError(f"expected an expression or a number, got {type(value).__name__}: {value!r}")


def _retype_literal(lit: PrimExpr, dtype: DType) -> PrimExpr:
    """Give a literal the other operand's type when that loses nothing (int literal -> any, float -> float)."""
    if isinstance(lit, IntImm) and lit.dtype != "bool":
        return const(lit.value, dtype)
    if isinstance(lit, FloatImm) and is_float(dtype):
        return FloatImm(lit.value, dtype)
    return lit


def _unify(a, b) -> tuple[PrimExpr, PrimExpr]:
    if isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        return a, as_expr(b, a.dtype)
    if isinstance(b, PrimExpr) and not isinstance(a, PrimExpr):
        return as_expr(a, b.dtype), b
    a, b = as_expr(a), as_expr(b)
    if a.dtype != b.dtype:
        if isinstance(a, (IntImm, FloatImm)) and not isinstance(b, (IntImm, FloatImm)):
            a = _retype_literal(a, b.dtype)
        elif isinstance(b, (IntImm, FloatImm)):
            b = _retype_literal(b, a.dtype)
    return a, b


def _is_const(e, v=None) -> bool:
    return isinstance(e, (IntImm, FloatImm)) and (v is None or e.value == v)


def add(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value + b.value, result_dtype(a.dtype, b.dtype))
    if _is_const(b, 0) and not is_float(a.dtype):
        return a
    if _is_const(a, 0) and not is_float(b.dtype):
        return b
    return Binary("+", a, b)


def sub(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value - b.value, result_dtype(a.dtype, b.dtype))
    if _is_const(b, 0) and not is_float(a.dtype):
        return a
    if a is b and not is_float(a.dtype):
        return const(0, a.dtype)
    return Binary("-", a, b)


def mul(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value * b.value, result_dtype(a.dtype, b.dtype))
    if not is_float(a.dtype) and not is_float(b.dtype):
        if _is_const(b, 1):
            return a
        if _is_const(a, 1):
            return b
        if _is_const(a, 0) or _is_const(b, 0):
            return const(0, result_dtype(a.dtype, b.dtype))
    return Binary("*", a, b)


def div(a, b) -> PrimExpr:
    """True division; on integers it truncates like C (prefer ``floordiv``)."""
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b) and is_float(a.dtype):
        return const(a.value / b.value, a.dtype)
    return Binary("/", a, b)


def floordiv(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        if is_float(a.dtype):
            return const(math.floor(a.value / b.value), a.dtype)
        return const(a.value // b.value, result_dtype(a.dtype, b.dtype))
    if _is_const(b, 1) and not is_float(a.dtype):
        return a
    return Binary("//", a, b)


def floormod(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(a.value % b.value, result_dtype(a.dtype, b.dtype))
    if _is_const(b, 1) and not is_float(a.dtype):
        return const(0, a.dtype)
    return Binary("%", a, b)


def min_(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(min(a.value, b.value), result_dtype(a.dtype, b.dtype))
    return Binary("min", a, b)


def max_(a, b) -> PrimExpr:
    a, b = _unify(a, b)
    if _is_const(a) and _is_const(b):
        return const(max(a.value, b.value), result_dtype(a.dtype, b.dtype))
    return Binary("max", a, b)


def compare(op: str, a, b) -> PrimExpr:
    a, b = _unify(a, b)
    return Binary(op, a, b)


def logical_and(a, b) -> PrimExpr:
    a, b = as_expr(a, "bool"), as_expr(b, "bool")
    if _is_const(a):
        return b if a.value else a
    if _is_const(b):
        return a if b.value else b
    return Binary("and", a, b)


def logical_or(a, b) -> PrimExpr:
    a, b = as_expr(a, "bool"), as_expr(b, "bool")
    if _is_const(a):
        return a if a.value else b
    if _is_const(b):
        return b if b.value else a
    return Binary("or", a, b)


def logical_not(a) -> PrimExpr:
    a = as_expr(a, "bool")
    if _is_const(a):
        return const(not a.value, "bool")
    return Not(a)


def select(cond, t, f) -> PrimExpr:
    t, f = _unify(t, f)
    cond = as_expr(cond, "bool")
    if _is_const(cond):
        return t if cond.value else f
    return Select(cond, t, f)


def cast(dtype: DType, value) -> PrimExpr:
    value = as_expr(value)
    if value.dtype == dtype:
        return value
    if isinstance(value, IntImm):
        return const(value.value if not is_float(dtype) else float(value.value), dtype)
    if isinstance(value, FloatImm) and is_float(dtype):
        return FloatImm(value.value, dtype)
    return Cast(dtype, value)


def call(op: str, *args) -> PrimExpr:
    return Call(op, tuple(as_expr(a) for a in args))
