"""Generic traversal of the IR: visitors, rewriters that preserve sharing, substitution.

``IRMutator`` returns the very same node when nothing below it changed, so rewriting a large function only
allocates along the changed paths (what makes schedule copies and replays cheap).
"""
from __future__ import annotations

from typing import Callable

from . import expr as E
from . import stmt as S
from .buffer import Buffer


class IRVisitor:
    """Walks expressions and statements; override ``visit_<ClassName>`` to act on a node kind."""

    def visit(self, node):
        if node is None:
            return None
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is not None:
            return method(node)
        return self.generic_visit(node)

    def generic_visit(self, node):
        for f in node._fields:
            child = getattr(node, f)
            if isinstance(child, tuple):
                for c in child:
                    if isinstance(c, (E.PrimExpr, S.Node)):
                        self.visit(c)
            elif isinstance(child, (E.PrimExpr, S.Node)):
                self.visit(child)

    # loads and stores reach their buffers through these hooks
    def visit_BufferLoad(self, node: E.BufferLoad):
        for i in node.indices:
            self.visit(i)

    def visit_BufferStore(self, node: S.BufferStore):
        self.visit(node.value)
        for i in node.indices:
            self.visit(i)


class IRMutator:
    """Rebuilds the IR bottom-up; override ``visit_<ClassName>`` and call ``generic_visit`` for children."""

    def visit(self, node):
        if node is None:
            return None
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is not None:
            return method(node)
        return self.generic_visit(node)

    def _visit_child(self, child):
        if isinstance(child, tuple):
            new = tuple(self._visit_child(c) for c in child)
            return child if all(a is b for a, b in zip(new, child)) else new
        if isinstance(child, (E.PrimExpr, S.Node)):
            return self.visit(child)
        return child

    def generic_visit(self, node):
        changes = {}
        for f in node._fields:
            old = getattr(node, f)
            new = self._visit_child(old)
            if new is not old:
                changes[f] = new
        if not changes:
            return node
        return rebuild(node, changes)


def rebuild(node, changes: dict):
    """A copy of ``node`` with some children replaced; expressions re-fold constants."""
    if isinstance(node, S.Node):
        return node.replace(**changes)
    if isinstance(node, E.Binary):
        a = changes.get("a", node.a)
        b = changes.get("b", node.b)
        return _BINARY_BUILDERS[node.op](a, b)
    if isinstance(node, E.Not):
        return E.logical_not(changes["a"])
    if isinstance(node, E.Select):
        return E.select(changes.get("cond", node.cond), changes.get("true_value", node.true_value),
                        changes.get("false_value", node.false_value))
    if isinstance(node, E.Cast):
        return E.cast(node.dtype, changes["value"])
    if isinstance(node, E.Call):
        return E.Call(node.op, changes["args"], node.dtype)
    if isinstance(node, E.BufferLoad):
        return E.BufferLoad(node.buffer, changes["indices"])
    raise TypeError(f"cannot rebuild {type(node).__name__}")


_BINARY_BUILDERS: dict[str, Callable] = {
    "+": E.add, "-": E.sub, "*": E.mul, "/": E.div, "//": E.floordiv, "%": E.floormod,
    "min": E.min_, "max": E.max_, "and": E.logical_and, "or": E.logical_or,
    "==": lambda a, b: E.compare("==", a, b), "!=": lambda a, b: E.compare("!=", a, b),
    "<": lambda a, b: E.compare("<", a, b), "<=": lambda a, b: E.compare("<=", a, b),
    ">": lambda a, b: E.compare(">", a, b), ">=": lambda a, b: E.compare(">=", a, b),
}


def binary(op: str, a, b):
    """Build ``a op b`` with constant folding (``op`` as in ``Binary``)."""
    return _BINARY_BUILDERS[op](a, b)


class _Substituter(IRMutator):
    def __init__(self, vmap: dict, bmap: dict | None):
        self.vmap = vmap
        self.bmap = bmap or {}

    def visit_Var(self, node):
        return self.vmap.get(node, node)

    def visit_BufferLoad(self, node):
        buf = self.bmap.get(node.buffer, node.buffer)
        idx = self._visit_child(node.indices)
        if buf is node.buffer and idx is node.indices:
            return node
        return E.BufferLoad(buf, idx)

    def visit_BufferStore(self, node):
        buf = self.bmap.get(node.buffer, node.buffer)
        value = self.visit(node.value)
        idx = self._visit_child(node.indices)
        if buf is node.buffer and value is node.value and idx is node.indices:
            return node
        return S.BufferStore(buf, value, idx)

    def visit_BufferRegion(self, node):
        buf = self.bmap.get(node.buffer, node.buffer)
        region = self._visit_child(node.region)
        if buf is node.buffer and region is node.region:
            return node
        return S.BufferRegion(buf, region)

    def visit_Block(self, node):
        new = self.generic_visit(node)
        if self.bmap and any(b in self.bmap for b in new.alloc_buffers):
            new = new.replace(alloc_buffers=tuple(self.bmap.get(b, b) for b in new.alloc_buffers))
        return new

    def visit_Allocate(self, node):
        body = self.visit(node.body)
        buf = self.bmap.get(node.buffer, node.buffer)
        if body is node.body and buf is node.buffer:
            return node
        return S.Allocate(buf, body)


def substitute(node, vmap: dict, bmap: dict | None = None):
    """Replace variables (``Var -> expr``) and optionally buffers (``Buffer -> Buffer``) everywhere in node."""
    if not vmap and not bmap:
        return node
    return _Substituter(vmap, bmap).visit(node)


def post_order_visit(node, fn: Callable) -> None:
    """Call ``fn`` on every expression/statement node below ``node``, children first."""

    class _V(IRVisitor):
        def visit(self, n):
            if n is None:
                return
            super().visit(n)
            fn(n)

    _V().visit(node)


def collect_vars(node) -> list[E.Var]:
    """Free and bound variables used in ``node``, in first-use order, without duplicates."""
    out: dict = {}

    def f(n):
        if isinstance(n, E.Var):
            out.setdefault(n, None)

    post_order_visit(node, f)
    return list(out)


def uses_var(node, var_set) -> bool:
    found = False

    class _V(IRVisitor):
        def visit_Var(self, n):
            nonlocal found
            if n in var_set:
                found = True

    _V().visit(node)
    return found


def collect_buffer_accesses(node) -> tuple[list[Buffer], list[Buffer]]:
    """Buffers read and buffers written under ``node`` (each once, first-use order)."""
    reads: dict = {}
    writes: dict = {}

    class _V(IRVisitor):
        def visit_BufferLoad(self, n):
            reads.setdefault(n.buffer, None)
            super().visit_BufferLoad(n)

        def visit_BufferStore(self, n):
            writes.setdefault(n.buffer, None)
            super().visit_BufferStore(n)

        def visit_Block(self, n):  # nested blocks: their body, not their declared regions
            self.visit(n.init)
            self.visit(n.body)

    _V().visit(node)
    return list(reads), list(writes)
