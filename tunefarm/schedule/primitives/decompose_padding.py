"""``decompose_padding``: a padding block split into a constant fill and a copy of the valid region.

A padding block ``P[v] = if_then_else(lo <= v < hi, X[v - lo], c)`` evaluates its condition on every element.
Decomposed at one of its loops it becomes two loop nests there: one writes ``c`` everywhere (``<name>_pad_const``),
the next copies only the valid region with no condition (its loops shrink to the valid range; a variable bound
by a loop above the decomposition point keeps the loop and gets a predicate instead). Both write the same
elements in order, so the result is unchanged. Supported, as TVM's main case: a spatial block whose body is
one such store, a condition that is a conjunction of constant bounds on iteration variables, each bound variable
bound to a loop, and a perfect loop nest from the decomposition loop down to the block.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import as_const_int, simplify
from ...ir.function import PrimFunc
from ...ir.functor import IRMutator, collect_vars, substitute
from ...ir.regions import infer_block_regions
from ..error import ScheduleError
from .dataflow import fresh_name
from ..tree import all_loops_above, find_block, replace_path

PRIM = "decompose_padding"
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _SimplifyIndices(IRMutator):
    def visit_BufferLoad(self, e):
        return E.BufferLoad(e.buffer, tuple(simplify(i) for i in e.indices))


def _conjuncts(cond) -> list:
    if isinstance(cond, E.Binary) and cond.op == "and":
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _bounds(cond, ivs) -> dict:
    """``{iter var: [lo, hi)}`` from a conjunction of constant bounds."""
    doms = {iv.var: [as_const_int(iv.dom.min), as_const_int(iv.dom.min) + as_const_int(iv.dom.extent)]
            for iv in ivs}
    for c in _conjuncts(cond):
        op, a, b = (c.op, c.a, c.b) if isinstance(c, E.Binary) and c.op in _FLIP else (None, None, None)
        if op is not None and isinstance(b, E.Var) and as_const_int(a) is not None:
            op, a, b = _FLIP[op], b, a
        k = as_const_int(b) if op is not None else None
        if op is None or a not in doms or k is None:
            raise ScheduleError(PRIM, f"the padding condition term {c} is not a constant bound on an iteration "
                                      "variable")
        lo, hi = doms[a]
        doms[a] = {"<": [lo, min(hi, k)], "<=": [lo, min(hi, k + 1)], ">": [max(lo, k + 1), hi],
                   ">=": [max(lo, k), hi]}[op]
    return doms


def _plan(func: PrimFunc, block_name: str, loop: E.Var):
    path = find_block(func, block_name, PRIM)
    realize, block = path[-1], path[-1].block
    body = block.body
    ok = isinstance(body, S.BufferStore) and isinstance(body.value, E.Select) and block.init is None \
        and not block.alloc_buffers and all(iv.iter_type == "S" for iv in block.iter_vars)
    if not ok or any(isinstance(n, E.BufferLoad) for n in _loads(body.value.false_value)):
        raise ScheduleError(PRIM, f"block {block_name!r} must be a spatial block whose body is one store "
                                  "'B[...] = T.if_then_else(condition, value, padding constant)'")
    loops = all_loops_above(path)
    at = next((k for k, lp in enumerate(loops) if lp.loop_var is loop), None)
    if at is None:
        raise ScheduleError(PRIM, f"loop {loop.name!r} is not above block {block_name!r}")
    for lp in loops[at:-1]:
        if not isinstance(lp.body, S.For):
            raise ScheduleError(PRIM, f"the loops from {loop.name!r} down to block {block_name!r} must nest perfectly")
    if loops[-1].body is not realize:
        raise ScheduleError(PRIM, f"the loops from {loop.name!r} down to block {block_name!r} must nest perfectly")
    bounds = _bounds(body.value.cond, block.iter_vars)
    return path, realize, block, loops, at, bounds


def _loads(e):
    found = []
    from ...ir.functor import post_order_visit  # only needed for the check above

    post_order_visit(e, found.append)
    return found


def can_decompose_padding(func: PrimFunc, block_name: str, loop: E.Var) -> bool:
    """Whether ``decompose_padding`` applies and has padding to split off (a condition that is always true
    leaves nothing to decompose)."""
    try:
        _, _, block, _, _, bounds = _plan(func, block_name, loop)
    except ScheduleError:
        return False
    return any(bounds[iv.var] != [as_const_int(iv.dom.min), as_const_int(iv.dom.min) + as_const_int(iv.dom.extent)]
               for iv in block.iter_vars)


def decompose_padding(func: PrimFunc, block_name: str, loop: E.Var) -> tuple[PrimFunc, str]:
    """Long because it builds both loop nests (the fill and the shrunk copy) from one walk of the bindings.

    Returns the new function and the name of the constant-fill block."""
    path, realize, block, loops, at, bounds = _plan(func, block_name, loop)
    if not can_decompose_padding(func, block_name, loop):
        raise ScheduleError(PRIM, f"block {block_name!r} has no padding to decompose (its condition always holds)")
    above = {lp.loop_var: (as_const_int(lp.min), as_const_int(lp.min) + as_const_int(lp.extent) - 1)
             for lp in loops[:at] if as_const_int(lp.min) is not None and as_const_int(lp.extent) is not None}
    units = {v: E.const(lo, v.dtype) for v, (lo, hi) in above.items() if lo == hi}  # TVM folds unit loops away
    values = [simplify(substitute(v, units), above) for v in realize.iter_values]
    inner = loops[at:]
    # the constant fill: the same iteration space under fresh copies of the inner loops
    fmap = {lp.loop_var: lp.loop_var.copy_with_name() for lp in inner}
    fvars = {iv.var: iv.var.copy_with_name() for iv in block.iter_vars}
    store = block.body
    fill = S.Block(fresh_name(func, block_name + "_pad_const"), [S.IterVar(fvars[iv.var], iv.dom, "S")
                                                               for iv in block.iter_vars],
                   body=S.BufferStore(store.buffer, store.value.false_value,
                                      tuple(substitute(i, fvars) for i in store.indices)))
    fill = fill.replace(writes=infer_block_regions(fill)[1])
    fill_nest: S.Stmt = S.BlockRealize([substitute(v, fmap) for v in values], realize.predicate, fill)
    for lp in reversed(inner):
        fill_nest = S.For(fmap[lp.loop_var], lp.min, lp.extent, lp.kind, fill_nest, lp.annotations)
    # the copy of the valid region
    extents = {lp.loop_var: lp for lp in inner}
    new_ivs, new_values, shift, predicate, new_extent = [], [], {}, realize.predicate, {}
    for iv, value in zip(block.iter_vars, values):
        lo, hi = bounds[iv.var]
        dom_lo, dom_hi = as_const_int(iv.dom.min), as_const_int(iv.dom.min) + as_const_int(iv.dom.extent)
        if (lo, hi) == (dom_lo, dom_hi):
            new_ivs.append(iv)
            new_values.append(value)
            continue
        if hi <= lo:
            raise ScheduleError(PRIM, f"block {block_name!r} has no valid region along {iv.var.name!r}")
        dtype = iv.var.dtype
        new_ivs.append(S.IterVar(iv.var, S.Range(E.const(0, dtype), E.const(hi - lo, dtype)), "S"))
        shift[iv.var] = E.add(iv.var, E.const(lo, dtype)) if lo else iv.var
        lp = extents.get(value) if isinstance(value, E.Var) else None
        if lp is not None and as_const_int(lp.min) == dom_lo and as_const_int(lp.extent) == dom_hi - dom_lo \
                and not any(x is value for v in values if v is not value for x in collect_vars(v)):
            new_extent[value] = hi - lo
            new_values.append(value)
        elif isinstance(value, E.Var) and value in above:
            new_values.append(simplify(E.sub(value, E.const(lo, dtype))) if lo else value)
            terms = ([E.compare(">=", value, E.const(lo, dtype))] if lo > dom_lo else []) + \
                [E.compare("<", value, E.const(hi, dtype))]
            for t in terms:
                predicate = t if as_const_int(predicate) == 1 else E.logical_and(predicate, t)
        else:
            raise ScheduleError(PRIM, f"iteration variable {iv.var.name!r} of block {block_name!r} must be bound "
                                      "to a loop of its own to be decomposed")
    indices = tuple(simplify(substitute(i, shift)) for i in store.indices)
    value = _SimplifyIndices().visit(substitute(store.value.true_value, shift))
    copy = block.replace(iter_vars=tuple(new_ivs), body=S.BufferStore(store.buffer, value, indices))
    reads, writes = infer_block_regions(copy)
    copy_nest: S.Stmt = S.BlockRealize(new_values, predicate, copy.replace(reads=reads, writes=writes))
    for lp in reversed(inner):
        ext = new_extent.get(lp.loop_var)
        copy_nest = lp.replace(body=copy_nest) if ext is None else \
            S.For(lp.loop_var, lp.min, E.const(ext, lp.extent.dtype), lp.kind, copy_nest, lp.annotations)
    loop_path = path[:next(k for k, n in enumerate(path) if n is inner[0]) + 1]
    return replace_path(func, loop_path, S.SeqStmt((fill_nest, copy_nest))), fill.name
