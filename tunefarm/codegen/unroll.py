"""Which loops are unrolled (TVM's rules), and where the copying happens (mostly in LLVM).

Which: an ``unrolled`` loop with a constant range; and, under ``pragma_auto_unroll_max_step = N`` on a loop
(``For.annotations``) or a block (``Block.annotations``), every serial constant-range loop whose inner loops
are all unrolled (or vectorized) and whose ``extent * statements-per-iteration`` is at most ``N`` (TVM's
UnrollLoop rule, applied bottom-up). Pragmas are hints: a value that is not a number is ignored. An
``unrolled`` loop whose range is not constant runs as a serial loop.

Where: a loop to unroll leaves lowering as a loop of kind ``unrolled``; the code generator attaches
``llvm.loop.unroll.full`` to its back edge (``loop_metadata.py``) and LLVM unrolls it before its O2 pipeline
(``llvm_compile.py``), which then sees the constant indices that let SROA keep a ``local`` accumulator tile
in registers. Copying the body here instead made every later Python pass (flatten, emission) and the IR text
work on the unrolled size (lowering and emission up to ~1 s more per ``max_step = 512`` candidate).
Explicit ``unrolled`` loops take the same path: measured on the hand-written matmul schedules and the graph's
default schedules, the machine code is identical either way.

Some loops are still copied here, with the loop variable replaced by constants, because how a vectorized
loop is emitted is decided in Python from its (flattened, simplified) indices:
- loops inside a ``vectorized`` loop: ``vectorize.py`` only emits vector code for straight-line bodies;
- loops whose variable meets the lane of a vectorized loop inside them in an index that is not affine or in
  a condition (a convolution's padding: ``data[..., min(max(x + rx - 1, 0), 27)]`` under
  ``x + rx >= 1 and ...``): with ``rx`` a constant, simplification often turns the gather into a vector load
  and drops the condition, which LLVM cannot do after unrolling;
- everything, when ``unroll_loops(..., in_ir=True)`` is asked for (the old behaviour, kept for benchmarks
  and comparisons).
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import affine_coefficients, simplify
from ..ir.functor import IRVisitor, substitute, uses_var
from ..ir.stmt_functor import StmtFunctor, StmtMutator, iter_stmts

AUTO_UNROLL_KEY = "pragma_auto_unroll_max_step"
UNROLLED = "unrolled"


def max_step_of(annotations: dict) -> int | None:
    """The annotation's step limit; pragmas are hints, so a non-numeric value is ignored rather than fatal."""
    value = annotations.get(AUTO_UNROLL_KEY)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if hasattr(value, "value") and isinstance(getattr(value, "value"), (int, float)):  # an IntImm
            return int(value.value)
        return None
    return int(value)


def _can_unroll(loop: S.For) -> bool:
    return loop.const_extent() is not None and isinstance(loop.min, E.IntImm)


def is_unrolled(loop: S.For) -> bool:
    """Whether ``loop`` will be fully unrolled (by LLVM, or here): kind ``unrolled`` with a constant range."""
    return loop.kind == UNROLLED and _can_unroll(loop)


def _copies(loop: S.For) -> S.Stmt:
    n = loop.const_extent()
    lo = loop.min.value if isinstance(loop.min, E.IntImm) else None
    if n is None or lo is None:
        raise ValueError("only constant-range loops can be unrolled")
    dtype = loop.loop_var.dtype
    return S.seq([substitute(loop.body, {loop.loop_var: E.const(lo + k, dtype)}) for k in range(n)]) \
        if n > 0 else S.SeqStmt(())


class _StepCount(StmtFunctor):
    def visit_SeqStmt(self, s: S.SeqStmt) -> int:
        return sum(self.visit(x) for x in s.seq)

    def visit_For(self, s: S.For) -> int:
        inner = self.visit(s.body)
        if s.kind == "vectorized":
            return inner
        ext = s.const_extent()
        return inner * (ext if ext is not None else 1 << 30)

    def visit_IfThenElse(self, s: S.IfThenElse) -> int:
        return self.visit(s.then_case) + (self.visit(s.else_case) or 0)

    def visit_Allocate(self, s: S.Allocate) -> int:
        return self.visit(s.body)

    def generic_visit(self, s) -> int:
        return 1


def step_count(s: S.Stmt | None) -> int:
    """Statements executed by ``s`` once all its loops are counted (a vectorized loop counts once)."""
    return _StepCount().visit(s) or 0


def _has_rolled_loop(s: S.Stmt | None) -> bool:
    """Whether a loop that is neither vectorized nor unrolled remains under ``s``."""
    return any(isinstance(n, S.For) and not (n.kind == "vectorized" or is_unrolled(n)) for n in iter_stmts(s))


class _FlatRewrite(StmtMutator):
    """The rewrites here rebuild sequences flat, so that the copies of an unrolled loop splice into the
    sequence around it."""

    def visit_SeqStmt(self, s: S.SeqStmt, *args):
        return S.seq([self.visit(x, *args) for x in s.seq])


class _AutoUnroll(_FlatRewrite):
    def __init__(self, max_step: int):
        self.max_step = max_step

    def visit_For(self, s: S.For):
        body = self.visit(s.body)
        loop = s.replace(body=body) if body is not s.body else s
        if (loop.kind in ("serial", UNROLLED) and _can_unroll(loop) and not _has_rolled_loop(body)
                and loop.const_extent() * max(1, step_count(body)) <= self.max_step):
            return loop if loop.kind == UNROLLED else loop.replace(kind=UNROLLED)
        return loop


def auto_unroll(s: S.Stmt | None, max_step: int) -> S.Stmt | None:
    """Mark (kind ``unrolled``) the small serial loops under ``s``, bottom-up (TVM's ``auto_max_step`` rule)."""
    if s is None or max_step <= 0:
        return s
    return _AutoUnroll(max_step).visit(s)


class _Mark(_FlatRewrite):
    """Apply loop ``pragma_auto_unroll_max_step`` annotations; non-constant ``unrolled`` loops become serial."""

    def visit_For(self, s: S.For):
        loop = s.replace(body=self.visit(s.body))
        max_step = max_step_of(loop.annotations)
        if max_step is not None:
            loop = auto_unroll(loop, max_step)
        if loop.kind == UNROLLED and not _can_unroll(loop):
            loop = loop.replace(kind="serial")
        return loop


def _with_bounds(bounds: dict, loop: S.For) -> dict:
    if not _can_unroll(loop):
        return bounds
    lo = loop.min.value
    return {**bounds, loop.loop_var: (lo, lo + loop.const_extent() - 1)}


class _LaneMix(IRVisitor):
    """Finds, inside a vectorized loop, an index that is not affine in (lane, ``var``) or a condition
    depending on both: where a constant ``var`` may change how the vectorized loop is emitted."""

    def __init__(self, var: E.Var, bounds: dict):
        self.var = var
        self.bounds = bounds
        self.lane = None
        self.found = False

    def visit(self, node):
        if not self.found:
            super().visit(node)

    def visit_For(self, s: S.For):
        saved = self.bounds, self.lane
        self.bounds = _with_bounds(self.bounds, s)
        if s.kind == "vectorized" and self.lane is None:
            self.lane = s.loop_var
        try:
            self.visit(s.body)
        finally:
            self.bounds, self.lane = saved

    def _mixes(self, e) -> bool:
        return self.lane is not None and uses_var(e, {self.lane}) and uses_var(e, {self.var})

    def _index(self, e) -> None:
        if self._mixes(e) and affine_coefficients(simplify(e, self.bounds), [self.lane, self.var],
                                                  self.bounds) is None:
            self.found = True

    def _condition(self, e) -> None:
        if self._mixes(e) and not isinstance(simplify(e, self.bounds), E.IntImm):
            self.found = True

    def visit_BufferLoad(self, node: E.BufferLoad):
        for i in node.indices:
            self._index(i)
        super().visit_BufferLoad(node)

    def visit_BufferStore(self, node: S.BufferStore):
        for i in node.indices:
            self._index(i)
        super().visit_BufferStore(node)

    def visit_Select(self, node: E.Select):
        self._condition(node.cond)
        self.generic_visit(node)

    def visit_IfThenElse(self, s: S.IfThenElse):
        self._condition(s.condition)
        self.generic_visit(s)


def _lane_mixed(loop: S.For, bounds: dict) -> bool:
    finder = _LaneMix(loop.loop_var, _with_bounds(bounds, loop))
    finder.visit(loop.body)
    return finder.found


class _Expand(_FlatRewrite):
    """Copy the unrolled loops that must not reach LLVM as loops (see the module docstring). Passed down:
    whether a vectorized loop is around, and the constant ranges of the loops around."""

    def __init__(self, everything: bool):
        self.everything = everything

    def visit_For(self, s: S.For, in_vector: bool, bounds: dict):
        inner = in_vector or s.kind == "vectorized"
        loop = s.replace(body=self.visit(s.body, inner, _with_bounds(bounds, s)))
        if is_unrolled(loop) and (self.everything or in_vector or _lane_mixed(loop, bounds)):
            return _copies(loop)
        return loop


def unroll_loops(s: S.Stmt | None, in_ir: bool = False) -> S.Stmt | None:
    """Decide the unrolled loops under ``s`` (kind ``unrolled`` on return, for LLVM to copy); with ``in_ir``
    copy all of them here instead. Loops inside vectorized loops are always copied here."""
    return _Expand(in_ir).visit(_Mark().visit(s), False, {})
