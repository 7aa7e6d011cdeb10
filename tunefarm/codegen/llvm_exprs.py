"""Scalar and vector expression emission (one code path: a vector is an expression with lanes).

``ExprEmitter.expr(e)`` returns an llvmlite value. Inside a vectorized loop (``self.vc`` set) the loop
variable is a vector of lane indices and anything that depends on it becomes a ``<lanes x T>`` vector;
everything else stays scalar and is broadcast only where it meets a vector. ``a + b * c`` on floats becomes
``llvm.fmuladd`` (one FMA instruction on AVX2/AVX-512 targets).

Integer ``//`` and ``%`` use unsigned division when the dividend is provably non-negative under the loop
bounds (shifts for powers of two) and the exact floor formula otherwise; a divisor that is not a constant is
guarded so that division by zero gives 0 (numpy's answer) instead of a SIGFPE that would kill the process.

Buffer indices inside loops LLVM will unroll (``unrolled_vars``) are emitted as ``rest + coef * var`` with
those variables' terms last: once unrolled they become one constant offset from an address shared by all
the copies (as indices simplified after unrolling in the IR were), not a different base address per copy.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import expr as E
from ..ir.arith import affine_coefficients, const_bound
from ..ir.dtype import is_float, result_dtype
from ..ir.functor import uses_var
from .guarded_reads import GuardedReads
from .llvm_types import I32, I64, declare, intrinsic_suffix, is_unsigned, size_of, storage_type, value_type, vec
from .lower_blocks import LoweringError

_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})
_UNARY_INTRINSICS = {"exp": "llvm.exp", "log": "llvm.log", "sqrt": "llvm.sqrt", "fabs": "llvm.fabs",
                     "floor": "llvm.floor", "ceil": "llvm.ceil", "round": "llvm.roundeven", "sin": "llvm.sin",
                     "cos": "llvm.cos", "tanh": "llvm.tanh"}


class VectorContext:
    """The vectorized loop being emitted: its variable, lane count and the scalar value of lane 0."""

    def __init__(self, lane_var: E.Var, lanes: int, base: ir.Value):
        self.lane_var = lane_var
        self.lanes = lanes
        self.base = base
        self.ramp = None  # <lanes x i64> lane values, built on first use
        self.invariant: dict = {}  # id(expr) -> (expr, bool): memo of "does not use the lane variable"


class ExprEmitter(GuardedReads):
    """Mixin: needs ``builder``, ``module``, ``env`` (Var -> i64 value), ``buffers`` (flat Buffer -> ptr),
    ``bounds`` (Var -> (lo, hi)) and ``vc`` (VectorContext or None)."""

    builder: ir.IRBuilder
    module: ir.Module
    env: dict
    buffers: dict
    bounds: dict
    vc: VectorContext | None
    unrolled_vars: "list | tuple" = ()  # variables of the enclosing loops LLVM unrolls, outermost first

    # ------------------------------------------------------------------ helpers
    def lanes_of(self, v: ir.Value) -> int:
        return v.type.count if isinstance(v.type, ir.VectorType) else 1

    def broadcast(self, v: ir.Value, lanes: int) -> ir.Value:
        if lanes == 1 or isinstance(v.type, ir.VectorType):
            return v
        if isinstance(v, ir.Constant):
            return ir.Constant(ir.VectorType(v.type, lanes), [v.constant] * lanes)
        b = self.builder
        one = b.insert_element(ir.Constant(ir.VectorType(v.type, lanes), ir.Undefined), v, ir.Constant(I32, 0))
        return b.shuffle_vector(one, ir.Constant(ir.VectorType(v.type, lanes), ir.Undefined),
                                ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    def match(self, *vals):
        lanes = max(self.lanes_of(v) for v in vals)
        return [self.broadcast(v, lanes) for v in vals]

    def is_invariant(self, e) -> bool:
        vc = self.vc
        if vc is None:
            return True
        hit = vc.invariant.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        got = not uses_var(e, {vc.lane_var})
        vc.invariant[id(e)] = (e, got)  # holding ``e`` keeps its id from being reused while cached
        return got

    def is_nonneg(self, e) -> bool:
        bd = const_bound(e, self.bounds)
        return bd is not None and bd[0] >= 0

    def const_like(self, dtype: str, value, lanes: int) -> ir.Constant:
        t = value_type(dtype)
        v = float(value) if is_float(dtype) else int(value)
        return ir.Constant(vec(t, lanes), v if lanes == 1 else [v] * lanes)

    # integer arithmetic that folds constants (keeps the IR LLVM has to chew through small)
    def iadd(self, x: ir.Value, y: ir.Value, flags=("nsw",)) -> ir.Value:
        cx, cy = _int_const(x), _int_const(y)
        if cx is not None and cy is not None:
            return ir.Constant(x.type, _wrap(cx + cy, x.type.width))
        if cx == 0:
            return y
        if cy == 0:
            return x
        return self.builder.add(x, y, flags=flags)

    def isub(self, x: ir.Value, y: ir.Value, flags=("nsw",)) -> ir.Value:
        cx, cy = _int_const(x), _int_const(y)
        if cx is not None and cy is not None:
            return ir.Constant(x.type, _wrap(cx - cy, x.type.width))
        if cy == 0:
            return x
        return self.builder.sub(x, y, flags=flags)

    def imul(self, x: ir.Value, y: ir.Value, flags=("nsw",)) -> ir.Value:
        cx, cy = _int_const(x), _int_const(y)
        if cx is not None and cy is not None:
            return ir.Constant(x.type, _wrap(cx * cy, x.type.width))
        if cx == 1:
            return y
        if cy == 1:
            return x
        if cx == 0 or cy == 0:
            return ir.Constant(x.type, 0)
        return self.builder.mul(x, y, flags=flags)

    def intrinsic(self, base: str, t: ir.Type, nargs: int = 1) -> ir.Function:
        return declare(self.module, f"{base}.{intrinsic_suffix(t)}", t, [t] * nargs)

    # ------------------------------------------------------------------ conversion
    def convert(self, v: ir.Value, src: str, dst: str) -> ir.Value:
        if src == dst:
            return v
        b = self.builder
        lanes = self.lanes_of(v)
        dt = vec(value_type(dst), lanes)
        if dst == "bool":
            if is_float(src):
                return b.fcmp_unordered("!=", v, self.const_like(src, 0.0, lanes))
            return b.icmp_unsigned("!=", v, self.const_like(src, 0, lanes))
        if is_float(dst):
            if is_float(src):
                sb, db = value_type(src), value_type(dst)
                order = {"half": 16, "float": 32, "double": 64}
                return b.fpext(v, dt) if order[str(sb)] < order[str(db)] else b.fptrunc(v, dt)
            return b.uitofp(v, dt) if is_unsigned(src) else b.sitofp(v, dt)
        if is_float(src):
            return b.fptoui(v, dt) if is_unsigned(dst) else b.fptosi(v, dt)
        sw, dw = value_type(src).width, value_type(dst).width
        if sw == dw:
            return v
        if sw > dw:
            return b.trunc(v, dt)
        return b.zext(v, dt) if is_unsigned(src) else b.sext(v, dt)

    # ------------------------------------------------------------------ dispatch
    def expr(self, e) -> ir.Value:
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            raise LoweringError(f"cannot generate code for expression {type(e).__name__}")
        return method(e)

    def typed(self, e, dtype: str) -> ir.Value:
        return self.convert(self.expr(e), e.dtype, dtype)

    def _e_IntImm(self, e: E.IntImm):
        return ir.Constant(value_type(e.dtype), int(e.value))

    def _e_FloatImm(self, e: E.FloatImm):
        return ir.Constant(value_type(e.dtype), float(e.value))

    def _e_Var(self, e: E.Var):
        vc = self.vc
        if vc is not None and e is vc.lane_var:
            if vc.ramp is None:
                lanes = vc.lanes
                base = _int_const(vc.base)
                if base is not None:
                    vc.ramp = ir.Constant(ir.VectorType(I64, lanes), [base + k for k in range(lanes)])
                else:
                    vc.ramp = self.builder.add(self.broadcast(vc.base, lanes),
                                               ir.Constant(ir.VectorType(I64, lanes), list(range(lanes))))
            return self.convert(vc.ramp, "int64", e.dtype)
        try:
            v = self.env[e]
        except KeyError:
            raise LoweringError(f"variable {e.name!r} is not bound where it is used") from None
        return self.convert(v, "int64", e.dtype) if e.dtype != "int64" else v

    def _e_Cast(self, e: E.Cast):
        return self.convert(self.expr(e.value), e.value.dtype, e.dtype)

    def _e_Not(self, e: E.Not):
        v = self.typed(e.a, "bool")
        return self.builder.xor(v, self.const_like("bool", 1, self.lanes_of(v)))

    def _e_Binary(self, e: E.Binary):
        op = e.op
        b = self.builder
        if op in ("and", "or"):
            x, y = self.match(self.typed(e.a, "bool"), self.typed(e.b, "bool"))
            return b.and_(x, y) if op == "and" else b.or_(x, y)
        if op in _COMPARE:
            dt = result_dtype(e.a.dtype, e.b.dtype)
            x, y = self.match(self.typed(e.a, dt), self.typed(e.b, dt))
            if is_float(dt):
                return b.fcmp_unordered(op, x, y) if op == "!=" else b.fcmp_ordered(op, x, y)
            if is_unsigned(dt):
                return b.icmp_unsigned(op, x, y)
            return b.icmp_signed(op, x, y)
        dt = e.dtype
        if op == "+" and is_float(dt) and dt != "float16":
            fused = self._try_fma(e, dt)
            if fused is not None:
                return fused
        x, y = self.match(self.typed(e.a, dt), self.typed(e.b, dt))
        if is_float(dt):
            return self._float_binary(op, x, y, dt)
        return self._int_binary(op, x, y, dt, e)

    def _try_fma(self, e: E.Binary, dt: str):
        for prod, other in ((e.b, e.a), (e.a, e.b)):
            if isinstance(prod, E.Binary) and prod.op == "*" and prod.dtype == dt:
                x, y, z = self.match(self.typed(prod.a, dt), self.typed(prod.b, dt), self.typed(other, dt))
                return self.builder.call(self.intrinsic("llvm.fmuladd", x.type, 3), [x, y, z])
        return None

    def _float_binary(self, op, x, y, dt):
        b = self.builder
        if op == "+":
            return b.fadd(x, y)
        if op == "-":
            return b.fsub(x, y)
        if op == "*":
            return b.fmul(x, y)
        if op == "/":
            return b.fdiv(x, y)
        if op == "min":
            return b.select(b.fcmp_ordered("<", x, y), x, y)
        if op == "max":
            return b.select(b.fcmp_ordered(">", x, y), x, y)
        floor = self.intrinsic("llvm.floor", x.type)
        q = b.call(floor, [b.fdiv(x, y)])
        if op == "//":
            return q
        return b.fsub(x, b.fmul(q, y))  # "%": floor modulo

    def _int_binary(self, op, x, y, dt, e: E.Binary):
        b = self.builder
        unsigned = is_unsigned(dt)
        flags = () if unsigned else ("nsw",)
        if op == "+":
            return self.iadd(x, y, flags)
        if op == "-":
            return self.isub(x, y, flags)
        if op == "*":
            return self.imul(x, y, flags)
        if op in ("min", "max"):
            cmp = b.icmp_unsigned if unsigned else b.icmp_signed
            return b.select(cmp("<" if op == "min" else ">", x, y), x, y)
        if not _safe_divisor(e.b, unsigned):
            return self._guarded_division(op, x, y, dt, e)
        if op == "/":
            return b.udiv(x, y) if unsigned else b.sdiv(x, y)
        nonneg = unsigned or (self.is_nonneg(e.a) and self.is_nonneg(e.b))
        if nonneg:
            return b.udiv(x, y) if op == "//" else b.urem(x, y)
        # floor division / modulo for possibly negative operands
        lanes = self.lanes_of(x)
        zero = self.const_like(dt, 0, lanes)
        r = b.srem(x, y)
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)))
        if op == "//":
            q = b.sdiv(x, y)
            return b.sub(q, b.zext(adjust, q.type))
        return b.select(adjust, b.add(r, y), r)

    def _guarded_division(self, op, x, y, dt, e: E.Binary):
        """Integer division by a run-time divisor, as numpy does it: ``x // 0 == x % 0 == 0`` and
        ``INT_MIN // -1`` wraps, instead of the SIGFPE x86 raises (which would kill the process)."""
        b = self.builder
        lanes = self.lanes_of(x)
        zero, one = self.const_like(dt, 0, lanes), self.const_like(dt, 1, lanes)
        by_zero = b.icmp_unsigned("==", y, zero)
        if is_unsigned(dt):
            d = b.select(by_zero, one, y)
            res = b.udiv(x, d) if op in ("/", "//") else b.urem(x, d)
            return b.select(by_zero, zero, res)
        by_minus_one = b.icmp_signed("==", y, self.const_like(dt, -1, lanes))
        special = b.or_(by_zero, by_minus_one)
        d = b.select(special, one, y)
        safe = E.Binary(op, _Opaque(e.a.dtype, x), _Opaque(e.b.dtype, d))
        res = self._int_binary(op, x, d, dt, safe)
        negated = b.sub(zero, x)  # wraps for INT_MIN, like numpy
        minus_one_result = negated if op in ("/", "//") else zero
        return b.select(by_zero, zero, b.select(by_minus_one, minus_one_result, res))

    def _e_Call(self, e: E.Call):
        dt = e.dtype
        if not is_float(dt):
            if e.op == "abs":
                x = self.typed(e.args[0], dt)
                zero = self.const_like(dt, 0, self.lanes_of(x))
                if is_unsigned(dt):
                    return x
                return self.builder.select(self.builder.icmp_signed("<", x, zero), self.builder.sub(zero, x), x)
            raise LoweringError(f"intrinsic {e.op!r} needs a float argument, got {dt}")
        args = self.match(*[self.typed(a, dt) for a in e.args])
        t = args[0].type
        b = self.builder
        if e.op in _UNARY_INTRINSICS or e.op == "abs":
            name = _UNARY_INTRINSICS.get(e.op, "llvm.fabs")
            return b.call(self.intrinsic(name, t), [args[0]])
        if e.op == "pow":
            return b.call(self.intrinsic("llvm.pow", t, 2), args)
        if e.op == "sigmoid":
            lanes = self.lanes_of(args[0])
            one = self.const_like(dt, 1.0, lanes)
            ex = b.call(self.intrinsic("llvm.exp", t), [b.fneg(args[0])])
            return b.fdiv(one, b.fadd(one, ex))
        if e.op == "erf":
            return self._libm_per_lane({"float32": "erff", "float64": "erf"}.get(dt), args[0], dt)
        raise LoweringError(f"no code generation for intrinsic {e.op!r}")

    def _libm_per_lane(self, fname: str | None, x: ir.Value, dt: str) -> ir.Value:
        if fname is None:
            raise LoweringError(f"erf is supported for float32/float64, not {dt}")
        st = value_type(dt)
        fn = declare(self.module, fname, st, [st], attrs=("nounwind",))
        b = self.builder
        lanes = self.lanes_of(x)
        if lanes == 1:
            return b.call(fn, [x])
        out = ir.Constant(x.type, ir.Undefined)
        for i in range(lanes):
            lane = b.call(fn, [b.extract_element(x, ir.Constant(I32, i))])
            out = b.insert_element(out, lane, ir.Constant(I32, i))
        return out

    # ------------------------------------------------------------------ memory
    def element_ptr(self, buf, index: ir.Value, inbounds: bool = True) -> ir.Value:
        """The address of element ``index``; ``inbounds=False`` for a masked load, whose masked-off first lanes
        may lie outside the buffer (an ``inbounds`` address there is poison, and loading the other lanes UB)."""
        try:
            base = self.buffers[buf]
        except KeyError:
            raise LoweringError(f"buffer {buf.name!r} is used outside its allocation") from None
        return self.builder.gep(base, [index], inbounds=inbounds, source_etype=storage_type(buf.dtype))

    def load_scalar(self, buf, index: ir.Value, lane: int | None = None) -> ir.Value:
        """One element; under ``load_mask`` read only if lane ``lane`` of the mask (any lane, for None) is set."""
        st = storage_type(buf.dtype)
        ptr = self.element_ptr(buf, index)
        if self.load_mask is not None:
            ptr = self.lane_pointer(ptr, lane)
        v = self.builder.load(ptr, typ=st, align=_elem_bytes(buf.dtype))
        if buf.dtype == "bool":
            return self.builder.icmp_unsigned("!=", v, ir.Constant(st, 0))
        return v

    def to_storage(self, buf, v: ir.Value) -> ir.Value:
        if buf.dtype == "bool":
            return self.builder.zext(v, vec(storage_type("bool"), self.lanes_of(v)))
        return v

    def index_value(self, e) -> ir.Value:
        """An int64 buffer index, with the terms of ``unrolled_vars`` added last (see the module docstring)."""
        inside = [v for v in self.unrolled_vars if uses_var(e, {v})]
        got = affine_coefficients(e, inside, self.bounds) if inside else None
        if got is None:
            return self.typed(e, "int64")
        coefs, rest = got
        value = self.typed(rest, "int64")
        for v in inside:
            c = coefs.get(v, 0)
            if c:
                value, term = self.match(value, self.imul(self.env[v], ir.Constant(I64, c)))
                value = self.iadd(value, term)
        return value

    def lane_layout(self, index_expr):
        """``(stride, rest)`` when ``index = stride * lane_var + rest``; None when not affine in the lane."""
        vc = self.vc
        got = affine_coefficients(index_expr, [vc.lane_var], self.bounds)
        if got is None:
            return None
        coefs, rest = got
        return coefs.get(vc.lane_var, 0), rest

    def _e_BufferLoad(self, e: E.BufferLoad):
        buf = e.buffer
        (index,) = e.indices
        if self.vc is None or self.is_invariant(index):
            return self.load_scalar(buf, self.index_value(index))
        vc = self.vc
        b = self.builder
        layout = self.lane_layout(index)
        if layout is not None and layout[0] == 1:
            start = self.iadd(self.index_value(layout[1]), vc.base)
            st = storage_type(buf.dtype)
            wide = _widened_lanes(vc.lanes, buf.dtype) if buf in getattr(self, "slack_buffers", ()) else None
            if self.load_mask is not None:
                v = self.masked_vector_load(buf, self.element_ptr(buf, start, inbounds=False), vc.lanes)
            elif wide is not None:
                # a ragged width (7 lanes of a 28-wide row) is split by LLVM into 4 + 2 + 1 loads and shuffles;
                # one power-of-two load of a buffer we allocated with spare bytes after it, narrowed, is one load
                v = b.load(self.element_ptr(buf, start), typ=ir.VectorType(st, wide), align=_elem_bytes(buf.dtype))
                return b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined),
                                        ir.Constant(ir.VectorType(I32, vc.lanes), list(range(vc.lanes))))
            else:
                v = b.load(self.element_ptr(buf, start), typ=ir.VectorType(st, vc.lanes),
                           align=_elem_bytes(buf.dtype))
            if buf.dtype == "bool":
                return b.icmp_unsigned("!=", v, ir.Constant(v.type, [0] * vc.lanes))
            return v
        # gather, scalarized: one load per lane (AVX2 gathers are no faster)
        idx = self.broadcast(self.index_value(index), vc.lanes)
        out = ir.Constant(ir.VectorType(value_type(buf.dtype), vc.lanes), ir.Undefined)
        for i in range(vc.lanes):
            lane_idx = b.extract_element(idx, ir.Constant(I32, i))
            out = b.insert_element(out, self.load_scalar(buf, lane_idx, i), ir.Constant(I32, i))
        return out


class _Opaque(E.PrimExpr):
    """An already-emitted value standing in for an operand (carries only its dtype)."""

    __slots__ = ("value",)

    def __init__(self, dtype: str, value):
        self.dtype = dtype
        self.value = value


def _safe_divisor(divisor, unsigned: bool) -> bool:
    """A divisor that can never trap: a non-zero constant (and not -1 for signed division), or a stand-in
    already made safe."""
    if isinstance(divisor, _Opaque):
        return True
    if isinstance(divisor, E.IntImm):
        return divisor.value != 0 and (unsigned or divisor.value != -1)
    return False


def _int_const(v) -> int | None:
    """The Python value of a scalar integer constant, else None."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType) and isinstance(v.constant, int):
        return v.constant
    return None


def _wrap(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if width > 1 and value >> (width - 1) else value


def _elem_bytes(dtype: str) -> int:
    return size_of(dtype)


# spare bytes the code generator leaves after every heap buffer it allocates (``FunctionEmitter._heap_alloc``)
ALLOC_SLACK_BYTES = 64


def _widened_lanes(lanes: int, dtype: str) -> int | None:
    """The power-of-two width to load ``lanes`` ragged lanes with, when the over-read fits in the slack."""
    if dtype == "bool" or lanes < 3 or lanes & (lanes - 1) == 0:
        return None
    wide = 1 << lanes.bit_length()
    return wide if (wide - lanes) * size_of(dtype) <= ALLOC_SLACK_BYTES else None
