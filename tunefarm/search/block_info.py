"""Questions the auto space and the postprocessors ask about blocks of a function (read-only).

Which blocks are plain elementwise producers (inline them), which are reductions with data reuse (tile them
on several levels), which loops are bound to spatial or reduction iteration variables (only spatial loops
may run in parallel or as vector lanes).
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from ..ir.functor import collect_buffer_accesses
from ..ir.stmt_functor import StmtVisitor, iter_block_realizes
from ..schedule.error import ScheduleError
from ..schedule.primitives.query import binding_kinds  # noqa: F401  (re-exported for the search rules)


def expr_nodes(e, cls) -> list:
    """Nodes of type ``cls`` in an expression, outer ones first, with repeats (an explicit stack: these
    walks run thousands of times per search round)."""
    out = []
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, cls):
            out.append(n)
        if isinstance(n, E.PrimExpr):
            for f in n._fields:
                ch = getattr(n, f)
                if isinstance(ch, tuple):
                    stack.extend(ch)
                elif ch is not None:
                    stack.append(ch)
    return out


def vars_in(e) -> list:
    """Variables of an expression (with repeats)."""
    return expr_nodes(e, E.Var)


def locate(func: PrimFunc, name: str) -> tuple[S.BlockRealize, list[S.For]]:
    """The block's realize and the loops above it inside its enclosing block (outermost first)."""
    for realize, loops in iter_block_realizes(func.body):
        if realize.block.name == name:
            return realize, list(loops)
    raise ScheduleError("get_block", f"no block named {name!r} in function {func.name!r}")


def block_realize(func: PrimFunc, name: str) -> S.BlockRealize:
    return locate(func, name)[0]


def loop_kinds(func: PrimFunc, name: str) -> list[str]:
    """For each loop above the block (outermost first): "S" (only spatial bindings), "R" (binds a reduction
    variable) or "O" (the loop is not used by the block's bindings)."""
    realize, loops = locate(func, name)
    kinds = binding_kinds(realize)
    out = []
    for lp in loops:
        k = kinds.get(lp.loop_var, set())
        out.append("R" if "R" in k else ("S" if "S" in k else "O"))
    return out


class _Stores(StmtVisitor):
    """The stores under a statement in program order; a nested block's ``init`` is not the block's work."""

    def __init__(self):
        self.found: list = []

    def visit_BufferStore(self, node: S.BufferStore):
        self.found.append(node)

    def visit_Block(self, node: S.Block):
        self.visit(node.body)


def _stores(stmt) -> list[S.BufferStore]:
    """The stores of a block body, in reverse program order (``contiguous_loop_index`` reads the vector
    dimension off the last one), nested blocks' init statements excluded."""
    v = _Stores()
    v.visit(stmt)
    v.found.reverse()
    return v.found


def is_spatial(block: S.Block) -> bool:
    return block.init is None and all(iv.iter_type == "S" for iv in block.iter_vars)


def writes_param(func: PrimFunc, block: S.Block) -> bool:
    params = set(func.params)
    _, writes = collect_buffer_accesses(block.body)
    return any(b in params for b in writes) or any(w.buffer in params for w in block.writes)


def is_elementwise_producer(func: PrimFunc, name: str) -> bool:
    """A spatial block with a single store to a non-parameter buffer: what auto-inline tries to inline."""
    blk = block_realize(func, name).block
    if not is_spatial(blk) or writes_param(func, blk):
        return False
    if _has_block(blk.body):
        return False
    return len(_stores(blk.body)) == 1


def has_conditional_value(func: PrimFunc, name: str) -> bool:
    """Whether the block stores a conditional (``T.if_then_else`` / ``Select``), e.g. a padding block.

    MetaSchedule's CPU auto-inline keeps such blocks (``disallow_if_then_else``): inlined, the condition and
    the clamped gather it guards run in the consumer's innermost loop, which then no longer vectorizes to
    contiguous loads (a conv2d with its padding inlined measured 2.2 ms against TVM's 1.0 ms here).
    """
    return any(expr_nodes(st.value, E.Select) for st in _stores(block_realize(func, name).block.body))


def is_elementwise_consumer(func: PrimFunc, name: str) -> bool:
    """A spatial block with one store whose indices are exactly its iteration variables (reverse-inlinable)."""
    blk = block_realize(func, name).block
    if not is_spatial(blk):
        return False
    stores = _stores(blk.body)
    if len(stores) != 1:
        return False
    ivs = [iv.var for iv in blk.iter_vars]
    idx = stores[0].indices
    return len(idx) == len(ivs) and all(i is v for i, v in zip(idx, ivs))


def has_trivial_bindings(func: PrimFunc, name: str) -> bool:
    """Every iteration variable is bound to its own loop variable (what multi-level tiling expects)."""
    realize = block_realize(func, name)
    seen = set()
    for v in realize.iter_values:
        if not isinstance(v, E.Var) or v in seen:
            return False
        seen.add(v)
    return True


def needs_multi_level_tiling(func: PrimFunc, name: str) -> bool:
    """A reduction block with spatial axes and data reuse (a read that ignores some iteration variable)."""
    realize = block_realize(func, name)
    blk = realize.block
    if not blk.is_reduction or not any(iv.iter_type == "S" for iv in blk.iter_vars):
        return False
    if blk.init is None or not has_trivial_bindings(func, name):
        return False
    if _has_block(blk.body):
        return False
    ivs = {iv.var for iv in blk.iter_vars}
    for ld in _reads(blk):
        used = set()
        for i in ld.indices:
            used.update(v for v in vars_in(i) if v in ivs)
        if used != ivs:
            return True
    return False


def _has_block(stmt) -> bool:
    return next(iter_block_realizes(stmt, nested=False), None) is not None


def leaf_blocks(func: PrimFunc) -> list[str]:
    """Names of blocks that contain no other block, in program order."""
    return [r.block.name for r, _ in iter_block_realizes(func.body)
            if r.block.name != "root" and not _has_block(r.block.body)]


def reduction_bound_vars(func_or_stmt) -> set:
    """Every variable used in a binding of a reduction iteration variable, in one walk.

    A loop variable only appears in bindings of blocks below its loop, so a loop is data parallel exactly
    when its variable is not in this set.
    """
    out: set = set()
    for n, _ in iter_block_realizes(func_or_stmt.body if isinstance(func_or_stmt, PrimFunc) else func_or_stmt):
        for iv, value in zip(n.block.iter_vars, n.iter_values):
            if iv.iter_type == "R":
                out.update(vars_in(value))
    return out


def _reads(blk: S.Block) -> list:
    """The loads in the values a block stores."""
    return [ld for st in _stores(blk.body) for ld in expr_nodes(st.value, E.BufferLoad)]


def contiguous_loop_index(func: PrimFunc, name: str) -> int | None:
    """Index (among the block's loops) of the spatial loop bound to the last index of the written buffer:
    the dimension whose innermost tile becomes vector lanes."""
    realize, loops = locate(func, name)
    blk = realize.block
    stores = _stores(blk.body)
    if not stores or not stores[0].indices:
        return None
    last = stores[0].indices[-1]
    if not isinstance(last, E.Var):
        return None
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.var is last and iv.iter_type == "S" and isinstance(value, E.Var):
            for k, lp in enumerate(loops):
                if lp.loop_var is value:
                    return k
    return None


def rfactor_candidate(func: PrimFunc, name: str, max_spatial: int) -> int | None:
    """Index of a reduction loop worth an ``rfactor`` sketch, or None.

    When the block's output is small (at most ``max_spatial`` elements: a dense layer on one input row) and a
    read buffer is indexed innermost by a reduction variable, vectorizing that reduction gives contiguous
    loads where vectorizing the output would gather.
    """
    realize, loops = locate(func, name)
    blk = realize.block
    spatial = 1
    for iv in blk.iter_vars:
        if iv.iter_type == "S":
            ext = iv.dom.extent
            if not isinstance(ext, E.IntImm):
                return None
            spatial *= ext.value
    if spatial > max_spatial:
        return None
    red = {iv.var: val for iv, val in zip(blk.iter_vars, realize.iter_values) if iv.iter_type == "R"}
    for ld in _reads(blk):
        if not ld.indices:
            continue
        last = ld.indices[-1]
        if isinstance(last, E.Var) and last in red and isinstance(red[last], E.Var):
            for k, lp in enumerate(loops):
                if lp.loop_var is red[last] and lp.const_extent() and lp.const_extent() > 1:
                    return k
    return None


def iter_var_loops(func: PrimFunc, name: str) -> dict | None:
    """Block iteration variable -> index of the loop bound to it (among the block's loops), or None when the
    bindings are not one loop per iteration variable."""
    if not has_trivial_bindings(func, name):
        return None
    realize, loops = locate(func, name)
    index = {lp.loop_var: k for k, lp in enumerate(loops)}
    return {iv.var: index[v] for iv, v in zip(realize.block.iter_vars, realize.iter_values) if v in index}


def packable_read(func: PrimFunc, name: str) -> tuple[int, set] | None:
    """``(index into block.reads, indices of the block's loops it uses)`` for the read buffer worth packing.

    Worth packing: a read that ignores some spatial iteration variable (so a packed copy is reused across
    it) and walks the reduction along a non-innermost dimension (so the tiled loops stride through memory
    a row at a time): B of ``A @ B`` ignores ``i`` and is read down its ``k`` rows. The largest such read is
    chosen. None when none qualifies or the bindings are not one loop per iteration variable.
    """
    blk = block_realize(func, name).block
    var_loop = iter_var_loops(func, name)
    if var_loop is None:
        return None
    spatial = {iv.var for iv in blk.iter_vars if iv.iter_type == "S"}
    reduce = {iv.var for iv in blk.iter_vars if iv.iter_type == "R"}
    written = {w.buffer for w in blk.writes}
    best = None
    for idx, region in enumerate(blk.reads):
        if region.buffer in written or not region.region:
            continue
        used = set()
        for r in region.region:
            used.update(v for v in vars_in(r.min) if v in var_loop)
        if not (spatial - used) or not (spatial & used):
            continue
        if set(vars_in(region.region[-1].min)) & reduce or not (used & reduce):
            continue
        size = 1
        for d in region.buffer.const_shape() or ():
            size *= d
        if best is None or size > best[0]:
            best = (size, idx, {var_loop[v] for v in used if v in spatial})
    return None if best is None else (best[1], best[2])
