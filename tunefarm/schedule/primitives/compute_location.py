"""Where a block computes: inline it into its consumers, or move it under a loop of its consumer/producer.

All functions are pure (``PrimFunc -> PrimFunc``) and follow TensorIR semantics. Illegal requests raise
``ScheduleError(primitive, reason)`` and nothing else.

``compute_at(P, L)`` regenerates P's loops under ``L`` so that P computes exactly the region its consumers
read during one iteration of ``L`` (loops above ``L`` fixed, loops below relaxed; interval arithmetic),
intersected with P's iteration domain (a ``T.where`` guards the edges when the region may leave it).
``reverse_compute_at(C, L)`` is the mirror image: C moves under ``L`` right after its producers and
computes what they have finished writing in one iteration of ``L``. Computing more points than needed is
harmless for ``compute_at`` (the producer is a pure function of inputs that are final), so regions are
joined (bounding boxes); ``reverse_compute_at`` must only read finished values, so it requires point-wise
reads and equal regions from all producers, and every producer under the loop must finish its reduction
inside it.

Dependency checks work on the child blocks of the block's scope with the buffers they really access: no
block that the move jumps over (or that runs inside the target loop) may write what the moved block reads,
or touch what it writes. As in TVM, ``compute_at`` refuses blocks that write a function parameter (only
the consumers' part would be computed). A region dimension must be ``iteration variable + constant`` in the
moved block's accesses to be solved for its iteration domain (transposes are fine, reshapes are not).
TVM's rules come first: the scope must be a stage pipeline (every primitive here), the moved block complete
or a reduction block, and independent across the parallel / vectorized loops it moves under
(``block_kinds``).
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import (add_int, affine_coefficients, const_bound, simplified_bound, simplified_int, simplify,
                         sub_int)
from ...ir.function import PrimFunc
from ...ir.functor import IRMutator, collect_vars, substitute
from ...ir.stmt_functor import seq_items, unwrap_seq
from ..error import ScheduleError
from ..tree import all_loops_above, enclosing_block, func_index, loop_bounds, loops_above, replace_path_tracked
from . import dataflow as D
from .block_kinds import check_complete_or_reduction, check_moved_nest, check_reads_in_bounds, check_stage_pipeline

_INLINE = "compute_inline"
_REV_INLINE = "reverse_compute_inline"


# ----------------------------------------------------------------------------------------------------------
# Inline
# ----------------------------------------------------------------------------------------------------------
def _single_store(block: S.Block, prim: str) -> S.BufferStore:
    body = unwrap_seq(block.body)
    if not isinstance(body, S.BufferStore):
        raise ScheduleError(prim, f"block {block.name!r} must consist of a single buffer store "
                                  f"(found {type(body).__name__})")
    return body


def _check_spatial(block: S.Block, prim: str) -> None:
    if block.init is not None or block.is_reduction:
        raise ScheduleError(prim, f"block {block.name!r} is a reduction block; only spatial (complete) "
                                  "blocks qualify")
    if block.alloc_buffers:
        raise ScheduleError(prim, f"block {block.name!r} allocates buffers of its own")


class _InlinePlan:
    __slots__ = ("realize", "store", "index_vars", "buffer")

    def __init__(self, realize, store, index_vars, buffer):
        self.realize = realize
        self.store = store
        self.index_vars = index_vars
        self.buffer = buffer


def _point_block(func: PrimFunc, block: str, prim: str):
    """``(path, realize, store)`` of a block both inlines take: spatial, with a single buffer store."""
    path = D.block_path(func, block, prim)
    realize = path[-1]
    _check_spatial(realize.block, prim)
    return path, realize, _single_store(realize.block, prim)


def _plan_inline(func: PrimFunc, block: str) -> _InlinePlan:
    prim = _INLINE
    path, realize, store = _point_block(func, block, prim)
    blk = realize.block
    buf = store.buffer
    if D.is_param(func, buf):
        raise ScheduleError(prim, f"block {block!r} writes {buf.name!r}, an output of the function; only "
                                  "blocks writing intermediate buffers can be inlined")
    if D.allocating_block(func, buf) is None:
        raise ScheduleError(prim, f"buffer {buf.name!r} written by {block!r} is not allocated by any block")
    ivars = [iv.var for iv in blk.iter_vars]
    index_vars = []
    for idx in store.indices:
        if not (isinstance(idx, E.Var) and idx in ivars) or idx in index_vars:
            raise ScheduleError(prim, f"block {block!r} must store to {buf.name!r} at distinct iteration "
                                      f"variables (found index {idx!r})")
        index_vars.append(idx)
    used = [v for v in collect_vars(store.value) if v in ivars]
    missing = [v.name for v in used if v not in index_vars]
    if missing:
        raise ScheduleError(prim, f"the value stored by {block!r} uses iteration variables {missing} that do not "
                                  f"index {buf.name!r}, so it cannot be substituted at a load")
    if D.loads_of(store.value, buf):
        raise ScheduleError(prim, f"block {block!r} reads the buffer {buf.name!r} it writes")
    scope = enclosing_block(path)
    info = D.ScopeInfo(func, scope)
    check_stage_pipeline(func, scope, prim)
    me = info.site(realize)
    for n in func_index(func).realizes:  # every block, in pre-order
        if not any(n is q for q in path):  # not the block nor a wrapper
            if buf in D.accessed_buffers(n.block)[1]:
                raise ScheduleError(prim, f"buffer {buf.name!r} is also written by block {n.block.name!r}")
    for c in info.readers(buf, exclude=me):
        if c.order < me.order:
            raise ScheduleError(prim, f"block {c.name!r} reads {buf.name!r} before {block!r} writes it")
        for x in info.sites:
            if x is not me and me.order < x.order <= c.order and x.writes & me.reads:
                bad = sorted(b.name for b in x.writes & me.reads)
                raise ScheduleError(prim, f"block {x.name!r} overwrites {bad} read by {block!r} before consumer "
                                          f"{c.name!r} uses its result, so the expression cannot be moved there")
    return _InlinePlan(realize, store, index_vars, buf)


def can_inline(func: PrimFunc, block: str) -> bool:
    """Whether ``compute_inline(func, block)`` would succeed."""
    try:
        _plan_inline(func, block)
    except ScheduleError:
        return False
    return True


class _RegionRefresher(IRMutator):
    """Base for rewriters: every non-root block whose body changed gets its reads/writes recomputed."""

    def __init__(self, root: S.Block, touched=()):
        self.root = root
        self.touched = set(touched)

    def visit_Block(self, node: S.Block):
        new = self.generic_visit(node)
        mentions = any(r.buffer in self.touched for r in node.reads + node.writes)
        if (new is not node or mentions) and node is not self.root:
            new = D.with_inferred_regions(new)
        return new


class _Simplify(IRMutator):
    def visit_BufferLoad(self, node):
        idx = tuple(simplify(self.visit(i)) for i in node.indices)
        return E.BufferLoad(node.buffer, idx)


class _Inliner(_RegionRefresher):
    def __init__(self, root, plan: _InlinePlan):
        super().__init__(root, (plan.buffer,))
        self.plan = plan

    def visit_BufferLoad(self, node):
        idx = self._visit_child(node.indices)
        if node.buffer is not self.plan.buffer:
            return node if idx is node.indices else E.BufferLoad(node.buffer, idx)
        vmap = dict(zip(self.plan.index_vars, idx))
        return _Simplify().visit(substitute(self.plan.store.value, vmap))


def _drop_allocation(func: PrimFunc, buf) -> PrimFunc:
    owner = D.allocating_block(func, buf)
    if owner is None:
        return func
    new = owner.replace(alloc_buffers=tuple(b for b in owner.alloc_buffers if b is not buf))
    return D.rebuild_block(func, owner, new)


def compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    """Inline a spatial block ``B[v...] = expr`` into every load of ``B``; the block and ``B`` disappear."""
    plan = _plan_inline(func, block)
    func = D.remove_block(func, plan.realize)
    func = _drop_allocation(func, plan.buffer)
    return func.with_body(_Inliner(func.root_block, plan).visit(func.body))


def reverse_compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    """Fold a point-wise consumer into its producer: the producer then writes the consumer's output."""
    prim = _REV_INLINE
    path, realize, cstore = _point_block(func, block, prim)
    cblk = realize.block
    info = D.ScopeInfo(func, enclosing_block(path))
    check_stage_pipeline(func, enclosing_block(path), prim)
    me = info.site(realize)
    buf, prod, pstore = _sole_producer(func, info, me, cstore, block, prim)
    first = _consumer_indices(cstore, buf, cblk, block, prim)
    _check_one_to_one(first, pstore, prod, cblk, buf, block, prim)
    _check_nothing_between(info, me, prod, buf, block, prim)
    vmap = dict(zip(first, pstore.indices))

    class _Fold(IRMutator):
        def visit_BufferLoad(self, n):
            if n.buffer is buf:
                return pstore.value
            return self.generic_visit(n)

    value = _Simplify().visit(substitute(_Fold().visit(cstore.value), vmap))
    indices = tuple(simplify(substitute(i, vmap)) for i in cstore.indices)
    new_pblock = D.with_inferred_regions(prod.block.replace(body=S.BufferStore(cstore.buffer, value, indices)))
    func, mapping = replace_path_tracked(func, prod.path, prod.realize.replace(block=new_pblock))
    func = D.remove_block_at(func, D.path_after_edit(func, path, mapping))
    return _drop_allocation(func, buf)


def _sole_producer(func: PrimFunc, info, me, cstore: S.BufferStore, block: str, prim: str):
    """``(buffer, producer site, producer's store)``: the one intermediate buffer the consumer reads, written by
    one spatial block before it that the consumer is the only reader of."""
    produced = []
    for buf in me.reads:
        if buf is cstore.buffer:
            raise ScheduleError(prim, f"block {block!r} reads the buffer {buf.name!r} it writes")
        if info.writers(buf, exclude=me) and not D.is_param(func, buf):
            produced.append(buf)
    if not produced:
        raise ScheduleError(prim, f"block {block!r} reads no intermediate buffer produced in its scope")
    if len(produced) > 1:
        raise ScheduleError(prim, f"block {block!r} has several producers (of {sorted(b.name for b in produced)}); "
                                  "reverse_compute_inline needs exactly one")
    buf = produced[0]
    writers = info.writers(buf, exclude=me)
    if len(writers) != 1:
        raise ScheduleError(prim, f"buffer {buf.name!r} is written by several blocks "
                                  f"{[w.name for w in writers]}")
    prod = writers[0]
    if prod.order > me.order:
        raise ScheduleError(prim, f"producer {prod.name!r} comes after {block!r}")
    _check_spatial(prod.block, prim)
    pstore = _single_store(prod.block, prim)
    if pstore.buffer is not buf:
        raise ScheduleError(prim, f"producer {prod.name!r} does not store to {buf.name!r} in its body")
    others = [s.name for s in info.readers(buf) if s is not me and s is not prod]
    if others or any(r.buffer is buf for r in prod.block.reads):
        raise ScheduleError(prim, f"buffer {buf.name!r} is also read by {others or [prod.name]}; it must have "
                                  f"{block!r} as its only consumer")
    return buf, prod, pstore


def _consumer_indices(cstore: S.BufferStore, buf, cblk: S.Block, block: str, prim: str) -> tuple:
    """The indices at which the consumer loads ``buf``: the same at every load, each a distinct iteration
    variable of the consumer, and all of them used."""
    loads = D.loads_of(cstore.value, buf)
    if not loads:
        raise ScheduleError(prim, f"block {block!r} does not load {buf.name!r} in the value it stores")
    first = loads[0].indices
    for ld in loads[1:]:
        for a, b in zip(first, ld.indices):
            if not (a is b or simplified_int(sub_int(a, b)) == 0):
                raise ScheduleError(prim, f"block {block!r} reads {buf.name!r} at different indices")
    cvars = [iv.var for iv in cblk.iter_vars]
    if len(set(first)) != len(first) or not all(isinstance(i, E.Var) and i in cvars for i in first):
        raise ScheduleError(prim, f"block {block!r} must read {buf.name!r} at distinct iteration variables "
                                  f"(found {list(first)!r})")
    if set(cvars) - set(first):
        raise ScheduleError(prim, f"block {block!r} has iteration variables that do not index {buf.name!r}, so "
                                  "its iterations are not one-to-one with the producer's")
    return first


def _check_one_to_one(first: tuple, pstore: S.BufferStore, prod, cblk: S.Block, buf, block: str, prim: str) -> None:
    """Consumer and producer each cover all of ``buf``, dimension by dimension."""
    pdoms = {iv.var: (iv.dom.min, simplify(sub_int(add_int(iv.dom.min, iv.dom.extent), 1)))
             for iv in prod.block.iter_vars}
    civ = {iv.var: iv for iv in cblk.iter_vars}
    for d, (u, h) in enumerate(zip(first, pstore.indices)):
        dom = civ[u].dom
        ext = buf.shape[d]
        if not (_is_zero(dom.min) and _is_zero(sub_int(dom.extent, ext))):
            raise ScheduleError(prim, f"block {block!r} does not read all of {buf.name!r} along dimension {d}")
        r = D.interval(h, pdoms)
        if r is None or not (_is_zero(r[0]) and _is_zero(sub_int(r[1], sub_int(ext, 1)))):
            raise ScheduleError(prim, f"producer {prod.name!r} does not write all of {buf.name!r} along "
                                      f"dimension {d}")


def _check_nothing_between(info, me, prod, buf, block: str, prim: str) -> None:
    """No block between producer and consumer touches what the consumer reads (besides ``buf``) or writes:
    the consumer's work is about to move up into the producer."""
    rest = me.reads - {buf}
    for x in info.sites:
        if x is me or x is prod or not (prod.order < x.order < me.order):
            continue
        if x.writes & rest or x.writes & me.writes or x.reads & me.writes:
            raise ScheduleError(prim, f"block {x.name!r} between {prod.name!r} and {block!r} accesses buffers "
                                      f"{block!r} reads or writes, so it cannot move into the producer")


def _is_zero(e) -> bool:
    if isinstance(e, E.IntImm):
        return e.value == 0
    return simplified_int(e) == 0


# ----------------------------------------------------------------------------------------------------------
# compute_at / reverse_compute_at
# ----------------------------------------------------------------------------------------------------------
def _solve_iter_ranges(prim: str, block: S.Block, pairs, bounds: dict, exact: bool) -> dict:
    """Ranges of ``block``'s iteration variables such that its accesses (``pairs`` of the block's region in
    its iteration variables and the needed ``(lo, hi)`` per dimension) cover the needed region.

    Each accessed dimension must be ``v + c`` for one iteration variable ``v``; ``exact`` additionally
    requires point accesses and identical answers when several buffers constrain one variable.
    """
    ivars = [iv.var for iv in block.iter_vars]
    ranges: dict = {}
    for reg, need in pairs:
        for d, (rg, (lo, hi)) in enumerate(zip(reg.region, need)):
            aff = affine_coefficients(rg.min, ivars)
            nz = {} if aff is None else {v: c for v, c in aff[0].items() if c != 0}
            if aff is None or len(nz) > 1 or (nz and next(iter(nz.values())) != 1) \
                    or not isinstance(aff[1], E.IntImm):
                raise ScheduleError(prim, f"block {block.name!r} accesses {reg.buffer.name!r} at {rg.min!r} in "
                                          f"dimension {d}; only 'iteration variable + constant' can be solved "
                                          "for a region")
            if not nz:
                continue
            v = next(iter(nz))
            c = aff[1].value
            if not isinstance(rg.extent, E.IntImm) or (exact and rg.extent.value != 1):
                raise ScheduleError(prim, f"block {block.name!r} reads a window of {reg.buffer.name!r} in "
                                          f"dimension {d}; only point-wise accesses are supported here")
            new = (simplify(sub_int(lo, c + rg.extent.value - 1), bounds), simplify(sub_int(hi, c), bounds))
            old = ranges.get(v)
            if old is None:
                ranges[v] = new
            elif exact:
                if not (_is_zero(sub_int(old[0], new[0])) and _is_zero(sub_int(old[1], new[1]))):
                    raise ScheduleError(prim, f"the producers' regions give different ranges for iteration "
                                              f"variable {v.name!r} of block {block.name!r}")
            else:
                ranges[v] = (D.sym_min(old[0], new[0], bounds), D.sym_max(old[1], new[1], bounds))
    return ranges


def _provably(diff, bounds: dict, outer: dict, nonneg: bool) -> bool:
    """Whether ``diff >= 0`` (``nonneg``) or ``diff <= 0`` holds for every value of the enclosing loops
    (``outer``: their symbolic intervals, e.g. ``i`` in ``[0, n - 1]``)."""

    def ok(e) -> bool:
        b = simplified_bound(e, bounds)
        return b is not None and (b[0] >= 0 if nonneg else b[1] <= 0)

    if ok(diff):
        return True
    r = D.interval(diff, outer, bounds) if outer else None
    return r is not None and ok(r[0] if nonneg else r[1])


def _build_nest(prim: str, realize: S.BlockRealize, ranges: dict, outer_loops, preserve_unit_loops: bool,
                exact: bool) -> S.Stmt:
    """Fresh loops ``ax0, ax1, ...`` iterating the given ranges of the block's variables (full domain for
    the others), with a predicate wherever a range may leave the variable's domain.

    Not ``exact`` (compute_at): a range with a varying size is widened to its largest size and one covering
    the domain becomes the domain (extra points are recomputed, harmlessly). ``exact``: ranges are kept as
    they are, since computing a point early would read unfinished values.
    """
    block = realize.block
    outer, bounds = D.relax_loops(outer_loops, {})
    loops = []
    values = []
    preds = []
    inner_bounds = dict(bounds)
    n = 0
    for iv in block.iter_vars:
        dom_min, dom_ext = iv.dom.min, iv.dom.extent
        dom_max = simplify(sub_int(add_int(dom_min, dom_ext), 1))
        r = ranges.get(iv.var)
        full = r is None
        if not full:
            lo, hi = r
            ext = simplify(add_int(sub_int(hi, lo), 1), bounds)
            if not isinstance(ext, E.IntImm):
                cb = None if exact else const_bound(ext, bounds)
                if cb is None and exact:
                    raise ScheduleError(prim, f"the region of iteration variable {iv.var.name!r} of block "
                                              f"{block.name!r} has the varying size {ext!r}")
                if cb is None:
                    full = True
                else:
                    ext = E.const(cb[1], dom_ext.dtype)
            if not full and ext.value <= 0:
                raise ScheduleError(prim, f"the region of iteration variable {iv.var.name!r} of block "
                                          f"{block.name!r} is empty")
            if not full and not exact and isinstance(dom_ext, E.IntImm) and ext.value >= dom_ext.value:
                full = True
        if full:
            lo, ext = dom_min, dom_ext
            check_lo = check_hi = False
        else:
            check_lo = not _provably(sub_int(lo, dom_min), bounds, outer, True)
            check_hi = not _provably(sub_int(add_int(lo, ext.value - 1), dom_max), bounds, outer, False)
        if isinstance(ext, E.IntImm) and ext.value == 1 and not preserve_unit_loops:
            value = simplify(lo, bounds)
        else:
            ax = E.Var(f"ax{n}", iv.var.dtype)
            n += 1
            ext = E.cast(iv.var.dtype, ext) if ext.dtype != iv.var.dtype else ext
            loops.append((ax, ext))
            if isinstance(ext, E.IntImm):
                inner_bounds[ax] = (0, ext.value - 1)
            value = simplify(add_int(lo, ax), inner_bounds)
        if value.dtype != iv.var.dtype:
            value = E.cast(iv.var.dtype, value)
        values.append(value)
        if check_lo:
            preds.append(E.compare(">=", value, dom_min))
        if check_hi:
            preds.append(E.compare("<", value, add_int(dom_min, dom_ext)))
    pred = S.TRUE
    for p in preds:
        p = simplify(p, inner_bounds)
        if isinstance(p, E.IntImm) and p.value:
            continue
        pred = p if pred is S.TRUE else E.logical_and(pred, p)
    body: S.Stmt = S.BlockRealize(values, pred, block)
    for ax, ext in reversed(loops):
        body = S.For(ax, E.const(0, ax.dtype), ext, "serial", body)
    return body


class _Move:
    """A planned compute_at / reverse_compute_at: where to insert which nest, what to remove."""

    __slots__ = ("loop_path", "position", "nest", "old_realize", "old_path")

    def __init__(self, loop_path, position, nest, old_realize, old_path):
        self.loop_path = loop_path
        self.position = position
        self.nest = nest
        self.old_realize = old_realize
        self.old_path = old_path  # where old_realize is in the function the plan was made for

    def apply(self, func: PrimFunc) -> PrimFunc:
        loop = self.loop_path[-1]
        items = seq_items(loop.body)
        items.insert(self.position, self.nest)
        func, mapping = replace_path_tracked(func, self.loop_path, loop.replace(body=S.seq(items)))
        return D.remove_block_at(func, D.path_after_edit(func, self.old_path, mapping))


def _common_checks(func, block, loop, prim):
    bpath = D.block_path(func, block, prim)
    lpath = D.loop_path(func, loop, prim)
    scope = enclosing_block(bpath)
    if enclosing_block(lpath) is not scope:
        raise ScheduleError(prim, f"loop {loop.name!r} is not in the scope of block {block!r} "
                                  f"(scope block {scope.name!r})")
    node = lpath[-1]
    if any(n is node for n in bpath):
        raise ScheduleError(prim, f"block {block!r} is already under loop {loop.name!r}; the target loop must "
                                  "belong to another block's loop nest")
    info = D.ScopeInfo(func, scope)
    check_stage_pipeline(func, scope, prim)
    check_complete_or_reduction(bpath[-1], bpath, info, prim)
    return bpath, lpath, node, info, info.site(bpath[-1])


def _plan_compute_at(func, block, loop, preserve_unit_loops) -> _Move:
    prim = "compute_at"
    bpath, lpath, L, info, me = _common_checks(func, block, loop, prim)
    for buf in me.writes:
        if D.is_param(func, buf):
            raise ScheduleError(prim, f"block {block!r} writes {buf.name!r}, an output of the function; "
                                      "compute_at only moves blocks producing intermediate buffers")
    consumers = [s for s in info.sites if s is not me and s.reads & me.writes]
    if not consumers:
        raise ScheduleError(prim, f"block {block!r} has no consumer in its scope")
    for c in consumers:
        if c.order < me.order:
            raise ScheduleError(prim, f"consumer {c.name!r} comes before block {block!r}")
        if not c.under(L):
            raise ScheduleError(prim, f"loop {loop.name!r} does not cover consumer block {c.name!r} of "
                                      f"{block!r}: every consumer must be under the target loop")
    items = seq_items(L.body)
    position = min(D.child_index_containing(items, c) for c in consumers)
    ins_order = info.order[items[position]]
    for x in info.sites:
        if x is me or x.order <= me.order or not (x.under(L) or x.order < ins_order):
            continue
        if x.writes & me.reads:
            bad = sorted(b.name for b in x.writes & me.reads)
            raise ScheduleError(prim, f"block {x.name!r} writes {bad}, which {block!r} reads, between the "
                                      f"block's position and its new place under loop {loop.name!r}")
        if x.writes & me.writes:
            bad = sorted(b.name for b in x.writes & me.writes)
            raise ScheduleError(prim, f"block {x.name!r} also writes {bad}")
    outer_loops = all_loops_above(lpath) + [L]
    bounds = loop_bounds(outer_loops)
    needed = _regions_under(consumers, L, bounds, lambda c: c.reads & me.writes, "read")
    _, writes = D.infer_block_regions(me.block)
    pairs = [(w, needed[w.buffer]) for w in writes if w.buffer in needed]
    ranges = _solve_iter_ranges(prim, me.block, pairs, bounds, exact=False)
    nest = _build_nest(prim, me.realize, ranges, outer_loops, preserve_unit_loops, exact=False)
    check_moved_nest(prim, lpath, nest)
    return _Move(lpath, position, nest, me.realize, me.path)


def _regions_under(sites, L: S.For, bounds: dict, buffers_of, kind: str) -> dict:
    """Per buffer in ``buffers_of(site)``, the union over ``sites`` of the region each reads or writes
    (``kind``) in one iteration of loop ``L``: the loops between ``L`` and the site run over their range."""
    out: dict = {}
    for site in sites:
        relax, rb = D.relax_loops(D.loops_between(site.path, L), bounds)
        for buf in buffers_of(site):
            reg = D.region_under(site.realize, buf, kind, relax, rb)
            if reg is None:
                continue
            old = out.get(buf)
            out[buf] = reg if old is None else [(D.sym_min(a[0], b[0], bounds), D.sym_max(a[1], b[1], bounds))
                                                for a, b in zip(old, reg)]
    return out


def compute_at(func: PrimFunc, block: str, loop: E.Var, preserve_unit_loops: bool = False) -> PrimFunc:
    """Move producer ``block`` under ``loop`` (an ancestor of all its consumers), computing per iteration of
    ``loop`` exactly the region the consumers read in it (reduction variables get full loops)."""
    return _plan_compute_at(func, block, loop, preserve_unit_loops).apply(func)


def compute_at_legal(func: PrimFunc, block: str, loop: E.Var, preserve_unit_loops: bool = False) -> bool:
    """Whether ``compute_at(func, block, loop, ...)`` is legal: its plan (every check) without building the
    moved function (sampling a compute location asks this of every loop; building each was most of it)."""
    try:
        _plan_compute_at(func, block, loop, preserve_unit_loops)
    except ScheduleError:
        return False
    return True


def compute_at_candidates(func: PrimFunc, block: str) -> list[E.Var]:
    """Loops (outermost first) of the consumers' loop nest at which ``compute_at(block, loop)`` is legal."""
    path = D.block_path(func, block, "compute_at")
    info = D.ScopeInfo(func, enclosing_block(path))
    me = info.site(path[-1])
    consumers = [s for s in info.sites if s is not me and s.reads & me.writes]
    if not consumers:
        return []
    first = min(consumers, key=lambda s: s.order)
    out = []
    for lp in loops_above(first.path):
        if all(c.under(lp) for c in consumers) and not me.under(lp) and compute_at_legal(func, block, lp.loop_var):
            out.append(lp.loop_var)
    return out


def _plan_reverse_compute_at(func, block, loop, preserve_unit_loops) -> _Move:
    prim = "reverse_compute_at"
    bpath, lpath, L, info, me = _common_checks(func, block, loop, prim)
    if info.order[L] > me.order:
        raise ScheduleError(prim, f"loop {loop.name!r} comes after block {block!r}; reverse_compute_at moves a "
                                  "consumer under a loop of its producers")
    producers = [s for s in info.sites if s is not me and s.under(L) and s.writes & me.reads]
    if not producers:
        raise ScheduleError(prim, f"no producer of block {block!r} is under loop {loop.name!r}")
    lend = info.last_order_under(L)
    for x in info.sites:
        if x is me or not (x.under(L) or lend < x.order < me.order):
            continue
        if x.writes & me.reads and not x.under(L):
            bad = sorted(b.name for b in x.writes & me.reads)
            raise ScheduleError(prim, f"block {x.name!r} writes {bad}, read by {block!r}, after loop "
                                      f"{loop.name!r}; every producer must be under the loop")
        if x.writes & me.writes or x.reads & me.writes:
            bad = sorted(b.name for b in (x.writes | x.reads) & me.writes)
            raise ScheduleError(prim, f"block {x.name!r} accesses {bad}, written by {block!r}, so the block "
                                      f"cannot move before it")
    for p in producers:
        below = D.loops_between(p.path, L)
        if D.uses_var(p.realize.predicate, {lp.loop_var for lp in below}):
            raise ScheduleError(prim, f"producer {p.name!r} is predicated on loops inside {loop.name!r}; what it "
                                      "finishes there cannot be bounded without its predicate")
        kinds = D.binding_kinds(p.realize)
        for lp in loops_above(p.path):
            if "R" in kinds.get(lp.loop_var, ()) and not any(lp is b for b in below):
                raise ScheduleError(prim, f"producer {p.name!r} reduces over loop {lp.loop_var.name!r}, which is "
                                          f"not inside loop {loop.name!r}: its result is not final there")
    items = seq_items(L.body)
    position = max(D.child_index_containing(items, p) for p in producers) + 1
    outer_loops = all_loops_above(lpath) + [L]
    bounds = loop_bounds(outer_loops)
    done = _regions_under(producers, L, bounds, lambda p: p.writes & me.reads, "write")
    reads, _ = D.infer_block_regions(me.block)
    pairs = [(r, done[r.buffer]) for r in reads if r.buffer in done]
    check_reads_in_bounds(prim, me.block, [r for r, _ in pairs])
    ranges = _solve_iter_ranges(prim, me.block, pairs, bounds, exact=True)
    nest = _build_nest(prim, me.realize, ranges, outer_loops, preserve_unit_loops, exact=True)
    check_moved_nest(prim, lpath, nest)
    return _Move(lpath, position, nest, me.realize, me.path)


def reverse_compute_at(func: PrimFunc, block: str, loop: E.Var, preserve_unit_loops: bool = False) -> PrimFunc:
    """Move consumer ``block`` under ``loop`` (an ancestor of its producers), right after them, computing
    per iteration exactly what the producers finished writing in it."""
    return _plan_reverse_compute_at(func, block, loop, preserve_unit_loops).apply(func)
