"""Generic traversal of the IR: visitors, rewriters that preserve sharing, substitution.

``IRMutator`` returns the very same node when nothing below it changed, so rewriting a large function only
allocates along the changed paths (what makes schedule copies and replays cheap).

Walks of the loop/block tree that leave expressions alone use ``stmt_functor``.
"""
from __future__ import annotations

from types import FunctionType as _FunctionType
from typing import Callable

from . import expr as E
from . import stmt as S
from .buffer import Buffer


def _visit_method(visitor, node):
    """The ``visit_<ClassName>`` function of ``visitor``'s class for ``node`` (None: generic), looked up once
    per (visitor class, node class) and remembered in a table on the visitor class itself."""
    cls = type(visitor)
    table = cls.__dict__.get("_visit_table")
    if table is None:
        table = {}
        setattr(cls, "_visit_table", table)
    ncls = type(node)
    try:
        return table[ncls]
    except KeyError:
        name = "visit_" + ncls.__name__
        raw = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
        if raw is None or isinstance(raw, _FunctionType):
            fn = raw
        else:  # a staticmethod, a callable object...: bind it the ordinary way on each call
            fn = lambda self, n, _name=name: getattr(self, _name)(n)  # noqa: E731
        table[ncls] = fn
        return fn


class _Functor:
    """``visit`` dispatches on the node's class to ``visit_<ClassName>``, else ``generic_visit``."""

    def visit(self, node):
        if node is None:
            return None
        method = _visit_method(self, node)
        if method is not None:
            return method(self, node)
        return self.generic_visit(node)


class IRVisitor(_Functor):
    """Walks expressions and statements; override ``visit_<ClassName>`` to act on a node kind."""

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


class IRMutator(_Functor):
    """Rebuilds the IR bottom-up; override ``visit_<ClassName>`` and call ``generic_visit`` for children."""

    def _visit_child(self, child):
        if isinstance(child, tuple):
            out = None  # a new tuple only once some element changed
            for i, c in enumerate(child):
                n = self._visit_child(c)
                if out is not None:
                    out.append(n)
                elif n is not c:
                    out = list(child[:i])
                    out.append(n)
            return child if out is None else tuple(out)
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


def _subst_expr(e, vmap: dict, bmap: dict):
    """``_Substituter`` on an expression, as a direct recursion over the core expression classes (the hot
    path of every schedule primitive). Same results: unchanged subtrees are returned as they are, changed
    ones rebuilt with ``rebuild`` (constants folded); any other class goes through ``_Substituter``."""
    t = type(e)
    if t is E.Var:
        return vmap.get(e, e)
    if t is E.IntImm or t is E.FloatImm:
        return e
    if t is E.Binary:
        a = _subst_expr(e.a, vmap, bmap)
        b = _subst_expr(e.b, vmap, bmap)
        if a is e.a and b is e.b:
            return e
        return _BINARY_BUILDERS[e.op](a, b)
    if t is E.BufferLoad:
        buf = bmap.get(e.buffer, e.buffer) if bmap else e.buffer
        idx = e.indices
        new = tuple(_subst_expr(i, vmap, bmap) for i in idx)
        if all(x is y for x, y in zip(new, idx)):
            if buf is e.buffer:
                return e
            new = idx
        return E.BufferLoad(buf, new)
    if t is E.Cast:
        v = _subst_expr(e.value, vmap, bmap)
        return e if v is e.value else E.cast(e.dtype, v)
    if t is E.Select:
        c = _subst_expr(e.cond, vmap, bmap)
        tv = _subst_expr(e.true_value, vmap, bmap)
        fv = _subst_expr(e.false_value, vmap, bmap)
        if c is e.cond and tv is e.true_value and fv is e.false_value:
            return e
        return E.select(c, tv, fv)
    if t is E.Not:
        a = _subst_expr(e.a, vmap, bmap)
        return e if a is e.a else E.logical_not(a)
    if t is E.Call:
        args = tuple(_subst_expr(x, vmap, bmap) for x in e.args)
        return e if all(x is y for x, y in zip(args, e.args)) else E.Call(e.op, args, e.dtype)
    return _Substituter(vmap, bmap).visit_generic_expr(e)


_FAST_EXPR_TYPES = frozenset({E.Var, E.IntImm, E.FloatImm, E.Binary, E.BufferLoad, E.Cast, E.Select, E.Not,
                              E.Call})


class _Substituter(IRMutator):
    def __init__(self, vmap: dict, bmap: dict | None):
        self.vmap = vmap
        self.bmap = bmap or {}

    def visit(self, node):
        if type(node) in _FAST_EXPR_TYPES:
            return _subst_expr(node, self.vmap, self.bmap)
        return IRMutator.visit(self, node)

    def visit_generic_expr(self, node):
        return IRMutator.visit(self, node)

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

    # The statement visitors below do what ``generic_visit`` does for these classes (children in ``_fields``
    # order, ``replace`` with the changed ones), spelled out because substitution runs on every primitive.
    def _nodes(self, items: tuple) -> tuple:
        out = None
        for i, c in enumerate(items):
            n = self.visit(c) if isinstance(c, (E.PrimExpr, S.Node)) else self._visit_child(c)
            if out is not None:
                out.append(n)
            elif n is not c:
                out = list(items[:i])
                out.append(n)
        return items if out is None else tuple(out)

    def visit_SeqStmt(self, node):
        seq = self._nodes(node.seq)
        return node if seq is node.seq else node.replace(seq=seq)

    def _rebuilt(self, node, visits):
        """``node`` with each ``(field, visit)`` of ``visits`` visited; the node itself if none changed."""
        changes = {}
        for name, visit in visits:
            old = getattr(node, name)
            new = visit(old)
            if new is not old:
                changes[name] = new
        return node.replace(**changes) if changes else node

    def visit_For(self, node):
        v = self.visit
        return self._rebuilt(node, (("loop_var", v), ("min", v), ("extent", v), ("body", v)))

    def visit_BlockRealize(self, node):
        return self._rebuilt(node, (("iter_values", self._nodes), ("predicate", self.visit), ("block", self.visit)))

    def visit_IterVar(self, node):
        return self._rebuilt(node, (("var", self.visit), ("dom", self.visit)))

    def visit_Range(self, node):
        return self._rebuilt(node, (("min", self.visit), ("extent", self.visit)))

    def visit_Block(self, node):
        n, c = self._nodes, self._visit_child
        new = self._rebuilt(node, (("iter_vars", n), ("reads", n), ("writes", n), ("init", c), ("body", c)))
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
    if type(node) in _FAST_EXPR_TYPES:
        return _subst_expr(node, vmap, bmap or {})
    return _Substituter(vmap, bmap).visit(node)


class _PostOrder(IRVisitor):
    """``post_order_visit``'s walker (one class for all calls: a class per call costs its creation and an empty
    ``_visit_method`` table every time)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def visit(self, n):
        if n is None:
            return
        super().visit(n)
        self.fn(n)


def post_order_visit(node, fn: Callable) -> None:
    """Call ``fn`` on every expression/statement node below ``node``, children first."""
    _PostOrder(fn).visit(node)


def collect_vars(node) -> list[E.Var]:
    """Free and bound variables used in ``node``, in first-use order, without duplicates."""
    out: dict = {}

    def f(n):
        if isinstance(n, E.Var):
            out.setdefault(n, None)

    post_order_visit(node, f)
    return list(out)


class FreeVarVisitor(IRVisitor):
    """Calls ``free(v)`` for every use of a variable that neither ``bound`` nor an enclosing loop binds (a loop
    binds its variable for its body, not for its own range)."""

    def __init__(self, bound=()):
        self.bound = set(bound)

    def free(self, v: E.Var) -> None:
        raise NotImplementedError

    def visit_For(self, s: S.For):
        self.visit(s.min)
        self.visit(s.extent)
        self.bound.add(s.loop_var)
        self.visit(s.body)

    def visit_Var(self, v: E.Var):
        if v not in self.bound:
            self.free(v)


class _UsesVar(IRVisitor):
    """Module-level (not rebuilt per call: ``uses_var`` is hot in lowering and region inference)."""

    def __init__(self, var_set):
        self.var_set = var_set
        self.found = False

    def visit_Var(self, n):
        if n in self.var_set:
            self.found = True


def uses_var(node, var_set) -> bool:
    if type(node) in _FAST_EXPR_TYPES:
        return _expr_uses_var(node, var_set)
    v = _UsesVar(var_set)
    v.visit(node)
    return v.found


def _expr_uses_var(e, var_set) -> bool:
    """``uses_var`` on an expression without building a visitor (same answer: only exact ``Var`` nodes
    count, other expression classes are asked through ``_UsesVar``)."""
    stack = [e]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is E.Var:
            if n in var_set:
                return True
        elif t is E.Binary:
            stack.append(n.a)
            stack.append(n.b)
        elif t is E.IntImm or t is E.FloatImm:
            continue
        elif t is E.BufferLoad:
            stack.extend(n.indices)
        elif t is E.Cast:
            stack.append(n.value)
        elif t is E.Select:
            stack.extend((n.cond, n.true_value, n.false_value))
        elif t is E.Not:
            stack.append(n.a)
        elif t is E.Call:
            stack.extend(n.args)
        else:
            v = _UsesVar(var_set)
            v.visit(n)
            if v.found:
                return True
    return False


class _BufferAccesses(IRVisitor):
    def __init__(self, reads: dict, writes: dict):
        self.reads = reads
        self.writes = writes

    def visit_BufferLoad(self, n):
        self.reads.setdefault(n.buffer, None)
        super().visit_BufferLoad(n)

    def visit_BufferStore(self, n):
        self.writes.setdefault(n.buffer, None)
        super().visit_BufferStore(n)

    def visit_Block(self, n):  # nested blocks: their body, not their declared regions
        self.visit(n.init)
        self.visit(n.body)


def _accesses(n, reads: dict, writes: dict) -> None:
    """``_BufferAccesses`` as a direct recursion over the core node classes (same order of first use)."""
    t = type(n)
    if t is E.BufferLoad:
        reads.setdefault(n.buffer, None)
        for i in n.indices:
            _accesses(i, reads, writes)
    elif t is E.Var or t is E.IntImm or t is E.FloatImm:
        return
    elif t is E.Binary:
        _accesses(n.a, reads, writes)
        _accesses(n.b, reads, writes)
    elif t is S.BufferStore:
        writes.setdefault(n.buffer, None)
        _accesses(n.value, reads, writes)
        for i in n.indices:
            _accesses(i, reads, writes)
    elif t is S.SeqStmt:
        for x in n.seq:
            _accesses(x, reads, writes)
    elif t is S.For:
        _accesses(n.min, reads, writes)
        _accesses(n.extent, reads, writes)
        _accesses(n.body, reads, writes)
    elif t is S.BlockRealize:
        for v in n.iter_values:
            _accesses(v, reads, writes)
        _accesses(n.predicate, reads, writes)
        _accesses(n.block, reads, writes)
    elif t is S.Block:
        if n.init is not None:
            _accesses(n.init, reads, writes)
        _accesses(n.body, reads, writes)
    elif n is not None:
        _BufferAccesses(reads, writes).visit(n)


def collect_buffer_accesses(node) -> tuple[list[Buffer], list[Buffer]]:
    """Buffers read and buffers written under ``node`` (each once, first-use order)."""
    reads: dict = {}
    writes: dict = {}
    _accesses(node, reads, writes)
    return list(reads), list(writes)
