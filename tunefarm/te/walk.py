"""Traversal and rewriting of te expressions, which may contain ``Reduce`` and ``Axis`` nodes.

The IR's own visitors dispatch on the class name, so they would pass over these te-only node kinds; the
helpers here know about them.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.functor import IRMutator
from .reduce import Reduce


def _children(n) -> list:
    if isinstance(n, Reduce):
        kids = [n.source]
        if n.where is not None:
            kids.append(n.where)
        return kids
    if isinstance(n, E.BufferLoad):
        return list(n.indices)
    out = []
    for f in n._fields:
        c = getattr(n, f)
        if isinstance(c, tuple):
            out.extend(x for x in c if isinstance(x, E.PrimExpr))
        elif isinstance(c, E.PrimExpr):
            out.append(c)
    return out


def iter_nodes(e):
    """Every node of expression ``e``, pre-order (a node before its children, left to right)."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(_children(n)))


class Rewriter(IRMutator):
    """Substitute variables (``Axis`` included) and buffers in an expression or statement."""

    def __init__(self, vmap: dict, bmap: dict):
        self.vmap = vmap
        self.bmap = bmap

    def visit_Var(self, node):
        return self.vmap.get(node, node)

    visit_Axis = visit_Var  # IRMutator dispatches on the class name; te's Axis is a Var

    def visit_BufferLoad(self, node):
        idx = self._visit_child(node.indices)
        buf = self.bmap.get(node.buffer, node.buffer)
        if buf is node.buffer and idx is node.indices:
            return node
        return E.BufferLoad(buf, idx)

    def visit_Reduce(self, node):
        raise ValueError(f"a reduction may only be the whole body of a compute, found nested: {node!r}")
