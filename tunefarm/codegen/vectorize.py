"""``vectorized`` loops as explicit vector IR, or a correct scalar loop when that would change the meaning.

A vectorized loop runs all lanes of each statement before the next statement. That equals the serial loop
when the body is straight-line code (stores, and ``if``s whose condition does not depend on the lane) and no
lane reads what another lane writes. The check used here is conservative and simple: every buffer written
in the body must be accessed with one and the same index everywhere in the body, and if it is also read that
index must move with the lane (non-zero stride), so each lane owns its element. Anything else (a nested loop,
an allocation, a lane-dependent branch, a reduction across lanes) is emitted as the serial loop instead:
never miscompiled.

Unit-stride accesses become vector loads/stores, lane-invariant ones stay scalar and are broadcast where they
meet vectors, other strides are gathered/scattered one lane at a time. Extents up to ``MAX_LANES`` are one
vector; longer loops run chunks of ``CHUNK_BITS`` worth of lanes plus a tail.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import affine_coefficients, simplify
from ..ir.dtype import bits
from ..ir.functor import IRVisitor, uses_var
from ..ir.stmt_functor import StmtFunctor
from .llvm_exprs import VectorContext
from .llvm_types import I64

MAX_LANES = 64
CHUNK_BITS = 512


class _Accesses(IRVisitor):
    def __init__(self):
        self.loads: list = []  # (buffer, index)

    def visit_BufferLoad(self, node: E.BufferLoad):
        self.loads.append((node.buffer, node.indices[0]))
        super().visit_BufferLoad(node)


class _StraightLine(StmtFunctor):
    """The stores, loads and widest dtype of a straight-line body; ``visit`` is False when the body is not
    straight-line (a nested loop, an allocation, a condition on the lane)."""

    def __init__(self, lane: E.Var):
        self.lane = lane
        self.stores: list = []
        self.acc = _Accesses()
        self.widest = 8

    def visit_SeqStmt(self, s: S.SeqStmt) -> bool:
        return all(self.visit(x) for x in s.seq)

    def visit_BufferStore(self, s: S.BufferStore) -> bool:
        self.stores.append((s.buffer, s.indices[0]))
        self.widest = max(self.widest, bits(s.buffer.dtype))
        self.acc.visit(s.value)
        self.acc.visit(s.indices[0])
        return True

    def visit_IfThenElse(self, s: S.IfThenElse) -> bool:
        if uses_var(s.condition, {self.lane}):
            return False
        self.acc.visit(s.condition)
        return self.visit(s.then_case) and (s.else_case is None or self.visit(s.else_case))

    def visit_Evaluate(self, s: S.Evaluate) -> bool:
        self.acc.visit(s.value)
        return True

    def generic_visit(self, s) -> bool:
        return False  # nested loops, allocations


def _collect(body, lane: E.Var):
    """(stores, loads, widest dtype bits) of a straight-line body, or None if it is not straight-line."""
    walk = _StraightLine(lane)
    if not walk.visit(body):
        return None
    return walk.stores, walk.acc.loads, walk.widest


def _same_index(a, b) -> bool:
    if a is b:
        return True
    d = simplify(E.sub(a, b))
    return isinstance(d, E.IntImm) and d.value == 0


def can_vectorize(loop: S.For) -> bool:
    """Whether running the body lane-parallel is equivalent to the serial loop (see the module docstring)."""
    return _vector_plan(loop) is not None


def _vector_plan(loop: S.For) -> int | None:
    """The widest element size (bits) of a vectorizable body, or None when it must run serially."""
    got = _collect(loop.body, loop.loop_var)
    if got is None:
        return None
    stores, loads, widest = got
    written = {}
    for buf, idx in stores:
        written.setdefault(buf, []).append(idx)
    read = {}
    for buf, idx in loads:
        if buf in written:
            read.setdefault(buf, []).append(idx)
    for buf, idxs in written.items():
        if buf not in read:
            continue
        ref = idxs[0]
        if not all(_same_index(ref, x) for x in idxs[1:] + read[buf]):
            return None
        aff = affine_coefficients(ref, [loop.loop_var])
        if aff is None or aff[0].get(loop.loop_var, 0) == 0:
            return None
    return widest


def emit_vectorized(fe, loop: S.For) -> bool:
    """Emit ``loop`` as vector code into FunctionEmitter ``fe``; False means "emit it serially instead"."""
    extent = loop.const_extent()
    if extent is None or extent < 2 or fe.vc is not None:
        return False
    widest = _vector_plan(loop)
    if widest is None:
        return False
    begin = fe.typed(loop.min, "int64")
    lo = loop.min.value if isinstance(loop.min, E.IntImm) else None
    if extent <= MAX_LANES:
        _emit_chunk(fe, loop, begin, extent, None if lo is None else (lo, lo + extent - 1))
        return True
    width = max(2, CHUNK_BITS // widest)
    full, tail = divmod(extent, width)
    counter = E.Var(loop.loop_var.name + ".chunk", "int64")

    def chunk_body():
        base = fe.iadd(begin, fe.imul(fe.env[counter], ir.Constant(I64, width)))
        _emit_chunk(fe, loop, base, width, None if lo is None else (lo, lo + extent - 1))

    fe.counted_loop(counter, ir.Constant(I64, 0), ir.Constant(I64, full), chunk_body)
    if tail:
        base = fe.iadd(begin, ir.Constant(I64, full * width))
        if tail == 1:
            old = fe.env.get(loop.loop_var)
            fe.env[loop.loop_var] = base
            fe.visit(loop.body)
            if old is None:
                fe.env.pop(loop.loop_var, None)
            else:
                fe.env[loop.loop_var] = old
        else:
            _emit_chunk(fe, loop, base, tail, None if lo is None else (lo, lo + extent - 1))
    return True


def _emit_chunk(fe, loop: S.For, base: ir.Value, lanes: int, bound) -> None:
    vc = VectorContext(loop.loop_var, lanes, base)
    fe.vc = vc
    old_bound = fe.bounds.get(loop.loop_var)
    if bound is not None:
        fe.bounds[loop.loop_var] = bound
    try:
        fe.expr(loop.loop_var)  # build the lane ramp here, where it dominates every use in the body
        fe.visit(loop.body)
    finally:
        fe.vc = None
        if old_bound is None:
            fe.bounds.pop(loop.loop_var, None)
        else:
            fe.bounds[loop.loop_var] = old_bound
