"""Finding and replacing nodes in an immutable function body.

Schedule primitives are pure functions ``PrimFunc -> PrimFunc``. They locate what they change as a *path*
(the list of nodes from ``func.body`` down to the target), build the replacement, and rebuild only the
ancestors on that path; everything else is shared with the old function. Blocks are addressed by their
unique name, loops by their loop variable (a loop keeps its ``Var`` across rewrites of its body).
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from .error import ScheduleError

Path = list  # [func.body, ..., target]


def _children(node):
    """Statement children of a statement, in program order."""
    if isinstance(node, S.SeqStmt):
        return node.seq
    if isinstance(node, S.For):
        return (node.body,)
    if isinstance(node, S.BlockRealize):
        return (node.block,)
    if isinstance(node, S.Block):
        return (node.init, node.body) if node.init is not None else (node.body,)
    if isinstance(node, S.IfThenElse):
        return (node.then_case,) if node.else_case is None else (node.then_case, node.else_case)
    if isinstance(node, S.Allocate):
        return (node.body,)
    return ()


def iter_paths(root):
    """Yield the path to every statement, pre-order (parents before children, program order)."""
    stack = [[root]]
    while stack:
        path = stack.pop()
        yield path
        kids = _children(path[-1])
        for k in reversed(kids):
            stack.append(path + [k])


def find_block(func: PrimFunc, name: str, primitive: str = "get_block") -> Path:
    """Path ending at the ``BlockRealize`` of the block called ``name``."""
    found = None
    for path in iter_paths(func.body):
        node = path[-1]
        if isinstance(node, S.BlockRealize) and node.block.name == name:
            if found is not None:
                raise ScheduleError(primitive, f"block name {name!r} is not unique in function {func.name!r}")
            found = path
    if found is None:
        raise ScheduleError(primitive, f"no block named {name!r} in function {func.name!r} "
                                       f"(blocks: {block_names(func)})")
    return found


def find_loop(func: PrimFunc, loop_var: E.Var, primitive: str = "get_loops") -> Path:
    """Path ending at the ``For`` whose loop variable is ``loop_var``."""
    for path in iter_paths(func.body):
        node = path[-1]
        if isinstance(node, S.For) and node.loop_var is loop_var:
            return path
    raise ScheduleError(primitive, f"loop {loop_var.name!r} no longer exists in function {func.name!r} "
                                   "(it was split, fused or removed by an earlier primitive)")


def block_names(func: PrimFunc) -> list[str]:
    return [p[-1].block.name for p in iter_paths(func.body) if isinstance(p[-1], S.BlockRealize)]


def all_block_realizes(func: PrimFunc) -> list[S.BlockRealize]:
    return [p[-1] for p in iter_paths(func.body) if isinstance(p[-1], S.BlockRealize)]


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


def _replace_child(parent, old, new):
    if isinstance(parent, S.SeqStmt):
        items = []
        for c in parent.seq:
            if c is old:
                if new is None:
                    continue
                if isinstance(new, S.SeqStmt):
                    items.extend(new.seq)
                else:
                    items.append(new)
            else:
                items.append(c)
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

    A SeqStmt replacement is spliced into a parent sequence.
    """
    cur = new
    for i in range(len(path) - 1, 0, -1):
        cur = _replace_child(path[i - 1], path[i], cur)
    return func.with_body(cur)


def replace_nodes(func: PrimFunc, mapping: dict) -> PrimFunc:
    """Replace several statements at once (``old node -> new node``; identity match), sharing the rest."""

    def rec(node):
        if node in mapping:
            return mapping[node]
        kids = _children(node)
        if not kids:
            return node
        new = node
        for k in kids:
            nk = rec(k)
            if nk is not k:
                new = _replace_child(new, k, nk)
        return new

    # mapping keys are nodes; use identity dict semantics (nodes hash by identity)
    return func.with_body(rec(func.body))
