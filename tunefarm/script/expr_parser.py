"""Expressions of TensorIR scripts: syntax tree -> ``PrimExpr`` (or plain Python values).

Two kinds of values meet here. Python literals and outer Python constants stay Python values, so ``128 * 4``
or ``n // 2`` fold like Python would; as soon as an IR expression is involved the parser builds IR nodes
*exactly as written* (``x * 1`` stays ``x * 1``), which is what makes ``parse(print(f))`` give back ``f``.
A bare Python literal next to an IR expression takes that expression's dtype (``vi + 1`` with ``vi`` int64
is an int64 ``1``); a typed literal such as ``T.int64(1)`` keeps its own dtype.
"""
from __future__ import annotations

import ast
import math

import numpy as np

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.dtype import ALL_TYPES, check_dtype, is_float, is_int
from .diagnostics import describe
from .namespace import TIR_NAMES

_PY_NUMBERS = (int, float, bool)

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_PY_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "min": min, "max": max,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def is_py_number(v) -> bool:
    return isinstance(v, _PY_NUMBERS)


def literal_for(value, dtype: str) -> E.PrimExpr:
    """A Python number as a literal of ``dtype`` (an int becomes a float literal for float dtypes)."""
    if isinstance(value, bool):
        return E.IntImm(int(value), "bool" if dtype == "bool" else dtype)
    if isinstance(value, int):
        return E.FloatImm(float(value), dtype) if is_float(dtype) else E.IntImm(value, dtype)
    if is_float(dtype):
        return E.FloatImm(value, dtype)
    return E.FloatImm(value, "float32")


def default_literal(value) -> E.PrimExpr:
    if isinstance(value, bool):
        return E.IntImm(int(value), "bool")
    if isinstance(value, int):
        return E.IntImm(value, "int32")
    return E.FloatImm(value, "float32")


def coerce_pair(a, b):
    """Make both operands IR expressions; a bare Python number takes the other side's dtype."""
    if isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
        return a, literal_for(b, a.dtype)
    if isinstance(b, E.PrimExpr) and not isinstance(a, E.PrimExpr):
        return literal_for(a, b.dtype), b
    return a, b


class ExprParser:
    """Mixin: expression evaluation. The host class provides ``src``, ``lookup`` and ``t_name``."""

    # ------------------------------------------------------------------ entry points
    def expr(self, node):
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is None:
            raise self.src.error(node, f"unsupported expression `{describe(node)}` ({_kind(node)})",
                                 type(node).__name__)
        return method(node)

    def prim(self, node):
        """An IR expression or a Python number (strings, buffers, tuples rejected)."""
        v = self.expr(node)
        if isinstance(v, E.PrimExpr) or is_py_number(v):
            return v
        raise self.src.error(node, f"expected a scalar expression, got {_what(v)} `{describe(node)}`",
                             "not-scalar")

    def prim_expr(self, node) -> E.PrimExpr:
        v = self.prim(node)
        return v if isinstance(v, E.PrimExpr) else default_literal(v)

    def index(self, node) -> E.PrimExpr:
        """An integer index / extent expression (Python ints become int32 literals)."""
        v = self.prim(node)
        if isinstance(v, bool) or isinstance(v, float):
            raise self.src.error(node, f"expected an integer, got {v!r}", "non-integer-index")
        if isinstance(v, int):
            return E.IntImm(v, "int32")
        if not is_int(v.dtype):
            raise self.src.error(node, f"expected an integer expression, got dtype {v.dtype}: "
                                       f"`{describe(node)}`", "non-integer-index")
        return v

    def dtype_arg(self, node) -> str:
        v = self.expr(node)
        if not isinstance(v, str):
            raise self.src.error(node, f"expected a dtype string such as \"float32\", got `{describe(node)}`",
                                 "dtype")
        try:
            return check_dtype(v)
        except TypeError as e:
            raise self.src.error(node, str(e), "dtype") from None

    # ------------------------------------------------------------------ leaves
    def _e_Constant(self, node):
        if isinstance(node.value, (int, float, bool, str)) or node.value is None:
            return node.value
        raise self.src.error(node, f"unsupported literal {node.value!r}", "literal")

    def _e_Name(self, node):
        found, value = self.lookup(node.id)
        if not found:
            raise self.src.error(node, f"undefined name `{node.id}`", "undefined-name")
        stale = getattr(value, "stale_reason", None)
        if stale is not None:
            raise self.src.error(node, stale, "let")
        return value

    def _e_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def _e_List(self, node):
        return [self.expr(e) for e in node.elts]

    def _e_Attribute(self, node):
        tname = self.t_name(node)
        if tname is not None:
            raise self.src.error(node, f"T.{tname} cannot be used as a value here", "namespace-value")
        base = self.expr(node.value)
        if isinstance(base, Buffer):
            if node.attr == "shape":
                return tuple(base.shape)
            if node.attr == "dtype":
                return base.dtype
        raise self.src.error(node, f"unsupported attribute `{describe(node)}`", "attribute")

    def _e_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, Buffer):
            return E.BufferLoad(base, self.buffer_indices(base, node))
        if isinstance(base, (tuple, list)):
            i = self.expr(node.slice)
            if type(i) is int and -len(base) <= i < len(base):
                return base[i]
            raise self.src.error(node, f"bad index into a Python sequence: `{describe(node)}`", "subscript")
        raise self.src.error(node, f"cannot index {_what(base)} `{describe(node.value)}`", "subscript")

    def buffer_indices(self, buf: Buffer, node: ast.Subscript) -> tuple:
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for e in elts:
            if isinstance(e, ast.Slice):
                raise self.src.error(e, f"slices of buffer {buf.name} are only allowed in T.reads / T.writes",
                                     "slice")
        if len(elts) != buf.ndim:
            raise self.src.error(node, f"buffer {buf.name} has {buf.ndim} dimension(s) but is indexed with "
                                       f"{len(elts)}", "index-count")
        return tuple(self.index(e) for e in elts)

    # ------------------------------------------------------------------ operators
    def binary(self, op: str, a, b, node):
        if is_py_number(a) and is_py_number(b):
            try:
                return _PY_BINARY[op](a, b)
            except ZeroDivisionError:
                raise self.src.error(node, f"division by zero in `{describe(node)}`", "zero-division") from None
        for v in (a, b):
            if not (isinstance(v, E.PrimExpr) or is_py_number(v)):
                raise self.src.error(node, f"operator {op} applied to {_what(v)} in `{describe(node)}`",
                                     "operand")
        a, b = coerce_pair(a, b)
        return E.Binary(op, a, b)

    def _e_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.src.error(node, f"unsupported operator in `{describe(node)}` (supported: + - * / // %)",
                                 type(node.op).__name__)
        return self.binary(op, self.prim(node.left), self.prim(node.right), node)

    def _e_UnaryOp(self, node):
        v = self.prim(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if is_py_number(v):
                return -v
            if isinstance(v, E.IntImm) and v.dtype != "bool":
                return E.IntImm(-v.value, v.dtype)
            if isinstance(v, E.FloatImm):
                return E.FloatImm(-v.value, v.dtype)
            return E.Binary("-", literal_for(0, v.dtype), v)
        if isinstance(node.op, ast.Not):
            if is_py_number(v):
                return not v
            return E.Not(v)
        raise self.src.error(node, f"unsupported operator in `{describe(node)}`", type(node.op).__name__)

    def _e_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        vals = [self.prim(v) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            if is_py_number(out) and is_py_number(v):
                out = (bool(out) and bool(v)) if op == "and" else (bool(out) or bool(v))
            else:
                a = out if isinstance(out, E.PrimExpr) else literal_for(bool(out), "bool")
                b = v if isinstance(v, E.PrimExpr) else literal_for(bool(v), "bool")
                out = E.Binary(op, a, b)
        return out

    def _e_Compare(self, node):
        left = self.prim(node.left)
        out = None
        for op_node, right_node in zip(node.ops, node.comparators):
            op = _CMPOPS.get(type(op_node))
            if op is None:
                raise self.src.error(node, f"unsupported comparison in `{describe(node)}`",
                                     type(op_node).__name__)
            right = self.prim(right_node)
            cmp = self.binary(op, left, right, node)
            out = cmp if out is None else self.binary_logic("and", out, cmp)
            left = right
        return out

    @staticmethod
    def binary_logic(op, a, b):
        if is_py_number(a) and is_py_number(b):
            return bool(a) and bool(b) if op == "and" else bool(a) or bool(b)
        a = a if isinstance(a, E.PrimExpr) else literal_for(bool(a), "bool")
        b = b if isinstance(b, E.PrimExpr) else literal_for(bool(b), "bool")
        return E.Binary(op, a, b)

    def _e_IfExp(self, node):
        cond = self.prim(node.test)
        if is_py_number(cond):
            return self.expr(node.body if cond else node.orelse)
        return self.select(cond, self.prim(node.body), self.prim(node.orelse))

    @staticmethod
    def select(cond, t, f):
        if not isinstance(cond, E.PrimExpr):
            cond = literal_for(bool(cond), "bool")
        t, f = coerce_pair(t, f)
        if not isinstance(t, E.PrimExpr):  # two Python numbers
            dtype = "float32" if isinstance(t, float) or isinstance(f, float) else default_literal(t).dtype
            t, f = literal_for(t, dtype), literal_for(f, dtype)
        return E.Select(cond, t, f)

    # ------------------------------------------------------------------ calls
    def _e_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "astype" and self.t_name(func) is None:
            if len(node.args) != 1 or node.keywords:
                raise self.src.error(node, "astype takes one dtype argument", "astype")
            return E.Cast(self.dtype_arg(node.args[0]), self.prim_expr(func.value))
        tname = self.t_name(func)
        if tname is None:
            raise self.src.error(node, f"call to unsupported function `{describe(func)}` (scripts may only call "
                                       "T.* constructs)", "unknown-call")
        handler = _EXPR_CALLS.get(tname)
        if handler is not None:
            return handler(self, node)
        if tname in ALL_TYPES:
            return self.typed_literal(tname, node)
        if tname in E.INTRINSICS:
            return self.intrinsic(tname, node)
        if tname.split(".")[0] not in TIR_NAMES:
            raise self.src.error(node, f"T.{tname} is not part of the TensorIR script subset tunefarm supports",
                                 "unknown-" + tname)
        raise self.src.error(node, f"T.{tname} cannot be used inside an expression", "misplaced-" + tname)

    def no_keywords(self, node, name: str):
        if node.keywords:
            raise self.src.error(node, f"T.{name} takes no keyword arguments", name)

    def typed_literal(self, dtype: str, node):
        self.no_keywords(node, dtype)
        if len(node.args) != 1:
            if not node.args:
                raise self.src.error(node, f"T.{dtype}() declares a symbolic variable and must be assigned "
                                           f"directly to a name (`n = T.{dtype}()`)", "symbolic-var")
            raise self.src.error(node, f"T.{dtype} takes one argument", dtype)
        v = self.expr(node.args[0])
        if isinstance(v, str):
            if is_float(dtype) and v in ("inf", "-inf", "nan"):
                return E.FloatImm(float(v), dtype)
            raise self.src.error(node, f"T.{dtype}({v!r}): only \"inf\", \"-inf\" and \"nan\" may be given as "
                                       "strings", dtype)
        if isinstance(v, E.PrimExpr):
            return E.Cast(dtype, v)
        if not is_py_number(v):
            raise self.src.error(node, f"T.{dtype} expects a number, got {_what(v)}", dtype)
        if dtype == "bool":
            return E.IntImm(int(bool(v)), "bool")
        if isinstance(v, float) and not is_float(dtype):
            if not math.isfinite(v) or v != int(v):
                raise self.src.error(node, f"T.{dtype}({v!r}): a float literal is not an integer", dtype)
            v = int(v)
        return literal_for(v, dtype)

    def result_dtype(self, node, name: str) -> str | None:
        """The ``dtype=`` keyword TVM's printer writes on calls (the result's dtype), or None; no other keyword."""
        dtype = None
        for kw in node.keywords:
            if kw.arg != "dtype":
                raise self.src.error(node, f"T.{name} takes no keyword argument {kw.arg!r} (only dtype=)", name)
            dtype = self.dtype_arg(kw.value)
        return dtype

    def checked_dtype(self, value, dtype: str | None, node, name: str):
        if dtype is not None and isinstance(value, E.PrimExpr) and value.dtype != dtype:
            raise self.src.error(node, f"T.{name}(..., dtype={dtype!r}) but its value is {value.dtype}", name)
        return value

    def intrinsic(self, op: str, node):
        dtype = self.result_dtype(node, op)
        if not node.args:
            raise self.src.error(node, f"T.{op} needs an argument", op)
        args = [self.prim(a) for a in node.args]
        first = next((a for a in args if isinstance(a, E.PrimExpr)), None)
        if first is None:
            exprs = [default_literal(a) if dtype is None else literal_for(a, dtype) for a in args]
        else:
            exprs = [a if isinstance(a, E.PrimExpr) else literal_for(a, first.dtype) for a in args]
        return self.checked_dtype(E.Call(op, tuple(exprs)), dtype, node, op)

    def _call_limit(self, node):
        """``T.min_value(dtype)`` / ``T.max_value(dtype)``: the dtype's smallest / largest value as a literal."""
        name = self.t_name(node.func)
        self.no_keywords(node, name)
        if len(node.args) != 1:
            raise self.src.error(node, f"T.{name} takes one dtype argument", name)
        dtype = self.dtype_arg(node.args[0])
        if is_float(dtype):
            value = float(np.finfo(dtype).min if name == "min_value" else np.finfo(dtype).max)
            return E.FloatImm(value, dtype)
        if dtype == "bool":
            raise self.src.error(node, f"T.{name}(\"bool\") has no meaning here", name)
        info = np.iinfo(dtype)
        return E.IntImm(int(info.min if name == "min_value" else info.max), dtype)

    def _call_minmax(self, node):
        name = self.t_name(node.func)
        self.no_keywords(node, name)
        if len(node.args) < 2:
            raise self.src.error(node, f"T.{name} takes at least two arguments", name)
        vals = [self.prim(a) for a in node.args]
        out = vals[0]
        for v in vals[1:]:
            out = self.binary(name, out, v, node)
        return out

    def _call_select(self, node):
        name = self.t_name(node.func)
        dtype = self.result_dtype(node, name)
        if len(node.args) != 3:
            raise self.src.error(node, f"T.{name} takes (condition, true_value, false_value)", name)
        c, t, f = (self.prim(a) for a in node.args)
        return self.checked_dtype(self.select(c, t, f), dtype, node, name)

    def _call_Cast(self, node):
        self.no_keywords(node, "Cast")
        if len(node.args) != 2:
            raise self.src.error(node, "T.Cast takes (dtype, value)", "Cast")
        return E.Cast(self.dtype_arg(node.args[0]), self.prim_expr(node.args[1]))

    def _call_cast(self, node):
        self.no_keywords(node, "cast")
        if len(node.args) != 2:
            raise self.src.error(node, "T.cast takes (value, dtype)", "cast")
        return E.Cast(self.dtype_arg(node.args[1]), self.prim_expr(node.args[0]))

    def _call_floor_op(self, node):
        name = self.t_name(node.func)
        self.no_keywords(node, name)
        if len(node.args) != 2:
            raise self.src.error(node, f"T.{name} takes two arguments", name)
        return self.binary("//" if name == "floordiv" else "%", self.prim(node.args[0]), self.prim(node.args[1]),
                           node)


_EXPR_CALLS = {
    "max": ExprParser._call_minmax, "min": ExprParser._call_minmax,
    "Select": ExprParser._call_select, "if_then_else": ExprParser._call_select,
    "Cast": ExprParser._call_Cast, "cast": ExprParser._call_cast,
    "floordiv": ExprParser._call_floor_op, "floormod": ExprParser._call_floor_op,
    "min_value": ExprParser._call_limit, "max_value": ExprParser._call_limit,
}

_KINDS = {
    "Lambda": "lambda", "ListComp": "list comprehension", "SetComp": "set comprehension",
    "DictComp": "dict comprehension", "GeneratorExp": "generator expression", "JoinedStr": "f-string",
    "Await": "await", "Yield": "yield", "YieldFrom": "yield from", "NamedExpr": "assignment expression",
    "Starred": "starred expression", "Set": "set literal", "Dict": "dict literal (only allowed in attributes)",
    "Slice": "slice",
}


def _kind(node) -> str:
    return _KINDS.get(type(node).__name__, type(node).__name__)


def _what(v) -> str:
    if isinstance(v, Buffer):
        return f"buffer {v.name}"
    if isinstance(v, E.PrimExpr):
        return f"{v.dtype} expression"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (tuple, list)):
        return "a tuple"
    if v is None:
        return "None"
    return type(v).__name__
