"""TensorIR's block kinds (complete, reduction) and the checks built on them (TVM's ``analysis.cc``).

A *complete* block: 1) all its iteration variables are spatial, 2) it is the only writer of its outputs in
its scope, 3) it reads none of the buffers it writes. A *reduction* block: 1) it has an ``init``, 2) its
bindings are quasi-affine (``schedule.affine``), 3) its variables are spatial or reduce, 4) it is the only
writer of its outputs in its scope, 5) no reduction variable indexes the buffers it writes.

``concurrency_violation(block, loop)`` (parallel, vectorize, and compute_at / reverse_compute_at into such a
loop): the loop feeds only spatial variables of the block (one of them if it is a reduction block), and the
block is complete or a reduction block (TVM's *compact data flow*), so its iterations over the loop's
spatial variables touch disjoint data. As in TVM,
"only writer" is not asked of blocks under a loop (the loop is no scope). One deliberate difference from
TVM: the update block that ``decompose_reduction`` leaves (a reduction block without its ``init``) also
passes, when it meets conditions 2-5 and has a reduction variable -- its iterations over spatial variables
are as independent as before the init moved out, and tunefarm's own spaces parallelize and vectorize after
decomposing.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import add_int, simplify, sub_int
from ...ir.function import PrimFunc
from ...ir.functor import uses_var
from ...ir.memo import NodeCache
from ...ir.stmt_functor import iter_stmts
from ..affine import is_affine_binding
from ..error import ScheduleError
from ..tree import enclosing_block, loops_above
from .dataflow import ScopeInfo, expr_vars, interval, region_under, relax_loops
from .query import binding_kinds, is_reduction_block

COMPLETE_RULES = {1: "not all its iteration variables are spatial", 2: "it is not the only writer of its outputs",
                  3: "it reads a buffer it writes"}
REDUCTION_RULES = {1: "it has no init", 2: "its bindings are not quasi-affine", 3: "it has an iteration "
                   "variable that is neither spatial nor reduce", 4: "it is not the only writer of its outputs",
                   5: "a reduction variable indexes a buffer it writes"}


def _dominant(block: S.Block, scope_info: ScopeInfo | None) -> bool:
    if scope_info is None:
        return True
    return all(len(scope_info.writers(w.buffer)) <= 1 for w in block.writes)


def complete_code(block: S.Block, scope_info: ScopeInfo | None) -> int:
    """0 for a complete block, else the number of the first condition it breaks (``COMPLETE_RULES``)."""
    if any(iv.iter_type != "S" for iv in block.iter_vars):
        return 1
    if not _dominant(block, scope_info):
        return 2
    written = {w.buffer for w in block.writes}
    if any(r.buffer in written for r in block.reads):
        return 3
    return 0


def reduction_var_indexes_output(block: S.Block) -> bool:
    """Whether a reduction variable appears in the indices of a store to a buffer the block writes."""
    reduce_vars = {iv.var for iv in block.iter_vars if iv.iter_type == "R"}
    if not reduce_vars:
        return False
    for root in (block.init, block.body):
        if root is None:
            continue
        for s in iter_stmts(root):
            if isinstance(s, S.BufferStore) and any(reduce_vars.intersection(expr_vars(i)) for i in s.indices):
                return True
    return False


def reduction_code(realize: S.BlockRealize, loops, scope_info: ScopeInfo | None, need_init: bool = True) -> int:
    """0 for a reduction block, else the number of the first condition it breaks (``REDUCTION_RULES``).
    ``loops``: the loops from the block up to its scope (for the affine-binding condition)."""
    block = realize.block
    if need_init and block.init is None:
        return 1
    if not is_affine_binding(realize, loops):
        return 2
    if not _dominant(block, scope_info):
        return 4
    return 5 if reduction_var_indexes_output(block) else 0


def compact_violation(realize: S.BlockRealize, loops) -> str | None:
    """Why the block is neither complete nor a reduction block under a loop (see the module doc), or None.
    ``loops``: the loops from the block up to its scope."""
    block = realize.block
    c = complete_code(block, None)
    if c == 0:
        return None
    r = reduction_code(realize, loops, None)
    if r == 0:
        return None
    if r == 1 and any(iv.iter_type == "R" for iv in block.iter_vars) and \
            reduction_code(realize, loops, None, need_init=False) == 0:
        return None  # a decomposed reduction's update block (see the module doc)
    return (f"block {block.name!r} is neither a complete block ({COMPLETE_RULES[c]}) nor a reduction block "
            f"({REDUCTION_RULES[r]}), so its iterations may depend on each other")


def concurrency_violation(realize: S.BlockRealize, loop: S.For, loops, compact: bool = True,
                          via: frozenset = frozenset()) -> str | None:
    """Why ``realize`` may not run under the parallel / vectorized ``loop``, or None: the loop must feed only
    spatial variables, must feed one of a reduction block's spatial variables (else every iteration updates the
    same accumulator), and the block must pass ``compact_violation`` (``loops``: from the block to its scope;
    ``compact`` False for a block nested in another, which TVM checks only for the first two; ``via``: the
    spatial variables of the blocks enclosing it that carry the loop, as blockize's outer block does: a
    nested reduction whose written indices use one has a distinct accumulator per iteration).
    A loop of one iteration runs nothing concurrently."""
    if loop.const_extent() == 1:
        return None
    name = loop.loop_var.name
    kinds = binding_kinds(realize).get(loop.loop_var, set())
    if "R" in kinds:
        return f"loop {name!r} is bound into a reduction iteration variable of block {realize.block.name!r}"
    spatial = "S" in kinds or any(uses_var(r.min, via) for w in realize.block.writes for r in w.region)
    if is_reduction_block(realize.block) and not spatial:
        return (f"loop {name!r} is not bound into any spatial iteration variable of reduction block "
                f"{realize.block.name!r}; its iterations would update the same accumulator")
    why = compact_violation(realize, loops) if compact else None
    return None if why is None else f"loop {name!r} does not have a compact data flow: {why}"


def check_moved_nest(prim: str, lpath, nest) -> None:
    """The moved block will run under the parallel / vectorized loops of ``lpath``: it must be as independent
    across their iterations as ``parallel`` / ``vectorize`` demand of the blocks already there."""
    new_loops = []
    while isinstance(nest, S.For):
        new_loops.append(nest)
        nest = nest.body
    scope_loops = loops_above(lpath + [nest]) + new_loops
    for lp in lpath:
        if isinstance(lp, S.For) and lp.kind in ("parallel", "vectorized"):
            why = concurrency_violation(nest, lp, scope_loops)
            if why:
                raise ScheduleError(prim, f"the block would run under {lp.kind} loop {lp.loop_var.name!r}, where "
                                          f"its iterations are not independent: {why}")


def check_reads_in_bounds(primitive: str, block: S.Block, regions) -> None:
    """reverse_compute_at places a consumer's iterations by what they read of the producers' buffers: an
    iteration whose declared read leaves the buffer (a guarded access, e.g. padding) would match no produced
    element and be dropped, so such a consumer is refused."""
    doms = {iv.var: (iv.dom.min, simplify(sub_int(add_int(iv.dom.min, iv.dom.extent), 1))) for iv in block.iter_vars}
    for reg in regions:
        for d, rg in enumerate(reg.region):
            lo = interval(rg.min, doms)
            hi = interval(simplify(sub_int(add_int(rg.min, rg.extent), 1)), doms)
            size = reg.buffer.shape[d]
            if lo is None or hi is None or not all(isinstance(x, E.IntImm) for x in (lo[0], hi[1], size)):
                continue
            if lo[0].value < 0 or hi[1].value > size.value - 1:
                raise ScheduleError(primitive, f"block {block.name!r} reads {reg.buffer.name!r} outside its bounds "
                                               f"(dimension {d}: {lo[0].value}..{hi[1].value}), a guarded access; "
                                               "the iterations that read nothing there cannot be placed")


def check_reduction_block(func: PrimFunc, path, primitive: str) -> None:
    """Raise unless the block at the end of ``path`` is a reduction block in its scope."""
    realize = path[-1]
    scope = enclosing_block(path)
    info = ScopeInfo(func, scope) if scope is not None else None
    r = reduction_code(realize, loops_above(path), info)
    if r:
        raise ScheduleError(primitive, f"block {realize.block.name!r} is not a reduction block: "
                                       f"{REDUCTION_RULES[r]}")


def _hull(realize: S.BlockRealize, path, buf, kind: str):
    """Constant per-dimension ``(lo, hi)`` of what the block reads or writes of ``buf`` over all its loops in
    the scope; None where a bound is not a literal."""
    relax, bounds = relax_loops(loops_above(path), {})
    reg = region_under(realize, buf, kind, relax, bounds)
    if reg is None:
        return None
    return [(lo.value, hi.value) if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm) else None
            for lo, hi in reg]


def _trivially_true(pred) -> bool:
    return isinstance(pred, E.IntImm) and bool(pred.value)


def region_cover_violation(sites: list, k: int, buf) -> str | None:
    """Why block ``sites[k]``'s reads of ``buf`` are not covered by what the earlier blocks of its scope write
    of it (TVM's *region cover*), or None. Checked on the whole scope with constant bounds, each clipped to the
    buffer's shape as TVM does (a read past the edge is guarded); a predicated read is bounded by its predicate,
    which this does not analyse, so it passes."""
    c = sites[k]
    producers = [p for p in sites[:k] if buf in p.writes]
    if not producers or buf in c.writes or not _trivially_true(c.realize.predicate):
        return None
    need = _hull(c.realize, c.path, buf, "read")
    made = [_hull(p.realize, p.path, buf, "write") for p in producers]
    if need is None or any(m is None for m in made):
        return None
    for d, want in enumerate(need):
        have = [m[d] for m in made]
        if want is None or any(h is None for h in have):
            continue
        lo, hi = min(h[0] for h in have), max(h[1] for h in have)
        size = buf.shape[d]
        if isinstance(size, E.IntImm):  # as TVM: both sides are clipped to the buffer (a guarded read's excess)
            lo, hi = max(lo, 0), min(hi, size.value - 1)
            want = (max(want[0], 0), min(want[1], size.value - 1))
        if lo > want[0] or hi < want[1]:
            return (f"block {c.name!r} reads {buf.name!r} beyond the region the blocks before it write "
                    f"(dimension {d}: reads {want[0]}..{want[1]}, written {lo}..{hi})")
    return None


_STAGE_PIPELINE = NodeCache("block_kinds.stage_pipeline", 512)
_OK = "ok"


def stage_pipeline_violation(func: PrimFunc, scope: S.Block) -> str | None:
    """Why the scope is not a *stage pipeline* (TVM's condition for rfactor, compute_at and the inlines), or
    None: a stage pipeline has no write-after-read between its child blocks, and region cover holds for every
    read. Cached per scope block (immutable): sampling a compute location asks it for every candidate loop."""
    hit = _STAGE_PIPELINE.get(scope)
    if hit is None:
        hit = _STAGE_PIPELINE.put(scope, _stage_pipeline_violation(func, scope) or _OK)
    return None if hit is _OK else hit


def check_stage_pipeline(func: PrimFunc, scope: S.Block | None, primitive: str) -> None:
    why = stage_pipeline_violation(func, scope) if scope is not None else None
    if why:
        raise ScheduleError(primitive, f"the scope {scope.name!r} is not a stage pipeline: {why}")


def check_complete_or_reduction(realize: S.BlockRealize, path, info: ScopeInfo, primitive: str) -> None:
    """compute_at / reverse_compute_at move only complete or reduction blocks (in their scope)."""
    c = complete_code(realize.block, info)
    if c == 0:
        return
    r = reduction_code(realize, loops_above(path), info)
    if r:
        raise ScheduleError(primitive, f"block {realize.block.name!r} is neither a complete block "
                                       f"({COMPLETE_RULES[c]}) nor a reduction block ({REDUCTION_RULES[r]})")


def _stage_pipeline_violation(func: PrimFunc, scope: S.Block) -> str | None:
    sites = ScopeInfo(func, scope).sites
    for k, c in enumerate(sites):
        for p in sites[:k]:
            war = (p.reads - p.writes) & c.writes
            if war:
                return (f"block {c.name!r} writes {sorted(b.name for b in war)} after block {p.name!r} reads it "
                        "(a write-after-read)")
        for buf in c.reads:
            why = region_cover_violation(sites, k, buf)
            if why:
                return why
    return None
