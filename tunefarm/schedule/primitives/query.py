"""Read-only questions about a function's block/loop tree: loops of a block, child blocks, producers, consumers.

These never change the IR. Producers and consumers follow TensorIR's block-scope dependencies: within the
scope of the enclosing block, an earlier block that writes a buffer this block reads or writes is a
producer (read-after-write / write-after-write); a later block that reads or writes a buffer this block
writes is a consumer.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import PrimFunc
from ...ir.functor import collect_buffer_accesses
from ...ir.stmt_functor import iter_block_realizes
from ..error import ScheduleError
from ..tree import enclosing_block, find_block, find_loop, loops_above


def blocks_under(stmt) -> list[S.BlockRealize]:
    """The block realizes below ``stmt`` that are not nested inside another block, in program order."""
    return [r for r, _ in iter_block_realizes(stmt, nested=False)]


def expr_vars(e) -> set:
    """The variables in an expression (a fast iterative walk: schedules ask this for every binding)."""
    out = set()
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is E.Binary:
            stack.append(x.a)
            stack.append(x.b)
        elif t is E.Var:
            out.add(x)
        elif t is E.IntImm:
            continue
        elif isinstance(x, E.Var):
            out.add(x)
        elif isinstance(x, E.BufferLoad):
            stack.extend(x.indices)
        elif isinstance(x, E.Call):
            stack.extend(x.args)
        elif not isinstance(x, (E.IntImm, E.FloatImm)):
            stack.extend(getattr(x, f) for f in x._fields)
    return out


def binding_kinds(realize: S.BlockRealize) -> dict:
    """``Var -> {"S", "R"}``: which kinds of block iteration variables each outer variable is bound into."""
    kinds: dict = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if isinstance(value, E.Var):
            kinds.setdefault(value, set()).add(iv.iter_type)
        elif not isinstance(value, E.IntImm):
            for v in expr_vars(value):
                kinds.setdefault(v, set()).add(iv.iter_type)
    return kinds


def is_reduction_block(block: S.Block) -> bool:
    return block.init is not None or block.is_reduction


def get_loops(func: PrimFunc, block: str) -> list[E.Var]:
    """Loop variables of the loops above ``block`` inside its scope, outermost first."""
    return [lp.loop_var for lp in loops_above(find_block(func, block, "get_loops"))]


def get_child_blocks(func: PrimFunc, block: str | None = None, loop: E.Var | None = None) -> list[str]:
    """Names of the blocks directly below a block or a loop (not those nested in other blocks)."""
    if (block is None) == (loop is None):
        raise ScheduleError("get_child_blocks", "give exactly one of a block or a loop")
    if block is not None:
        node = find_block(func, block, "get_child_blocks")[-1].block
        roots = [node.init, node.body]
    else:
        roots = [find_loop(func, loop, "get_child_blocks")[-1].body]
    return [r.block.name for root in roots for r in blocks_under(root)]


def _accesses(block: S.Block) -> tuple[set, set]:
    reads = {r.buffer for r in block.reads}
    writes = {w.buffer for w in block.writes}
    if not reads and not writes:  # regions not declared: look at the body
        r, w = collect_buffer_accesses(S.SeqStmt([x for x in (block.init, block.body) if x is not None]))
        reads, writes = set(r), set(w)
    return reads, writes


def _scope_siblings(func: PrimFunc, block: str, primitive: str) -> tuple[list[S.Block], int]:
    path = find_block(func, block, primitive)
    scope = enclosing_block(path)
    if scope is None:  # the root block has no scope around it
        return [path[-1].block], 0
    siblings = [r.block for r in blocks_under(scope.body)]
    index = next(i for i, b in enumerate(siblings) if b is path[-1].block)
    return siblings, index


def get_producers(func: PrimFunc, block: str) -> list[str]:
    """Earlier blocks of the same scope writing a buffer that ``block`` reads or writes."""
    siblings, k = _scope_siblings(func, block, "get_producers")
    reads, writes = _accesses(siblings[k])
    needed = reads | writes
    return [b.name for b in siblings[:k] if _accesses(b)[1] & needed]


def get_consumers(func: PrimFunc, block: str) -> list[str]:
    """Later blocks of the same scope reading or writing a buffer that ``block`` writes."""
    siblings, k = _scope_siblings(func, block, "get_consumers")
    _, writes = _accesses(siblings[k])
    out = []
    for b in siblings[k + 1:]:
        r, w = _accesses(b)
        if (r | w) & writes:
            out.append(b.name)
    return out


def reduction_binding_under(loop: S.For) -> str | None:
    """Name of a block below ``loop`` that binds the loop into a reduction iteration variable, if any."""
    for realize in blocks_under(loop.body):
        if "R" in binding_kinds(realize).get(loop.loop_var, ()):
            return realize.block.name
    return None
