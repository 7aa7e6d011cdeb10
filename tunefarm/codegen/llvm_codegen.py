"""Lowered functions to LLVM IR (llvmlite.ir): statements, allocations, and the per-function entry points.

Each PrimFunc ``name`` becomes, in one shared ``ir.Module``:
- ``__tf_<name>_compute(ptr noalias A, ptr noalias B, ..., i64 n, ...)``: the typed function, internal
  linkage (buffers in parameter order, then the symbolic dimensions in ``PrimFunc.symbolic_vars()`` order);
  a whole-model function in the same module calls these directly;
- ``void name(void** args)``: the exported packed entry (``tf_<name>`` when ``name`` is a C library
  symbol such as ``exp``). ``args[i]`` is the data pointer of parameter ``i`` and ``args[len(params)]``
  points to an ``int64`` *shape array*: the shapes of all parameters concatenated in parameter order
  (``ndim_0 + ndim_1 + ...`` entries). Symbolic dimensions are read from it; it may be NULL when the
  function has none.

The typed function is ``noinline``: LLVM optimizes the kernel once, with the buffer parameters ``noalias``,
instead of once before and once after inlining it into the entry (about 2.5 ms of compile time). Timing code
is not emitted here: one native timer per process calls entries through a pointer (``timing.py``).

Allocations: every ``Allocate`` is materialized once per LLVM function at its entry (allocas in the entry
block are what SROA promotes to registers): constant sizes up to ``STACK_LIMIT_BYTES`` are 64-byte-aligned
allocas, anything larger or symbolic is ``aligned_alloc(64, ...)`` freed at function exit (or around its
statement when the size depends on a loop variable).

Loops: ``counted_loop`` emits header-tested loops; a loop of kind ``unrolled`` (``unroll.py``) carries
``llvm.loop.unroll.full`` on its back edge (``loop_metadata.py``), and LLVM unrolls it (``llvm_compile.py``).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import llvmlite.ir as ir

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import const_bound
from ..ir.functor import collect_buffer_accesses, collect_vars
from ..ir.stmt_functor import StmtFunctor
from ..target import Target
from .llvm_exprs import ALLOC_SLACK_BYTES, ExprEmitter
from .llvm_types import I32, I64, PTR, VOID, alloca, declare, size_of, storage_type
from .loop_metadata import mark_back_edge, unroll_full_loop_id
from .lower import LoweredFunc
from .lower_blocks import LoweringError
from .parallel import emit_parallel
from .unroll import is_unrolled
from .vectorize import emit_vectorized

STACK_LIMIT_BYTES = 64 * 1024
ALIGN = 64
_BIG = 1 << 62
# C library names the generated code (or LLVM's backend, for math intrinsics and memset idioms) may call: a
# packed entry with one of these names would capture those calls, so it is exported as ``tf_<name>`` instead.
_LIBM = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "tanh", "sinh", "cosh", "sin",
         "cos", "tan", "asin", "acos", "atan", "atan2", "pow", "erf", "erfc", "floor", "ceil", "round",
         "roundeven", "trunc", "rint", "nearbyint", "fabs", "fmod", "fmin", "fmax", "ldexp", "frexp", "sincos")
RESERVED_SYMBOLS = frozenset(
    {n for base in _LIBM for n in (base, base + "f", base + "l")}
    | {"aligned_alloc", "malloc", "calloc", "realloc", "free", "clock_gettime", "memset", "memcpy", "memmove",
       "bzero", "abort", "GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads"})


def symbol_for(name: str) -> str:
    """The exported symbol of a function's packed entry: its name, unless that is a C library name."""
    return "tf_" + name if name in RESERVED_SYMBOLS else name


@dataclass
class FunctionInfo:
    """What the runtime needs to call one compiled PrimFunc (JSON-serializable via ``to_json``)."""

    name: str
    symbol: str
    compute_symbol: str
    params: list  # [{"name", "dtype", "shape": [int | str | [op, a, b]], "written": bool}]
    sym_vars: list  # names, in shape-array read order

    def to_json(self) -> dict:
        return {"name": self.name, "symbol": self.symbol, "compute_symbol": self.compute_symbol,
                "params": self.params, "sym_vars": self.sym_vars}

    @staticmethod
    def from_json(d: dict) -> "FunctionInfo":
        return FunctionInfo(d["name"], d["symbol"], d["compute_symbol"], d["params"], d["sym_vars"])


def dim_to_json(d, sym_names: dict):
    """A shape dimension as JSON: an int, a symbolic variable's name, or ``[op, a, b]``."""
    if isinstance(d, E.IntImm):
        return int(d.value)
    if isinstance(d, E.Var):
        return sym_names.get(d, d.name)
    if isinstance(d, E.Cast):
        return dim_to_json(d.value, sym_names)
    if isinstance(d, E.Binary) and d.op in ("+", "-", "*", "//", "%", "min", "max"):
        return [d.op, dim_to_json(d.a, sym_names), dim_to_json(d.b, sym_names)]
    raise LoweringError(f"parameter shape dimension {d!r} is not an integer expression of symbolic variables")


class ModuleEmitter:
    """Collects the functions of one LLVM module for one target."""

    def __init__(self, target: Target):
        self.target = target
        self.module = ir.Module(name="tunefarm")
        self.uses_gomp = False
        self._counter = 0
        self.functions: list[FunctionInfo] = []

    def fresh_name(self, base: str) -> str:
        self._counter += 1
        return f"{base}.{self._counter}"

    def add(self, lowered: LoweredFunc) -> FunctionInfo:
        name = lowered.name
        if not name or name.startswith("__tf_") or name.startswith("llvm."):
            raise LoweringError(f"function name {name!r} is reserved by the code generator; rename the function")
        if any(f.name == name for f in self.functions) or self.module.globals.get(symbol_for(name)) is not None:
            raise LoweringError(f"two functions named {name!r} in one module")
        compute = self._emit_compute(lowered)
        packed = self._emit_packed(lowered, compute)
        sym_names = {}
        for p in lowered.params:
            for v in p.symbolic_vars():
                sym_names[v] = v.name
        _, written = collect_buffer_accesses(lowered.body)
        written = set(written)
        params = [{"name": p.name, "dtype": p.dtype, "shape": [dim_to_json(d, sym_names) for d in p.shape],
                   "written": fp in written}
                  for p, fp in zip(lowered.params, lowered.flat_params)]
        info = FunctionInfo(name, packed.name, compute.name, params, [b.name for b in lowered.sym_vars])
        self.functions.append(info)
        return info

    def _emit_compute(self, lowered: LoweredFunc) -> ir.Function:
        nparams = len(lowered.flat_params)
        ftype = ir.FunctionType(VOID, [PTR] * nparams + [I64] * len(lowered.sym_vars))
        fn = ir.Function(self.module, ftype, f"__tf_{lowered.name}_compute")
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        fn.attributes.add("noinline")  # optimized once (see the module docstring)
        fe = FunctionEmitter(self, fn, in_parallel=False)
        for arg, buf in zip(fn.args[:nparams], lowered.flat_params):
            arg.add_attribute("noalias")
            arg.name = buf.name
            fe.buffers[buf] = arg
        for arg, binding in zip(fn.args[nparams:], lowered.sym_vars):
            arg.name = binding.name
            fe.env[binding.var] = arg
            fe.bounds[binding.var] = (0, _BIG)
            fe.entry_vars.add(binding.var)
        fe.visit(lowered.body)
        fe.finish()
        return fn

    def _emit_packed(self, lowered: LoweredFunc, compute: ir.Function) -> ir.Function:
        fn = ir.Function(self.module, ir.FunctionType(VOID, [PTR]), symbol_for(lowered.name))
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        args = fn.args[0]
        ptrs = []
        for i in range(len(lowered.flat_params)):
            slot = b.gep(args, [ir.Constant(I64, i)], inbounds=True, source_etype=PTR)
            ptrs.append(b.load(slot, typ=PTR, align=8))
        sym_vals = []
        if lowered.sym_vars:
            slot = b.gep(args, [ir.Constant(I64, len(lowered.flat_params))], inbounds=True, source_etype=PTR)
            shapes = b.load(slot, typ=PTR, align=8)
            offsets = []
            acc = 0
            for p in lowered.params:
                offsets.append(acc)
                acc += p.ndim
            for binding in lowered.sym_vars:
                pos = offsets[binding.param] + binding.dim
                sym_vals.append(b.load(b.gep(shapes, [ir.Constant(I64, pos)], inbounds=True, source_etype=I64),
                                       typ=I64, align=8))
        b.call(compute, ptrs + sym_vals)
        b.ret_void()
        return fn


class FunctionEmitter(ExprEmitter, StmtFunctor):
    """Emits statements into one LLVM function (the typed function or an outlined parallel body)."""

    def __init__(self, owner: ModuleEmitter, fn: ir.Function, in_parallel: bool):
        self.owner = owner
        self.module = owner.module
        self.target = owner.target
        self.fn = fn
        self.in_parallel = in_parallel
        self.entry = fn.append_basic_block("entry")
        self.entry_builder = ir.IRBuilder(self.entry)
        self.first_block = fn.append_basic_block("body")
        self.builder = ir.IRBuilder(self.first_block)
        self.env: dict = {}
        self.buffers: dict = {}
        self.slack_buffers: set = set()  # heap buffers with >= ALIGN bytes after their end (see _heap_alloc)
        self.bounds: dict = {}
        self.entry_vars: set = set()  # variables whose values exist at function entry
        self.vc = None
        self.unrolled_vars: list = []  # see ExprEmitter.index_value
        self._frees: list = []

    # ------------------------------------------------------------------ structure
    def finish(self) -> None:
        self.entry_builder.branch(self.first_block)
        b = self.builder
        if self._frees:
            free = declare(self.module, "free", VOID, [PTR], attrs=("nounwind",))
            for p in self._frees:
                b.call(free, [p])
        b.ret_void()

    @contextlib.contextmanager
    def at_entry(self):
        saved = self.builder
        self.builder = self.entry_builder
        try:
            yield
        finally:
            self.builder = saved

    def generic_visit(self, s) -> None:
        raise LoweringError(f"cannot generate code for statement {type(s).__name__}")

    def visit_SeqStmt(self, s: S.SeqStmt):
        for x in s.seq:
            self.visit(x)

    def visit_Evaluate(self, s: S.Evaluate):
        self.expr(s.value)

    def visit_IfThenElse(self, s: S.IfThenElse):
        cond = self.typed(s.condition, "bool")
        b = self.builder
        if s.else_case is None:
            with b.if_then(cond):
                self.visit(s.then_case)
        else:
            with b.if_else(cond) as (then, otherwise):
                with then:
                    self.visit(s.then_case)
                with otherwise:
                    self.visit(s.else_case)

    def visit_BufferStore(self, s: S.BufferStore):
        buf = s.buffer
        (index,) = s.indices
        value = self.typed(s.value, buf.dtype)
        b = self.builder
        align = size_of(buf.dtype)
        vc = self.vc
        if vc is None:
            b.store(self.to_storage(buf, value), self.element_ptr(buf, self.index_value(index)), align=align)
            return
        lanes = vc.lanes
        value = self.broadcast(value, lanes)
        layout = None if self.is_invariant(index) else self.lane_layout(index)
        if layout is not None and layout[0] == 1:
            start = self.iadd(self.index_value(layout[1]), vc.base)
            b.store(self.to_storage(buf, value), self.element_ptr(buf, start), align=align)
            return
        # scatter in lane order (legality was checked by vectorize.py)
        idx = self.broadcast(self.index_value(index), lanes)
        stored = self.to_storage(buf, value)
        for i in range(lanes):
            lane = ir.Constant(I32, i)
            b.store(b.extract_element(stored, lane), self.element_ptr(buf, b.extract_element(idx, lane)),
                    align=align)

    def visit_For(self, s: S.For):
        if s.kind == "vectorized":
            if emit_vectorized(self, s):
                return
        elif s.kind == "parallel" and not self.in_parallel:
            if emit_parallel(self, s):
                return
        begin = self.typed(s.min, "int64")
        end = self.iadd(begin, self.typed(s.extent, "int64"))
        self.counted_loop(s.loop_var, begin, end, lambda: self.visit(s.body), self.loop_bound(s),
                          unroll_full=is_unrolled(s))

    def loop_bound(self, s: S.For):
        lo = s.min.value if isinstance(s.min, E.IntImm) else None
        if lo is None:
            bd = self.bound_of(s.min)
            lo = bd[0] if bd is not None else None
        if lo is None:
            return None
        ext = s.extent.value if isinstance(s.extent, E.IntImm) else None
        if ext is not None and isinstance(s.min, E.IntImm):
            return (lo, lo + ext - 1)
        return (lo, _BIG)

    def bound_of(self, e):
        return const_bound(e, self.bounds)

    def counted_loop(self, var, begin: ir.Value, end: ir.Value, emit_body, bound=None,
                     unroll_full: bool = False) -> None:
        """``for var in [begin, end)``: a header-tested loop with a 64-bit induction variable; with
        ``unroll_full`` (constant bounds only) its back edge asks LLVM to unroll it completely."""
        b = self.builder
        pre = b.block
        header = b.append_basic_block("for.head")
        body = b.append_basic_block("for.body")
        done = b.append_basic_block("for.end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64, name=getattr(var, "name", "i"))
        i.add_incoming(begin, pre)
        b.cbranch(b.icmp_signed("<", i, end), body, done)
        b.position_at_end(body)
        old_env, old_bound = self.env.get(var), self.bounds.get(var)
        self.env[var] = i
        if bound is not None:
            self.bounds[var] = bound
        if unroll_full:
            self.unrolled_vars.append(var)
        try:
            emit_body()
        finally:
            if unroll_full:
                self.unrolled_vars.pop()
        nxt = self.builder.add(i, ir.Constant(I64, 1), flags=("nsw",))
        i.add_incoming(nxt, self.builder.block)
        back_edge = self.builder.branch(header)
        if unroll_full:
            mark_back_edge(back_edge, unroll_full_loop_id(self.module))
        self.builder.position_at_end(done)
        _restore(self.env, var, old_env)
        _restore(self.bounds, var, old_bound)

    def visit_Allocate(self, s: S.Allocate):
        buf = s.buffer
        if buf in self.buffers:  # the same allocation reached again (a copy made by unrolling in the IR)
            self.visit(s.body)
            return
        (size_expr,) = buf.shape
        esize = size_of(buf.dtype)
        elem = storage_type(buf.dtype)
        if isinstance(size_expr, E.IntImm) and size_expr.value * esize <= STACK_LIMIT_BYTES:
            with self.at_entry():
                ptr = alloca(self.builder, ir.ArrayType(elem, max(1, size_expr.value)), ALIGN, buf.name)
            self.buffers[buf] = ptr
            self.visit(s.body)
            return
        at_entry = all(v in self.entry_vars for v in collect_vars(size_expr))
        ctx = self.at_entry() if at_entry else contextlib.nullcontext()
        with ctx:
            ptr = self._heap_alloc(size_expr, esize)
        self.buffers[buf] = ptr
        self.slack_buffers.add(buf)
        if at_entry:
            self._frees.append(ptr)
            self.visit(s.body)
        else:
            self.visit(s.body)
            self.builder.call(declare(self.module, "free", VOID, [PTR], attrs=("nounwind",)), [ptr])
            del self.buffers[buf]
            self.slack_buffers.discard(buf)

    def _heap_alloc(self, size_expr, esize: int) -> ir.Value:
        b = self.builder
        n = self.typed(size_expr, "int64")
        nbytes = b.mul(n, ir.Constant(I64, esize))
        # aligned_alloc wants a multiple of the alignment; never ask for zero bytes. The size is rounded up past
        # at least ALIGN spare bytes, which a widened ragged vector load may read (ExprEmitter._e_BufferLoad)
        rounded = b.and_(b.add(nbytes, ir.Constant(I64, ALLOC_SLACK_BYTES + ALIGN - 1)), ir.Constant(I64, -ALIGN))
        fn = declare(self.module, "aligned_alloc", PTR, [I64, I64], attrs=("nounwind",))
        return b.call(fn, [ir.Constant(I64, ALIGN), rounded])


def _restore(d: dict, key, old) -> None:
    if old is None:
        d.pop(key, None)
    else:
        d[key] = old


@dataclass
class ModuleIR:
    """The output of code generation before LLVM runs: llvmlite module plus per-function metadata."""

    module: ir.Module
    functions: list = field(default_factory=list)
    uses_gomp: bool = False


def emit_module(lowered_funcs, target: Target) -> ModuleIR:
    """LLVM IR for several lowered functions sharing one module."""
    em = ModuleEmitter(target)
    for lf in lowered_funcs:
        em.add(lf)
    return ModuleIR(em.module, em.functions, em.uses_gomp)
