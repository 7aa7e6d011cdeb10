"""Walks of the loop/block tree: the statement layer of the IR's traversal.

Most analyses and rewrites of a function ask about its statements only (loops, blocks, stores) and leave
expressions to ``functor``'s visitors. What lies below each statement kind is said once, in
``stmt_children``; everything here walks through it:

* ``iter_stmts`` / ``iter_block_realizes``: pre-order generators in program order, so a search stops as
  early as its caller does (``any``, ``next``, ``break``); the second also gives each block's loops;
* ``StmtVisitor`` / ``StmtMutator``: dispatch on the statement class like ``IRVisitor``, with context that
  flows downwards (enclosing loops, bounds, an indentation) passed as extra arguments; the mutator shares
  every unchanged subtree;
* ``StmtFunctor``: the exhaustive form, for translators (printer, code generators) that must know every
  kind and reject the others with their own error;
* small helpers for sequences (``seq_items``, ``unwrap_seq``, ``flatten_seq``, ``is_empty_stmt``).
"""
from __future__ import annotations

from types import FunctionType as _FunctionType

from . import stmt as S

_CHILDREN: dict = {
    S.SeqStmt: lambda n: n.seq,
    S.For: lambda n: (n.body,),
    S.BlockRealize: lambda n: (n.block,),
    S.Block: lambda n: (n.body,) if n.init is None else (n.init, n.body),
    S.IfThenElse: lambda n: (n.then_case,) if n.else_case is None else (n.then_case, n.else_case),
    S.Allocate: lambda n: (n.body,),
}


def stmt_children(node) -> tuple:
    """The statements directly below ``node``, in program order: a sequence's items, a loop's or an
    allocation's body, an ``if``'s branches, a block realize's block, a block's ``init`` (when it has one)
    then its body. Stores, evaluations and expressions have none."""
    f = _CHILDREN.get(type(node))
    if f is None:
        f = next((g for cls, g in _CHILDREN.items() if isinstance(node, cls)), None)
        if f is None:
            return ()
    return f(node)


def iter_stmts(root):
    """Every statement at and below ``root``, pre-order in program order (a statement before its children,
    children left to right). Nothing comes out of ``None``.

    The common kinds are spelled out instead of asking ``stmt_children`` (same order): the search asks
    this of every candidate."""
    stack = [root] if root is not None else []
    pop, push, extend = stack.pop, stack.append, stack.extend
    seq_t, for_t, realize_t, store_t = S.SeqStmt, S.For, S.BlockRealize, S.BufferStore
    while stack:
        node = pop()
        yield node
        t = type(node)
        if t is seq_t:
            extend(node.seq[::-1])
        elif t is for_t:
            push(node.body)
        elif t is realize_t:
            push(node.block)
        elif t is not store_t:
            extend(stmt_children(node)[::-1])


def iter_block_realizes(root, nested: bool = True):
    """``(realize, loops)`` for every block realize below ``root``, pre-order in program order; ``loops``
    are the ``For`` nodes between the realize and its enclosing block, outermost first. With
    ``nested=False`` the blocks inside a found block are not visited."""
    stack = [(root, ())]
    pop, push = stack.pop, stack.append
    seq_t, for_t, realize_t, store_t = S.SeqStmt, S.For, S.BlockRealize, S.BufferStore
    while stack:
        node, loops = pop()
        t = type(node)
        if t is seq_t:
            for child in reversed(node.seq):
                push((child, loops))
        elif t is for_t:
            push((node.body, loops + (node,)))
        elif t is realize_t:
            yield node, loops
            if nested:
                blk = node.block
                push((blk.body, ()))
                if blk.init is not None:
                    push((blk.init, ()))
        elif t is not store_t:
            for child in reversed(stmt_children(node)):
                push((child, loops))


def map_stmt_children(node, fn):
    """``node`` with ``fn`` applied to each of its direct child statements (see ``stmt_children``); ``node``
    itself when every child comes back unchanged. A sequence stays a sequence (nothing is flattened)."""
    if isinstance(node, S.SeqStmt):
        items = node.seq
        new = tuple(fn(x) for x in items)
        return node if all(a is b for a, b in zip(new, items)) else node.replace(seq=new)
    if isinstance(node, (S.For, S.Allocate)):
        body = fn(node.body)
        return node if body is node.body else node.replace(body=body)
    if isinstance(node, S.BlockRealize):
        blk = fn(node.block)
        return node if blk is node.block else node.replace(block=blk)
    if isinstance(node, S.Block):
        init = fn(node.init) if node.init is not None else None
        body = fn(node.body)
        return node if init is node.init and body is node.body else node.replace(init=init, body=body)
    if isinstance(node, S.IfThenElse):
        then = fn(node.then_case)
        other = fn(node.else_case) if node.else_case is not None else None
        if then is node.then_case and other is node.else_case:
            return node
        return node.replace(then_case=then, else_case=other)
    return node


class StmtFunctor:
    """Dispatches a statement to ``visit_<ClassName>(node, *args)``; the extra arguments are context that
    flows down the walk, passed on by whoever recurses.

    A kind without a method goes to ``generic_visit``, which raises: the base of translators that must
    handle every kind (override it to name the pass in the error). ``None`` (a missing ``init`` or
    ``else``) visits to None. Each class keeps its own table ``node class -> function``, filled on first
    use, so a visit costs one dictionary lookup.
    """

    _dispatch: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def visit(self, node, *args):
        if node is None:
            return None
        fn = self._dispatch.get(type(node))
        if fn is None:
            fn = self._dispatch[type(node)] = _resolve(type(self), type(node))
        return fn(self, node, *args)

    def generic_visit(self, node, *args):
        raise TypeError(f"{type(self).__name__} cannot handle a {type(node).__name__}")

    @classmethod
    def _default(cls, node_cls):
        """What a kind without a ``visit_`` method runs."""
        return cls.generic_visit


def _resolve(cls, node_cls):
    name = "visit_" + node_cls.__name__
    raw = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
    if raw is None:
        return cls._default(node_cls)
    if isinstance(raw, _FunctionType):
        return raw
    return lambda self, n, *args: getattr(self, name)(n, *args)  # a staticmethod...: bind it on each call


class StmtVisitor(StmtFunctor):
    """Visits every statement, children in program order with the same extra arguments; override
    ``visit_<ClassName>`` to act on a kind (call ``generic_visit`` there to go on below it). Expressions
    are not entered."""

    def generic_visit(self, node, *args):
        for child in stmt_children(node):
            self.visit(child, *args)

    @classmethod
    def _default(cls, node_cls):
        if cls.generic_visit is not StmtVisitor.generic_visit:
            return cls.generic_visit
        return _WALK_CHILDREN.get(node_cls, cls.generic_visit)


def _walk_seq(self, node, *args):
    visit = self.visit
    for child in node.seq:
        visit(child, *args)


def _walk_body(self, node, *args):
    self.visit(node.body, *args)


def _walk_realize(self, node, *args):
    self.visit(node.block, *args)


def _walk_block(self, node, *args):
    if node.init is not None:
        self.visit(node.init, *args)
    self.visit(node.body, *args)


def _walk_if(self, node, *args):
    self.visit(node.then_case, *args)
    if node.else_case is not None:
        self.visit(node.else_case, *args)


def _walk_leaf(self, node, *args):
    return None


# ``StmtVisitor.generic_visit`` per kind, without asking ``stmt_children`` (visitors run on every candidate)
_WALK_CHILDREN = {S.SeqStmt: _walk_seq, S.For: _walk_body, S.Allocate: _walk_body, S.BlockRealize: _walk_realize,
                  S.Block: _walk_block, S.IfThenElse: _walk_if, S.BufferStore: _walk_leaf, S.Evaluate: _walk_leaf}


class StmtMutator(StmtFunctor):
    """Rebuilds statements bottom-up, sharing every unchanged subtree (``map_stmt_children``); override
    ``visit_<ClassName>`` to rewrite a kind. Expressions are left as they are."""

    def generic_visit(self, node, *args):
        return map_stmt_children(node, lambda child: self.visit(child, *args))


# ----------------------------------------------------------------------------------------------------------
# sequences
# ----------------------------------------------------------------------------------------------------------
def seq_items(body) -> list:
    """The statements of a body: a sequence's items, or the body itself as the only one."""
    return list(body.seq) if isinstance(body, S.SeqStmt) else [body]


def unwrap_seq(body):
    """The statement inside a chain of one-statement sequences (``body`` itself when it is none)."""
    while isinstance(body, S.SeqStmt) and len(body.seq) == 1:
        body = body.seq[0]
    return body


def flatten_seq(items) -> list:
    """The statements of ``items`` with nested sequences spliced in, at any depth."""
    out = []
    for x in items:
        if isinstance(x, S.SeqStmt):
            out.extend(flatten_seq(x.seq))
        else:
            out.append(x)
    return out


def is_empty_stmt(s) -> bool:
    """Whether ``s`` does nothing: no statement, or an empty sequence."""
    return s is None or (isinstance(s, S.SeqStmt) and not s.seq)
