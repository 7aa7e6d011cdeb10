"""Compile IR expressions into Python closures ``env -> value``.

Values follow numpy's scalar semantics so that the reference matches compiled code closely: float
literals and loads are numpy scalars of the exact dtype (``float32 * float32`` stays ``float32``), while
index arithmetic runs on plain Python ints (fast, and exact for any realistic index). Division keeps the IR
meaning: ``/`` truncates on integers like C, ``//`` and ``%`` floor. ``Select`` evaluates only the side its
condition picks (TVM's ``if_then_else`` meaning); producers that want both sides evaluable keep them in
bounds themselves (as ``te.ops`` padding does).
"""
from __future__ import annotations

import math
import operator
from operator import itemgetter

import numpy as np

from ..ir import expr as E
from ..ir.dtype import is_float
from .access import make_load, make_safe_load
from .affine import compile_affine
from .slots import Slots


def np_type(dtype: str):
    return np.dtype(dtype).type


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _float_floordiv(a, b):
    return np.floor(a / b)


_COMMON_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "%": operator.mod,
    "min": min, "max": max,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def _binop(op: str, dtype: str):
    if op in _COMMON_OPS:
        return _COMMON_OPS[op]
    if op == "/":
        return operator.truediv if is_float(dtype) else _trunc_div
    if op == "//":
        return _float_floordiv if is_float(dtype) else operator.floordiv
    raise NotImplementedError(f"reference executor: binary operator {op!r}")


def _intrinsic(op: str, dtype: str):
    t = np_type(dtype)
    if op == "sigmoid":
        one = t(1)
        return lambda x: one / (one + np.exp(-x))
    if op in ("abs", "fabs"):
        return np.abs if is_float(dtype) else abs
    if op == "erf":
        return lambda x: t(math.erf(float(x)))
    if op == "round":
        return np.rint  # round half to even, like LLVM's nearbyint that compiled code uses
    table = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
             "sin": np.sin, "cos": np.cos, "pow": np.power}
    if op not in table:
        raise NotImplementedError(f"reference executor: intrinsic {op!r}")
    return table[op]


def _const(value):
    return lambda env: value


class ExprCompiler:
    def __init__(self, slots: Slots):
        self.slots = slots

    def constant_value(self, e):
        """The run-time value of a literal (numpy scalar for floats, Python int/bool otherwise)."""
        if isinstance(e, E.FloatImm):
            return np_type(e.dtype)(e.value)
        if e.dtype == "bool":
            return bool(e.value)
        return e.value

    def compile(self, e):
        if isinstance(e, E.Var):
            return itemgetter(self.slots.var_slot(e))
        if isinstance(e, (E.IntImm, E.FloatImm)):
            return _const(self.constant_value(e))
        if isinstance(e, E.Binary):
            return self._binary(e)
        if isinstance(e, E.BufferLoad):
            bs = self.slots.buffer_slot(e.buffer)
            if len(e.indices) != e.buffer.ndim:
                raise ValueError(f"buffer {e.buffer.name!r} has {e.buffer.ndim} dimensions, loaded with "
                                 f"{len(e.indices)} indices{self.slots.where()}")
            fns = tuple(self.compile(i) for i in e.indices)
            if self.provably_in_bounds(e.buffer, e.indices):
                return make_safe_load(bs, fns, self.var_slots(e.indices))
            return make_load(bs, fns, e.buffer.name, self.slots.where())
        if isinstance(e, E.Select):
            fc, ft, ff = self.compile(e.cond), self.compile(e.true_value), self.compile(e.false_value)
            return lambda env: ft(env) if fc(env) else ff(env)
        if isinstance(e, E.Not):
            fa = self.compile(e.a)
            return lambda env: not fa(env)
        if isinstance(e, E.Cast):
            return self._cast(e)
        if isinstance(e, E.Call):
            return self._call(e)
        raise TypeError(f"reference executor cannot evaluate expression node {type(e).__name__}")

    def provably_in_bounds(self, buf, indices) -> bool:
        """Whether static loop ranges prove every index inside the buffer's shape (``for i in range(n)``
        indexing a dimension ``n`` counts, even when ``n`` is symbolic)."""
        for i, dim in zip(indices, buf.shape):
            if isinstance(dim, E.IntImm):
                if self.slots.provably_within(i, 0, dim.value - 1) is None:
                    return False
            elif not self.slots.in_symbolic_range(i, E.const(0, dim.dtype), dim):
                return False
        return True

    def var_slots(self, indices) -> tuple | None:
        if indices and all(isinstance(i, E.Var) for i in indices):
            return tuple(self.slots.var_slot(i) for i in indices)
        return None

    # ------------------------------------------------------------------------------------------------
    def _leaf(self, e):
        if isinstance(e, E.Var):
            return "var", self.slots.var_slot(e)
        if isinstance(e, (E.IntImm, E.FloatImm)):
            return "const", self.constant_value(e)
        if isinstance(e, E.BufferLoad) and e.indices and e.buffer in self.slots.live_buffers:
            vs = self.var_slots(e.indices)
            if vs is not None and self.provably_in_bounds(e.buffer, e.indices):
                return "load", (self.slots.buffer_slot(e.buffer), itemgetter(*vs))
        return None, None

    def _binary(self, e: E.Binary):
        op = e.op
        affine = compile_affine(e, self.slots.var_slot)
        if affine is not None:
            return affine
        if op in ("and", "or"):
            fa, fb = self.compile(e.a), self.compile(e.b)
            if op == "and":
                return lambda env: bool(fa(env)) and bool(fb(env))
            return lambda env: bool(fa(env)) or bool(fb(env))
        fn = _binop(op, e.a.dtype if op in E.COMPARE_OPS else e.dtype)
        ka, va = self._leaf(e.a)
        kb, vb = self._leaf(e.b)
        if ka == "var" and kb == "var":
            return lambda env: fn(env[va], env[vb])
        if ka == "var" and kb == "const":
            return lambda env: fn(env[va], vb)
        if ka == "const" and kb == "var":
            return lambda env: fn(va, env[vb])
        # loads proven in bounds and indexed by plain variables are inlined: this is the inner-loop shape
        # of every matmul / elementwise block, where one closure call less per operand matters
        if ka == "load" and kb == "load":
            (ba, ga), (bb, gb) = va, vb
            return lambda env: fn(env[ba][ga(env)], env[bb][gb(env)])
        if ka == "load" and kb == "const":
            ba, ga = va
            return lambda env: fn(env[ba][ga(env)], vb)
        if ka == "const" and kb == "load":
            bb, gb = vb
            return lambda env: fn(va, env[bb][gb(env)])
        fa, fb = self.compile(e.a), self.compile(e.b)
        if ka == "load":
            ba, ga = va
            return lambda env: fn(env[ba][ga(env)], fb(env))
        if kb == "load":
            bb, gb = vb
            return lambda env: fn(fa(env), env[bb][gb(env)])
        if kb == "const":
            return lambda env: fn(fa(env), vb)
        if ka == "const":
            return lambda env: fn(va, fb(env))
        return lambda env: fn(fa(env), fb(env))

    def _cast(self, e: E.Cast):
        f = self.compile(e.value)
        dst, src = e.dtype, e.value.dtype
        t = np_type(dst)
        if is_float(dst):
            return lambda env: t(f(env))
        if dst == "bool":
            return lambda env: bool(f(env))
        if is_float(src):
            return lambda env: t(f(env))  # C conversion: truncate toward zero
        if dst in ("int32", "int64"):
            return lambda env: int(f(env))  # index casts stay exact Python ints
        return lambda env: t(np.int64(f(env)))  # narrow integers wrap like C

    def _call(self, e: E.Call):
        fns = tuple(self.compile(a) for a in e.args)
        fn = _intrinsic(e.op, e.dtype)
        t = np_type(e.dtype)
        if len(fns) == 1:
            (f0,) = fns
            if is_float(e.dtype):
                return lambda env: t(fn(f0(env)))
            return lambda env: fn(f0(env))
        return lambda env: t(fn(*[f(env) for f in fns]))
