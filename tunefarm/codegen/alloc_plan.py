"""Place each intermediate buffer's allocation at the lowest common ancestor of its accesses.

Blocks declare allocations far from their use (``cache_write`` puts the ``local`` accumulator in the root
block). Allocating at the innermost statement that still encloses every access gives each thread of a
parallel loop its own copy of a buffer used only inside the loop (as TVM's
PlanAndUpdateBufferAllocationLocation does) and tells the code generator which function owns the memory.
Positions are tuples of child indices, so shared subtrees cannot confuse the placement.
"""
from __future__ import annotations

import itertools

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.functor import IRVisitor
from ..ir.stmt_functor import map_stmt_children, stmt_children


def _own_exprs(s) -> tuple:
    if isinstance(s, S.For):
        return (s.min, s.extent)
    if isinstance(s, S.IfThenElse):
        return (s.condition,)
    if isinstance(s, S.BufferStore):
        return (s.value,) + tuple(s.indices)
    if isinstance(s, S.Evaluate):
        return (s.value,)
    return ()


class _Loads(IRVisitor):
    def __init__(self):
        self.buffers: list = []

    def visit_BufferLoad(self, node: E.BufferLoad):
        self.buffers.append(node.buffer)
        super().visit_BufferLoad(node)


def plan_allocations(body: S.Stmt, buffers) -> S.Stmt:
    """Wrap the LCA of every access of each buffer in ``buffers`` with ``Allocate`` (unused ones vanish)."""
    wanted = {b: None for b in buffers}
    if not wanted:
        return body
    lca: dict = {}

    def record(buf, pos):
        if buf not in wanted:
            return
        old = lca.get(buf)
        if old is None:
            lca[buf] = pos
            return
        n = 0
        while n < len(old) and n < len(pos) and old[n] == pos[n]:
            n += 1
        lca[buf] = old[:n]

    def walk(s, pos):
        v = _Loads()
        for e in _own_exprs(s):
            v.visit(e)
        for b in v.buffers:
            record(b, pos)
        if isinstance(s, S.BufferStore):
            record(s.buffer, pos)
        for i, c in enumerate(stmt_children(s)):
            walk(c, pos + (i,))

    walk(body, ())
    wrap: dict = {}
    for buf in wanted:  # declaration order, so nested Allocates are deterministic
        if buf in lca:
            wrap.setdefault(lca[buf], []).append(buf)

    def rebuild(s, pos):
        index = itertools.count()  # children come to the function in ``stmt_children`` order
        s = map_stmt_children(s, lambda c: rebuild(c, pos + (next(index),)))
        for buf in reversed(wrap.get(pos, ())):
            s = S.Allocate(buf, s)
        return s

    return rebuild(body, ())
