"""Finding and replacing nodes in an immutable function body.

Schedule primitives are pure functions ``PrimFunc -> PrimFunc``. They locate what they change as a *path*
(the list of nodes from ``func.body`` down to the target), build the replacement, and rebuild only the
ancestors on that path; everything else is shared with the old function. Blocks are addressed by their
unique name, loops by their loop variable (a loop keeps its ``Var`` across rewrites of its body).

Lookups go through a ``FuncIndex`` (a parent map of the whole body) cached per function body: IR nodes are
immutable, so one walk serves every lookup on that function, and ``replace_path`` derives the index of the
function it builds when the edit keeps the tree's shape. Paths assume a tree (no statement object occurs
twice in one body), which every front end and primitive produces.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from ..ir.memo import NodeCache
from ..ir.stmt_functor import seq_items, stmt_children
from .error import ScheduleError

Path = list  # [func.body, ..., target]


def iter_paths(root):
    """Yield the path to every statement, pre-order (parents before children, program order)."""
    stack = [[root]]
    while stack:
        path = stack.pop()
        yield path
        kids = stmt_children(path[-1])
        for k in reversed(kids):
            stack.append(path + [k])


class FuncIndex:
    """Where every block and loop of one function body is: a parent map from one walk of the tree.

    Cached per function body (``func_index``). Why that is safe: IR nodes are immutable, so a body's tree
    never changes, and every lookup on the same function (``get_block``, then ``get_loops``, then a
    primitive...) can share one walk instead of walking the whole tree each time. ``replace_path`` derives
    the index of the new function from the old one when the replacement keeps the tree's shape (an
    annotation, a loop kind), so chains of such edits never walk the tree at all.

    * ``parent``: statement node -> the node directly above it (the body has none);
    * ``blocks``: block name -> its ``BlockRealize`` (``duplicate_blocks``: names seen more than once);
    * ``loops``: loop ``Var`` -> its ``For`` (the first in pre-order);
    * ``realizes``: every ``BlockRealize`` in pre-order;
    * ``order``: every statement node -> its pre-order position.
    """

    __slots__ = ("body", "parent", "blocks", "duplicate_blocks", "loops", "realizes", "_order", "_order_from",
                 "_names")

    def __init__(self, body, parent, blocks, duplicate_blocks, loops, realizes, order=None, names=None,
                 order_from=None):
        self.body = body
        self.parent = parent
        self.blocks = blocks
        self.duplicate_blocks = duplicate_blocks
        self.loops = loops
        self.realizes = realizes
        self._order = order
        self._order_from = order_from  # (index, {old node: new node}) that ``order`` is derived from
        self._names = names

    @classmethod
    def build(cls, body) -> "FuncIndex":
        """One pre-order walk (``iter_stmts``' order) linking each child of ``stmt_children`` to its parent.
        The common kinds are spelled out rather than asking ``stmt_children``: twice as fast, and this runs
        for every new function body a schedule makes."""
        parent: dict = {}
        blocks: dict = {}
        duplicates: set = set()
        loops: dict = {}
        realizes: list = []
        order: dict = {}
        k = 0
        stack = [body]
        pop, push, link = stack.pop, stack.append, parent.setdefault  # the loop's hot calls, bound once
        realize_t, for_t, seq_t, store_t = S.BlockRealize, S.For, S.SeqStmt, S.BufferStore
        while stack:
            node = pop()
            order[node] = k
            k += 1
            t = type(node)
            if t is realize_t:
                name = node.block.name
                if name in blocks:
                    duplicates.add(name)
                else:
                    blocks[name] = node
                realizes.append(node)
                child = node.block
                link(child, node)
                push(child)
            elif t is for_t:
                loops.setdefault(node.loop_var, node)
                child = node.body
                link(child, node)
                push(child)
            elif t is seq_t:
                for child in reversed(node.seq):
                    link(child, node)
                    push(child)
            elif t is store_t:
                continue
            else:
                for child in reversed(stmt_children(node)):
                    link(child, node)
                    push(child)
        return cls(body, parent, blocks, duplicates, loops, realizes, order)

    def path(self, node) -> Path | None:
        """The path from the body down to ``node``, or None when ``node`` is not in this tree."""
        parent = self.parent
        up = parent.get(node)
        if up is None:
            return [node] if node is self.body else None
        out = [node]
        add, get = out.append, parent.get
        while up is not None:
            add(up)
            up = get(up)
        out.reverse()
        return out

    @property
    def order(self) -> dict:
        """Every statement node -> its pre-order position (``iter_paths`` numbering; the last one if a node
        occurs twice); its keys are in pre-order. A derived index computes it on first use (only the
        dependency analyses of block primitives ask)."""
        if self._order is None:
            base, renamed = self._order_from
            # same positions and key order (``allocating_block`` relies on pre-order keys), new nodes
            self._order = {renamed.get(node, node): k for node, k in base.order.items()}
            self._order_from = None
        return self._order

    def names(self, func: PrimFunc) -> set:
        """Names of the parameters, blocks and allocated buffers (what a fresh name must avoid)."""
        if self._names is None:
            names = {p.name for p in func.params}
            for r in self.realizes:
                names.add(r.block.name)
            for node in self.parent:
                if isinstance(node, S.Block):
                    names.update(b.name for b in node.alloc_buffers)
            if isinstance(self.body, S.Block):
                names.update(b.name for b in self.body.alloc_buffers)
            self._names = names
        return self._names

    def derive(self, new_body, pairs) -> "FuncIndex":
        """The index of the tree where each ``old`` node of ``pairs`` (``(old, new)``, root first: the path
        that was rebuilt) is replaced by ``new`` of the same shape -- same children, same block names,
        loop variables and allocations -- so only the rebuilt nodes move."""
        parent = dict(self.parent)
        blocks = self.blocks
        loops = self.loops
        realizes = self.realizes
        above = None
        for old, new in pairs:
            parent.pop(old, None)
            if above is not None:
                parent[new] = above
            t = type(new)
            if t is S.For:
                parent[new.body] = new
            elif t is S.BlockRealize:
                parent[new.block] = new
            else:
                for child in stmt_children(new):
                    parent[child] = new
            if t is S.BlockRealize and blocks.get(new.block.name) is old:
                if blocks is self.blocks:
                    blocks = dict(blocks)
                blocks[new.block.name] = new
            elif t is S.For and loops.get(new.loop_var) is old:
                if loops is self.loops:
                    loops = dict(loops)
                loops[new.loop_var] = new
            if t is S.BlockRealize:
                realizes = [new if r is old else r for r in realizes]
            above = new
        return FuncIndex(new_body, parent, blocks, self.duplicate_blocks, loops, realizes, None, self._names,
                         (self, dict(pairs)))


_INDEXES = NodeCache("tree.func_index", 256)


def func_index(func: PrimFunc) -> FuncIndex:
    """The (cached) ``FuncIndex`` of ``func``'s body."""
    body = func.body
    idx = _INDEXES.get(body)
    if idx is None:
        idx = _INDEXES.put(body, FuncIndex.build(body))
    return idx


def find_block(func: PrimFunc, name: str, primitive: str = "get_block") -> Path:
    """Path ending at the ``BlockRealize`` of the block called ``name``."""
    idx = func_index(func)
    if name in idx.duplicate_blocks:
        raise ScheduleError(primitive, f"block name {name!r} is not unique in function {func.name!r}")
    node = idx.blocks.get(name) if isinstance(name, str) else None
    if node is None:
        raise ScheduleError(primitive, f"no block named {name!r} in function {func.name!r} "
                                       f"(blocks: {block_names(func)})")
    return idx.path(node)


def find_loop(func: PrimFunc, loop_var: E.Var, primitive: str = "get_loops") -> Path:
    """Path ending at the ``For`` whose loop variable is ``loop_var``."""
    try:
        node = func_index(func).loops.get(loop_var)
    except TypeError:  # unhashable: not a loop variable
        node = None
    if node is None:
        raise ScheduleError(primitive, f"loop {loop_var.name!r} no longer exists in function {func.name!r} "
                                       "(it was split, fused or removed by an earlier primitive)")
    return func_index(func).path(node)


def path_of(func: PrimFunc, node) -> Path | None:
    """Path ending at statement ``node`` of ``func`` (None if it is not there)."""
    return func_index(func).path(node)


def block_names(func: PrimFunc) -> list[str]:
    return [r.block.name for r in func_index(func).realizes]


def all_block_realizes(func: PrimFunc) -> list[S.BlockRealize]:
    return list(func_index(func).realizes)


def loops_above(path: Path) -> list[S.For]:
    """The loops between the nearest enclosing block and the end of ``path`` (outermost first)."""
    loops: list[S.For] = []
    for node in reversed(path[:-1]):
        if isinstance(node, S.Block):
            break
        if isinstance(node, S.For):
            loops.append(node)
    loops.reverse()
    return loops


def all_loops_above(path: Path) -> list[S.For]:
    """Every loop on ``path`` above its end, across block boundaries (outermost first)."""
    return [n for n in path[:-1] if isinstance(n, S.For)]


def enclosing_block(path: Path) -> S.Block | None:
    """The block that directly contains the end of ``path`` (the root block for top-level statements)."""
    for node in reversed(path[:-1]):
        if isinstance(node, S.Block):
            return node
    return None


def loop_bounds(loops) -> dict:
    """Inclusive integer bounds of loop variables with constant ranges (for ``arith.simplify``)."""
    out = {}
    for lp in loops:
        if isinstance(lp.min, E.IntImm) and isinstance(lp.extent, E.IntImm):
            out[lp.loop_var] = (lp.min.value, lp.min.value + lp.extent.value - 1)
    return out


def _for_with_body(f: S.For, body) -> S.For:
    """``f.replace(body=body)`` without the generic slot loop (rebuilding paths is what primitives do most)."""
    n = _NEW(S.For)
    n.loop_var = f.loop_var
    n.min = f.min
    n.extent = f.extent
    n.kind = f.kind
    n.body = body
    n.annotations = f.annotations
    return n


def _realize_with_block(r: S.BlockRealize, block) -> S.BlockRealize:
    n = _NEW(S.BlockRealize)
    n.iter_values = r.iter_values
    n.predicate = r.predicate
    n.block = block
    return n


def _block_with(b: S.Block, init, body) -> S.Block:
    n = _NEW(S.Block)
    n.name = b.name
    n.iter_vars = b.iter_vars
    n.reads = b.reads
    n.writes = b.writes
    n.body = body
    n.init = init
    n.alloc_buffers = b.alloc_buffers
    n.annotations = b.annotations
    return n


_NEW = object.__new__


def for_with(f: S.For, min_, extent, body) -> S.For:
    """``f.replace(min=min_, extent=extent, body=body)`` for an exact ``For``, without the generic slot loop."""
    n = _NEW(S.For)
    n.loop_var = f.loop_var
    n.min = min_
    n.extent = extent
    n.kind = f.kind
    n.body = body
    n.annotations = f.annotations
    return n


def loop_with(f: S.For, kind: str, annotations: dict):
    """``f.replace(kind=kind, annotations=annotations)`` (the annotation primitives' one edit)."""
    if type(f) is not S.For:
        return f.replace(kind=kind, annotations=annotations)
    n = for_with(f, f.min, f.extent, f.body)
    n.kind = kind
    n.annotations = annotations
    return n


def block_with_annotations(b: S.Block, annotations: dict):
    """``b.replace(annotations=annotations)``."""
    if type(b) is not S.Block:
        return b.replace(annotations=annotations)
    n = _block_with(b, b.init, b.body)
    n.annotations = annotations
    return n


def realize_with(r: S.BlockRealize, iter_values: tuple, predicate, block) -> S.BlockRealize:
    """``r.replace(iter_values=..., predicate=..., block=...)`` for an exact ``BlockRealize``."""
    n = _NEW(S.BlockRealize)
    n.iter_values = iter_values
    n.predicate = predicate
    n.block = block
    return n


def _replace_child(parent, old, new):
    t = type(parent)
    if t is S.For:
        return _for_with_body(parent, new if new is not None else S.SeqStmt(()))
    if t is S.BlockRealize:
        return _realize_with_block(parent, new)
    if t is S.Block:
        if parent.init is old:
            return _block_with(parent, new, parent.body)
        return _block_with(parent, parent.init, new if new is not None else S.SeqStmt(()))
    if isinstance(parent, S.SeqStmt):
        items = []
        for c in parent.seq:
            if c is not old:
                items.append(c)
            elif new is not None:
                items.extend(seq_items(new))  # a sequence is spliced in
        return S.seq(items) if items else S.SeqStmt(())
    if isinstance(parent, S.For):
        return parent.replace(body=new if new is not None else S.SeqStmt(()))
    if isinstance(parent, S.BlockRealize):
        return parent.replace(block=new)
    if isinstance(parent, S.Block):
        if parent.init is old:
            return parent.replace(init=new)
        return parent.replace(body=new if new is not None else S.SeqStmt(()))
    if isinstance(parent, S.IfThenElse):
        if parent.then_case is old:
            return parent.replace(then_case=new)
        return parent.replace(else_case=new)
    if isinstance(parent, S.Allocate):
        return parent.replace(body=new)
    raise TypeError(f"cannot replace a child of {type(parent).__name__}")


def replace_path(func: PrimFunc, path: Path, new) -> PrimFunc:
    """A function where ``path[-1]`` is replaced by ``new`` (None removes it from its sequence).

    A SeqStmt replacement is spliced into a parent sequence. When ``new`` has the shape of the node it
    replaces (see ``FuncIndex.derive``) and the function's index is cached, the new function's index is
    derived from it instead of being rebuilt by the next lookup.
    """
    return _replace(func, path, new, False)[0]


def replace_path_tracked(func: PrimFunc, path: Path, new) -> tuple[PrimFunc, dict | None]:
    """``replace_path``, also returning ``{old ancestor: new ancestor}`` for the rebuilt nodes above
    ``path[-1]`` when each of them kept all its other children in place (else None). Then any path of the
    old function that does not go through ``path[-1]`` maps node by node (``map_path``) to the new one,
    which saves primitives that edit twice a lookup in the intermediate function."""
    return _replace(func, path, new, True)


def _replace(func: PrimFunc, path: Path, new, want_mapping: bool):
    n = len(path)
    rebuilt = [None] * n  # rebuilt[i] replaces path[i]
    rebuilt[n - 1] = cur = new
    kept = True  # every rebuilt ancestor kept its other children in place
    for i in range(n - 1, 0, -1):
        parent = path[i - 1]
        child = path[i]
        t = type(parent)
        if t is S.For:
            cur = _for_with_body(parent, cur if cur is not None else S.SeqStmt(()))
        elif t is S.BlockRealize:
            cur = _realize_with_block(parent, cur)
        elif t is S.Block:
            if parent.init is child:
                kept = kept and cur is not None
                cur = _block_with(parent, cur, parent.body)
            else:
                cur = _block_with(parent, parent.init, cur if cur is not None else S.SeqStmt(()))
        else:
            new_parent = _replace_child(parent, child, cur)
            kept = kept and _kept_shape(parent, new_parent, child, cur)
            cur = new_parent
        rebuilt[i - 1] = cur
    out = _func_with_body(func, cur)
    if not kept:
        return out, None
    if path[0] is func.body and new is not None and _same_shape(path[-1], new):
        old_index = _INDEXES.get(func.body)
        if old_index is not None:
            spine = list(zip(path, rebuilt))
            last = spine[-1][0]
            if type(new) is S.BlockRealize and new.block is not last.block:
                spine.append((last.block, new.block))
            _INDEXES.put(cur, old_index.derive(cur, spine))
    if not want_mapping:
        return out, None
    return out, {path[i]: rebuilt[i] for i in range(n - 1)}


def _func_with_body(func: PrimFunc, body) -> PrimFunc:
    """``func.with_body(body)`` (its parameters are already checked)."""
    if type(func) is not PrimFunc:
        return func.with_body(body)
    out = _NEW(PrimFunc)
    out.params = func.params
    out.body = body
    out.attrs = dict(func.attrs)
    out.name = func.name
    return out


def map_path(path: Path, mapping: dict) -> Path:
    """A path of the old function moved into the new one (``mapping`` from ``replace_path_tracked``)."""
    return [mapping.get(n, n) for n in path]


def _same_block_shape(a, b) -> bool:
    return (type(a) is type(b) and a.name == b.name and a.init is b.init and a.body is b.body
            and a.alloc_buffers == b.alloc_buffers)


def _same_shape(old, new) -> bool:
    """Whether ``new`` can stand in for ``old`` in a ``FuncIndex``: same class and children, and the same
    block name / loop variable / allocations where it has them."""
    t = type(old)
    if type(new) is not t:
        return False
    if t is S.BlockRealize:
        return old.block is new.block or _same_block_shape(old.block, new.block)
    if t is S.Block:
        return _same_block_shape(old, new)
    if t is S.For and new.loop_var is not old.loop_var:
        return False
    a, b = stmt_children(old), stmt_children(new)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _kept_shape(old_parent, new_parent, old_child, new_child) -> bool:
    """Whether rebuilding ``old_parent`` with ``new_child`` for ``old_child`` kept every other child in
    place (``S.seq`` may splice or collapse sequences)."""
    if type(new_parent) is not type(old_parent):
        return False
    if type(new_parent) is S.BlockRealize:
        return new_parent.block is new_child or new_parent.block is old_parent.block
    a, b = stmt_children(old_parent), stmt_children(new_parent)
    return len(a) == len(b) and all(x is y or (x is old_child and y is new_child) for x, y in zip(a, b))
