"""Buffer flattening (row-major, symbolic shapes allowed) and index simplification with loop bounds.

After this pass every buffer is one-dimensional and every index is ``arith.simplify``-ed under the ranges of
the enclosing loops, so split/fuse arithmetic (``(i0 * 4 + i1) // 32``) folds back to affine form and the
code generator sees unit strides and constant offsets where they exist. Conditions proven true or false are
removed here (predicates of divisible splits, inits of decomposed reductions), and single-iteration loops
are replaced by their body.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import simplify
from ..ir.buffer import Buffer
from ..ir.functor import IRMutator, substitute
from ..ir.stmt_functor import is_empty_stmt


def flat_size(buf: Buffer, sym_map: dict) -> E.PrimExpr:
    size: E.PrimExpr = E.const(1, "int64")
    for d in buf.shape:
        size = E.mul(size, E.cast("int64", substitute(d, sym_map)))
    return simplify(size)


def row_major_strides(buf: Buffer, sym_map: dict) -> list:
    strides = []
    acc: E.PrimExpr = E.const(1, "int64")
    for d in reversed(buf.shape):
        strides.append(acc)
        acc = simplify(E.mul(acc, E.cast("int64", substitute(d, sym_map))))
    return list(reversed(strides))


class _Flattener(IRMutator):
    def __init__(self, sym_map: dict):
        self.sym_map = sym_map
        self.flat: dict = {}  # Buffer -> (flat Buffer, strides)
        self.bounds: dict = {}
        # variables of removed single-iteration loops -> their (visited) value, replaced as the walk meets them
        # (substituting into the loop body first rebuilt it once per such loop: a quarter of lowering time)
        self.values: dict = {}

    def flat_buffer(self, buf: Buffer):
        got = self.flat.get(buf)
        if got is None:
            fb = Buffer(buf.name, (flat_size(buf, self.sym_map),), buf.dtype, buf.scope)
            got = (fb, row_major_strides(buf, self.sym_map))
            self.flat[buf] = got
        return got

    def flat_index(self, buf: Buffer, indices) -> tuple:
        if len(indices) != buf.ndim:
            raise ValueError(f"buffer {buf.name!r} has {buf.ndim} dimensions but is indexed with {len(indices)}")
        fb, strides = self.flat_buffer(buf)
        idx: E.PrimExpr = E.const(0, "int64")
        for i, st in zip(indices, strides):
            idx = E.add(idx, E.mul(E.cast("int64", self.visit(i)), st))
        return fb, simplify(idx, self.bounds)

    # ------------------------------------------------------------------ expressions
    def visit_Var(self, node: E.Var):
        return self.values.get(node, node)

    def visit_BufferLoad(self, node: E.BufferLoad):
        fb, idx = self.flat_index(node.buffer, node.indices)
        return E.BufferLoad(fb, (idx,))

    def visit_Select(self, node: E.Select):
        return E.select(self.cond(node.cond), self.visit(node.true_value), self.visit(node.false_value))

    def cond(self, e):
        return simplify(self.visit(e), self.bounds)

    # ------------------------------------------------------------------ statements
    def visit_BufferStore(self, s: S.BufferStore):
        fb, idx = self.flat_index(s.buffer, s.indices)
        return S.BufferStore(fb, self.visit(s.value), (idx,))

    def visit_SeqStmt(self, s: S.SeqStmt):
        return S.seq([x for x in (self.visit(y) for y in s.seq) if not is_empty_stmt(x)])

    def visit_IfThenElse(self, s: S.IfThenElse):
        c = self.cond(s.condition)
        if isinstance(c, E.IntImm):
            chosen = s.then_case if c.value else s.else_case
            return self.visit(chosen) if chosen is not None else S.SeqStmt(())
        then = self.visit(s.then_case)
        other = self.visit(s.else_case) if s.else_case is not None else None
        if other is not None and is_empty_stmt(other):
            other = None
        if is_empty_stmt(then) and other is None:
            return S.SeqStmt(())
        return S.IfThenElse(c, then, other)

    def visit_For(self, s: S.For):
        lo = simplify(self.visit(s.min), self.bounds)
        ext = simplify(self.visit(s.extent), self.bounds)
        if isinstance(ext, E.IntImm) and ext.value <= 0:
            return S.SeqStmt(())
        if isinstance(ext, E.IntImm) and ext.value == 1:
            self.values[s.loop_var] = lo
            try:
                return self.visit(s.body)
            finally:
                del self.values[s.loop_var]
        old = self.bounds.get(s.loop_var)
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            self.bounds[s.loop_var] = (lo.value, lo.value + ext.value - 1)
        try:
            body = self.visit(s.body)
        finally:
            if old is None:
                self.bounds.pop(s.loop_var, None)
            else:
                self.bounds[s.loop_var] = old
        if is_empty_stmt(body):
            return S.SeqStmt(())
        return S.For(s.loop_var, lo, ext, s.kind, body, s.annotations)

    def visit_Allocate(self, s: S.Allocate):
        fb, _ = self.flat_buffer(s.buffer)
        body = self.visit(s.body)
        return S.Allocate(fb, body)

    def visit_Evaluate(self, s: S.Evaluate):
        return S.Evaluate(self.visit(s.value))


def flatten(body: S.Stmt, params, sym_map: dict) -> tuple[S.Stmt, list]:
    """Flatten ``body``; returns it with the flat (1-D) versions of ``params`` in order."""
    f = _Flattener(sym_map)
    flat_params = [f.flat_buffer(p)[0] for p in params]
    out = f.visit(body)
    return (out if out is not None else S.SeqStmt(())), flat_params
