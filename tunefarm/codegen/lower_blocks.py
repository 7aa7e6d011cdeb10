"""Blocks to plain loop nests.

Every ``BlockRealize`` disappears: its iteration variables are replaced by their bindings, its predicate
becomes an ``if``, its ``init`` (when the reduction was not decomposed) becomes a statement guarded by "every
reduction variable is at its domain minimum" (TensorIR's init semantics), and its allocations are collected
for placement (``alloc_plan``). Loop variables and symbolic dimensions are renamed to fresh ``int64``
variables on the way, so that all index arithmetic downstream is 64-bit (no overflow on large tensors, one
integer type for the code generator to reason about).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.functor import substitute
from ..ir.stmt_functor import StmtFunctor
from .unroll import auto_unroll, max_step_of


class LoweringError(ValueError):
    """The function cannot be lowered (unbound variable, unsupported construct, ...)."""


@dataclass
class BlockLoweringResult:
    body: S.Stmt
    allocations: list = field(default_factory=list)  # Buffers from every block's alloc_buffers, in order
    sym_map: dict = field(default_factory=dict)  # original symbolic Var -> int64 Var


def _int64_var(v: E.Var) -> E.Var:
    return E.Var(v.name, "int64")


class _BlockLowerer(StmtFunctor):
    def __init__(self, sym_map: dict):
        self.vmap: dict = dict(sym_map)
        self.allocations: list[Buffer] = []

    def expr(self, e):
        return substitute(e, self.vmap) if e is not None else None

    def generic_visit(self, s):
        raise LoweringError(f"cannot lower statement {type(s).__name__}")

    def visit_SeqStmt(self, s: S.SeqStmt):
        return S.seq([self.visit(x) for x in s.seq])

    def visit_For(self, s: S.For):
        new_var = _int64_var(s.loop_var)
        lo, ext = E.cast("int64", self.expr(s.min)), E.cast("int64", self.expr(s.extent))
        self.vmap[s.loop_var] = new_var
        try:
            body = self.visit(s.body)
        finally:
            del self.vmap[s.loop_var]
        return S.For(new_var, lo, ext, s.kind, body if body is not None else S.SeqStmt(()), s.annotations)

    def visit_BlockRealize(self, r: S.BlockRealize):
        block = r.block
        values = [self.expr(v) for v in r.iter_values]
        predicate = self.expr(r.predicate)
        saved = {iv.var: self.vmap.get(iv.var) for iv in block.iter_vars}
        for iv, val in zip(block.iter_vars, values):
            self.vmap[iv.var] = val
        try:
            self.allocations.extend(block.alloc_buffers)
            body = self.visit(block.body)
            if block.init is not None:
                cond = E.const(True, "bool")
                for iv, val in zip(block.iter_vars, values):
                    if iv.iter_type == "R":
                        cond = E.logical_and(cond, E.compare("==", val, self.expr(iv.dom.min)))
                init = self.visit(block.init)
                body = S.seq(init if _is_true(cond) else S.IfThenElse(cond, init), body)
        finally:
            for var, old in saved.items():
                if old is None:
                    self.vmap.pop(var, None)
                else:
                    self.vmap[var] = old
        max_step = max_step_of(block.annotations)
        if max_step is not None:
            body = auto_unroll(body, max_step)
        if not _is_true(predicate):
            body = S.IfThenElse(predicate, body)
        return body

    def visit_Block(self, b: S.Block):  # a bare block (no realize): treat as a realize with no bindings
        return self.visit_BlockRealize(S.BlockRealize((), S.TRUE, b)) if not b.iter_vars else _bare_block_error(b)

    def visit_IfThenElse(self, s: S.IfThenElse):
        return S.IfThenElse(self.expr(s.condition), self.visit(s.then_case),
                            self.visit(s.else_case) if s.else_case is not None else None)

    def visit_BufferStore(self, s: S.BufferStore):
        return S.BufferStore(s.buffer, self.expr(s.value), tuple(self.expr(i) for i in s.indices))

    def visit_Evaluate(self, s: S.Evaluate):
        return S.Evaluate(self.expr(s.value))

    def visit_Allocate(self, s: S.Allocate):
        self.allocations.append(s.buffer)
        return self.visit(s.body)


def _bare_block_error(b):
    raise LoweringError(f"block {b.name!r} has iteration variables but no BlockRealize binding them")


def _is_true(e) -> bool:
    return isinstance(e, E.IntImm) and e.value != 0


def lower_blocks(body: S.Stmt, symbolic_vars) -> BlockLoweringResult:
    """Lower ``body`` (a PrimFunc body) to loops; ``symbolic_vars`` are the function's shape variables."""
    sym_map = {v: _int64_var(v) for v in symbolic_vars}
    lowerer = _BlockLowerer(sym_map)
    out = lowerer.visit(body)
    seen: dict = {}
    for b in lowerer.allocations:
        seen.setdefault(b, None)
    return BlockLoweringResult(out if out is not None else S.SeqStmt(()), list(seen), sym_map)
