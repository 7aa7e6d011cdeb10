"""Reduction primitives: decompose_reduction and rfactor (TensorIR semantics).

``decompose_reduction(block, loop)`` turns a block's ``init`` into a separate block ``<block>_init``
placed right before ``loop``, under copies (``<name>_init``) of the loops from ``loop`` down that feed
spatial iteration variables; loops bound only to reduction variables are not copied. Unlike TVM the
original block keeps its name (TVM renames it ``<block>_update``) so that references to it stay valid.

``rfactor(loop, factor_axis)`` splits a sum/product/min/max reduction along ``loop``: a new block
``<block>_rf`` computes partial results into ``<C>_rf`` (``C``'s shape with ``loop``'s extent inserted at
``factor_axis``) where ``loop`` is a *spatial* axis, and the original block, now after that loop nest and
under copies of the spatial loops and of ``loop``, reduces the partial results into ``C``. A ``loop`` that the
block's predicate depends on (a non-divisible split) is refused: partial results whose iterations are all
predicated off would never be initialized.

Both need a reduction block (``block_kinds``: init, quasi-affine bindings, the only writer of its output, no
reduction variable indexing it); rfactor also needs a serial loop, a stage-pipeline scope, an init storing
the combiner's identity to the updated element, and TVM's loop conditions (``_check_loop_properties``).
"""
from __future__ import annotations

from typing import NamedTuple

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import simplified_int, simplify, sub_int
from ...ir.buffer import Buffer
from ...ir.dtype import is_float
from ...ir.function import PrimFunc
from ...ir.functor import binary, collect_vars, substitute, uses_var
from ...ir.stmt_functor import seq_items, unwrap_seq
from ..error import ScheduleError
from ..tree import (enclosing_block, find_block, find_loop, func_index, loops_above, map_path, replace_path,
                    replace_path_tracked)
from . import dataflow as D
from .block_kinds import check_reduction_block, check_stage_pipeline
from .query import blocks_under


def _conjuncts(e: E.PrimExpr) -> list:
    if isinstance(e, E.Binary) and e.op == "and":
        return _conjuncts(e.a) + _conjuncts(e.b)
    if isinstance(e, E.IntImm) and e.value:
        return []
    return [e]


def _restrict_predicate(pred: E.PrimExpr, vmap: dict, available: set) -> E.PrimExpr:
    """The conjuncts of ``pred`` whose variables are all mapped or available, rewritten by ``vmap``."""
    out = S.TRUE
    for c in _conjuncts(pred):
        if all(v in vmap or v in available for v in collect_vars(c)):
            c = substitute(c, vmap)
            out = c if out is S.TRUE else E.logical_and(out, c)
    return out


# ----------------------------------------------------------------------------------------------------------
# decompose_reduction
# ----------------------------------------------------------------------------------------------------------
def decompose_reduction(func: PrimFunc, block: str, loop: E.Var) -> tuple[PrimFunc, str]:
    """Split ``block``'s init into ``<block>_init`` placed before ``loop``; returns the init block's name."""
    prim = "decompose_reduction"
    bpath = D.block_path(func, block, prim)
    realize = bpath[-1]
    blk = realize.block
    if blk.init is None:
        raise ScheduleError(prim, f"block {block!r} has no init statement to decompose")
    check_reduction_block(func, bpath, prim)
    lpath = D.loop_path(func, loop, prim)
    L = lpath[-1]
    loops = loops_above(bpath)
    pos = next((k for k, lp in enumerate(loops) if lp is L), None)
    if pos is None:
        raise ScheduleError(prim, f"loop {loop.name!r} is not an ancestor of block {block!r} in its scope")
    kinds = D.binding_kinds(realize)
    for lp in loops[:pos]:
        if "R" in kinds.get(lp.loop_var, ()):
            raise ScheduleError(prim, f"loop {lp.loop_var.name!r} above {loop.name!r} is bound to a reduction "
                                      f"variable of {block!r}; the init would run once per iteration of it")
    scope = enclosing_block(bpath)
    info = D.ScopeInfo(func, scope)
    me = info.site(realize)
    for other in info.sites:
        if other is not me and other.under(L) and (other.reads | other.writes) & me.writes:
            raise ScheduleError(prim, f"block {other.name!r} under loop {loop.name!r} also accesses the buffers "
                                      f"{block!r} writes")
    lmap: dict = {}
    copied = []
    for lp in loops[pos:]:
        k = kinds.get(lp.loop_var, set())
        if "S" in k and "R" in k:
            raise ScheduleError(prim, f"loop {lp.loop_var.name!r} is bound to both spatial and reduction "
                                      f"variables of {block!r}")
        if not k and not (isinstance(lp.extent, E.IntImm) and lp.extent.value == 1):
            raise ScheduleError(prim, f"loop {lp.loop_var.name!r} under {loop.name!r} is bound to no iteration "
                                      f"variable of {block!r}; the init runs in each of its iterations")
        if "S" in k:
            nv = E.Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype)
            lmap[lp.loop_var] = nv
            copied.append((lp, nv))
    ivmap: dict = {}
    ivs, values = [], []
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type != "S":
            continue
        nv = iv.var.copy_with_name()
        ivmap[iv.var] = nv
        ivs.append(S.IterVar(nv, iv.dom, "S"))
        values.append(substitute(value, lmap))
    if uses_var(blk.init, {iv.var for iv in blk.iter_vars if iv.iter_type == "R"}):
        raise ScheduleError(prim, f"the init of block {block!r} uses reduction variables")
    available = {lp.loop_var for lp in loops[:pos]} | set(D.outer_loop_vars(bpath, scope))
    pred = _restrict_predicate(realize.predicate, lmap, available)
    name = D.fresh_name(func, f"{block}_init")
    init_block = D.with_inferred_regions(S.Block(name, ivs, (), (), substitute(blk.init, ivmap)))
    nest: S.Stmt = S.BlockRealize(values, pred, init_block)
    for lp, nv in reversed(copied):
        nest = S.For(nv, substitute(lp.min, lmap), substitute(lp.extent, lmap), lp.kind, nest)
    new_blk = D.with_inferred_regions(blk.replace(init=None))
    func, mapping = replace_path_tracked(func, bpath, realize.replace(block=new_blk))
    lpath = map_path(lpath, mapping) if mapping is not None else find_loop(func, loop, prim)
    func = replace_path(func, lpath, S.SeqStmt((nest, lpath[-1])))
    return func, name


# ----------------------------------------------------------------------------------------------------------
# rfactor
# ----------------------------------------------------------------------------------------------------------
_COMBINERS = ("+", "*", "min", "max")


def _identity(op: str, dtype: str) -> E.PrimExpr:
    if op == "+":
        return E.const(0, dtype)
    if op == "*":
        return E.const(1, dtype)
    if is_float(dtype):
        return E.FloatImm(float("inf") if op == "min" else float("-inf"), dtype)
    import numpy as np

    info = np.iinfo(np.dtype(dtype))
    return E.const(int(info.max) if op == "min" else int(info.min), dtype)


def _same_indices(a, b) -> bool:
    for x, y in zip(a, b):
        if x is y:
            continue
        if simplified_int(sub_int(x, y)) != 0:
            return False
    return len(a) == len(b)


def _match_reduction(prim: str, blk: S.Block):
    """``(store, op, rhs, load_first)`` for ``C[i] = C[i] op rhs`` (or ``rhs op C[i]``)."""
    body = unwrap_seq(blk.body)
    if not isinstance(body, S.BufferStore):
        raise ScheduleError(prim, f"block {blk.name!r} must be a single store 'C[...] = C[...] op value'")
    v = body.value
    if not (isinstance(v, E.Binary) and v.op in _COMBINERS):
        raise ScheduleError(prim, f"block {blk.name!r} is not a sum/product/min/max reduction")

    def is_self(e):
        return isinstance(e, E.BufferLoad) and e.buffer is body.buffer and _same_indices(e.indices, body.indices)

    if is_self(v.a):
        rhs, first = v.b, True
    elif is_self(v.b):
        rhs, first = v.a, False
    else:
        raise ScheduleError(prim, f"block {blk.name!r} does not combine {body.buffer.name!r} with a value")
    if D.loads_of(rhs, body.buffer):
        raise ScheduleError(prim, f"the reduced value of {blk.name!r} reads {body.buffer.name!r} itself")
    return body, v.op, rhs, first


def _same_value(a: E.PrimExpr, b: E.PrimExpr) -> bool:
    if isinstance(a, E.Cast):
        a = a.value
    return isinstance(a, (E.IntImm, E.FloatImm)) and isinstance(b, (E.IntImm, E.FloatImm)) and a.value == b.value


def _check_init(prim: str, blk: S.Block, red) -> None:
    """The init must store the combiner's identity to the very element the update combines into (TVM's
    reducer patterns: 0 for +, 1 for *, the largest value for min, the smallest for max)."""
    init = unwrap_seq(blk.init)
    store = red.store
    if not (isinstance(init, S.BufferStore) and init.buffer is store.buffer and
            _same_indices(init.indices, store.indices)):
        raise ScheduleError(prim, f"the init of block {blk.name!r} does not store to the element its update "
                                  f"combines into ({store.buffer.name!r} at the same indices)")
    ident = _identity(red.op, store.buffer.dtype)
    ok = [ident]
    if red.op in ("min", "max") and is_float(store.buffer.dtype):
        import numpy as np  # only for the dtype's finite extreme, which TVM's min_value / max_value name

        big = float(np.finfo(np.dtype(store.buffer.dtype)).max)
        ok.append(E.FloatImm(big if red.op == "min" else -big, store.buffer.dtype))
    if not any(_same_value(init.value, v) for v in ok):
        raise ScheduleError(prim, f"the init of block {blk.name!r} stores {init.value!r}, not the identity of its "
                                  f"{red.op!r} reduction, so it matches no known reducer")


def _combine(op: str, acc: E.PrimExpr, val: E.PrimExpr, acc_first: bool) -> E.PrimExpr:
    return binary(op, acc, val) if acc_first else binary(op, val, acc)


class _Reduction(NamedTuple):
    """``C[i] = C[i] op rhs`` (``acc_first``) or ``C[i] = rhs op C[i]``: the store, ``op`` and ``rhs``."""

    store: S.BufferStore
    op: str
    rhs: E.PrimExpr
    acc_first: bool


def rfactor(func: PrimFunc, loop: E.Var, factor_axis: int) -> tuple[PrimFunc, str]:
    """Factor the reduction over ``loop`` into a new ``<block>_rf`` block; returns its name."""
    prim = "rfactor"
    L, realize, kinds = _reduction_loop(func, loop, prim)
    blk = realize.block
    if L.kind != "serial":
        raise ScheduleError(prim, f"loop {loop.name!r} is {L.kind}, not serial; only a serial loop can be "
                                  "factored")
    bpath = D.find_path_of(func, realize)
    check_reduction_block(func, bpath, prim)
    check_stage_pipeline(func, enclosing_block(bpath), prim)
    red = _Reduction(*_match_reduction(prim, blk))
    _check_init(prim, blk, red)
    out = red.store.buffer
    if uses_var(blk.init, {iv.var for iv in blk.iter_vars if iv.iter_type == "R"}):
        raise ScheduleError(prim, f"the init of block {blk.name!r} uses reduction variables")
    if D.uses_var(L.extent, set(D.expr_vars(L.extent)) - set(func.symbolic_vars())):
        raise ScheduleError(prim, f"the extent of loop {loop.name!r} depends on other loops; the rfactor "
                                  "buffer needs a fixed size")
    axis = _factor_axis(factor_axis, out, prim)
    loops = loops_above(bpath)
    _check_loop_properties(L, realize, loops, kinds, prim)
    scope, mine = _check_loop_nest(func, bpath, realize, loops, kinds, loop, prim)
    rf_name = D.fresh_name(func, f"{blk.name}_rf")
    rf_buf = Buffer(D.fresh_name(func, f"{out.name}_rf"),
                    out.shape[:axis] + (L.extent,) + out.shape[axis:], out.dtype, out.scope)
    rf_realize = _rfactor_block(rf_name, rf_buf, axis, realize, red, L, loops, kinds)
    outer = set(D.outer_loop_vars(bpath, scope))
    wb = _write_back(rf_buf, axis, realize, red, L, loops, kinds, outer)

    old_scope_path = D.scope_realize_path(bpath, scope)
    unique = scope.name not in func_index(func).duplicate_blocks
    func, mapping = replace_path_tracked(func, bpath, rf_realize)
    if mapping is not None and old_scope_path is not None and unique:
        spath = map_path(old_scope_path, mapping)
    else:
        spath = find_block(func, scope.name, prim)
    sblock = spath[-1].block
    new_items = seq_items(sblock.body)
    new_items.insert(mine + 1, wb)
    sblock = sblock.replace(body=S.seq(new_items), alloc_buffers=sblock.alloc_buffers + (rf_buf,))
    func = replace_path(func, spath, spath[-1].replace(block=sblock))
    return func, rf_name


def _reduction_loop(func: PrimFunc, loop: E.Var, prim: str) -> tuple[S.For, S.BlockRealize, dict]:
    """The loop, the one reduction block with init bound to it, and that block's binding kinds per loop var."""
    L = D.loop_path(func, loop, prim)[-1]
    bound = [r for r in blocks_under(L.body) if loop in D.binding_kinds(r)]
    if not bound:
        raise ScheduleError(prim, f"loop {loop.name!r} is not bound to any block's iteration variable")
    if len(bound) > 1:
        raise ScheduleError(prim, f"loop {loop.name!r} is bound to several blocks {[r.block.name for r in bound]}")
    realize = bound[0]
    blk = realize.block
    kinds = D.binding_kinds(realize)
    if "S" in kinds[loop]:
        raise ScheduleError(prim, f"loop {loop.name!r} is bound to a spatial iteration variable of block "
                                  f"{blk.name!r}; rfactor needs a reduction loop")
    if blk.init is None:
        raise ScheduleError(prim, f"block {blk.name!r} has no init; rfactor needs a reduction block with init")
    return L, realize, kinds


def _check_loop_properties(L: S.For, realize: S.BlockRealize, loops: list, kinds: dict, prim: str) -> None:
    """TVM's loop conditions of rfactor: the factored loop holds only the block; the block is the first block
    under its outermost loop; the outermost loop feeding a reduction variable holds only the block; and no
    loop of more than one iteration that feeds no variable of the block lies under a reduction loop (each
    of its iterations would redo the reduction)."""
    name = realize.block.name
    if len(blocks_under(L.body)) != 1:
        raise ScheduleError(prim, f"loop {L.loop_var.name!r} holds other blocks besides {name!r}")
    first = blocks_under(loops[0].body)
    if first and first[0] is not realize:
        raise ScheduleError(prim, f"block {name!r} is not the first block under its outermost loop "
                                  f"{loops[0].loop_var.name!r}")
    met_reduction = False
    for lp in loops:
        k = kinds.get(lp.loop_var, set())
        if "R" in k and not met_reduction:
            met_reduction = True
            if len(blocks_under(lp.body)) != 1:
                raise ScheduleError(prim, f"reduction loop {lp.loop_var.name!r} of block {name!r} holds other "
                                          "blocks too")
        elif not k and met_reduction and lp.const_extent() != 1:
            raise ScheduleError(prim, f"loop {lp.loop_var.name!r} feeds no iteration variable of block {name!r} "
                                      "but lies under a reduction loop")


def _factor_axis(factor_axis, out: Buffer, prim: str) -> int:
    """``factor_axis`` as a position in ``0..ndim`` of the rfactor buffer (negative ones count from the end)."""
    if isinstance(factor_axis, bool) or not isinstance(factor_axis, int):
        raise ScheduleError(prim, f"factor_axis must be an int, got {type(factor_axis).__name__}")
    ndim = len(out.shape)
    if not -(ndim + 1) <= factor_axis <= ndim:
        raise ScheduleError(prim, f"factor_axis {factor_axis} is out of range for the {ndim}-d buffer "
                                  f"{out.name!r} (allowed {-(ndim + 1)}..{ndim})")
    return factor_axis + ndim + 1 if factor_axis < 0 else factor_axis


def _check_loop_nest(func: PrimFunc, bpath: list, realize: S.BlockRealize, loops: list, kinds: dict,
                     loop: E.Var, prim: str) -> tuple[S.Block, int]:
    """Refuse loop nests rfactor cannot split; returns the enclosing scope block and the index of the scope's
    child that holds the block (where the write-back goes after)."""
    blk = realize.block
    for lp in loops:
        k = kinds.get(lp.loop_var, set())
        if "S" in k and "R" in k:
            raise ScheduleError(prim, f"loop {lp.loop_var.name!r} is bound to both spatial and reduction "
                                      f"variables of {blk.name!r}")
    scope = enclosing_block(bpath)
    info = D.ScopeInfo(func, scope)
    me = info.site(realize)
    items = seq_items(scope.body)
    mine = D.child_index_containing(items, me)
    for other in info.sites:
        if other is not me and D.child_index_containing(items, other) == mine and \
                (other.reads | other.writes) & me.writes:
            raise ScheduleError(prim, f"block {other.name!r} accesses {sorted(b.name for b in me.writes)} inside "
                                      f"the loop nest of {blk.name!r}")
    if uses_var(realize.predicate, {loop}):
        # e.g. a non-divisible split of the reduction: for the values of ``loop`` the predicate rules out
        # entirely, the init of ``<block>_rf`` never runs and the write-back would add uninitialized memory
        raise ScheduleError(prim, f"the predicate of block {blk.name!r} depends on loop {loop.name!r} (a "
                                  "non-divisible split?); some partial results would never be initialized")
    return scope, mine


def _rfactor_block(rf_name: str, rf_buf: Buffer, axis: int, realize: S.BlockRealize, red: _Reduction,
                   L: S.For, loops: list, kinds: dict) -> S.BlockRealize:
    """The ``<block>_rf`` block in the original nest: ``L`` becomes spatial, every other reduction loop gets
    its own iteration variable, and partial results accumulate into ``rf_buf``."""
    blk = realize.block
    r_loops = [lp for lp in loops if "R" in kinds.get(lp.loop_var, ())]
    loop_to_var = {lp.loop_var: E.Var(f"v{lp.loop_var.name}", lp.loop_var.dtype) for lp in r_loops}
    rf_var = loop_to_var[L.loop_var]
    reduce_sub = {}
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type == "R":
            reduce_sub[iv.var] = substitute(value, loop_to_var)
    rf_ivs = [S.IterVar(rf_var, S.Range(L.min, L.extent), "S")]
    rf_values = [L.loop_var]
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type == "S":
            rf_ivs.append(iv)
            rf_values.append(value)
    for lp in r_loops:
        if lp is not L:
            rf_ivs.append(S.IterVar(loop_to_var[lp.loop_var], S.Range(lp.min, lp.extent), "R"))
            rf_values.append(lp.loop_var)
    rf_pos = simplify(sub_int(rf_var, L.min))
    rf_idx = red.store.indices[:axis] + (rf_pos,) + red.store.indices[axis:]
    rf_load = E.BufferLoad(rf_buf, rf_idx)
    rf_body = S.BufferStore(rf_buf, _combine(red.op, rf_load, substitute(red.rhs, reduce_sub), red.acc_first),
                            rf_idx)
    rf_init = S.BufferStore(rf_buf, _identity(red.op, red.store.buffer.dtype), rf_idx)
    rf_block = D.with_inferred_regions(S.Block(rf_name, rf_ivs, (), (), rf_body, rf_init,
                                               annotations=blk.annotations))
    return S.BlockRealize(rf_values, realize.predicate, rf_block)


def _write_back(rf_buf: Buffer, axis: int, realize: S.BlockRealize, red: _Reduction, L: S.For, loops: list,
                kinds: dict, outer: set) -> S.Stmt:
    """The original block reducing the partial results into its buffer, under copies of the spatial loops
    and of ``L`` (``outer``: the loop variables outside the scope, which its predicate may keep using)."""
    blk = realize.block
    out = red.store.buffer
    lmap, copies = {}, []
    for lp in loops:
        if lp is L or "S" in kinds.get(lp.loop_var, ()):
            nv = E.Var(lp.loop_var.name, lp.loop_var.dtype)
            lmap[lp.loop_var] = nv
            copies.append((lp, nv))
    wb_rf_var = E.Var(f"v{L.loop_var.name}", L.loop_var.dtype)
    ivmap = {}
    wb_ivs = [S.IterVar(wb_rf_var, S.Range(L.min, L.extent), "R")]
    wb_values = [lmap[L.loop_var]]
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type == "S":
            nv = iv.var.copy_with_name()
            ivmap[iv.var] = nv
            wb_ivs.append(S.IterVar(nv, iv.dom, "S"))
            wb_values.append(substitute(value, lmap))
    out_idx = tuple(substitute(i, ivmap) for i in red.store.indices)
    part_idx = out_idx[:axis] + (simplify(sub_int(wb_rf_var, L.min)),) + out_idx[axis:]
    wb_body = S.BufferStore(out, _combine(red.op, E.BufferLoad(out, out_idx), E.BufferLoad(rf_buf, part_idx),
                                          red.acc_first), out_idx)
    wb_block = D.with_inferred_regions(S.Block(blk.name, wb_ivs, (), (), wb_body, substitute(blk.init, ivmap),
                                               annotations=blk.annotations))
    wb: S.Stmt = S.BlockRealize(wb_values, _restrict_predicate(realize.predicate, lmap, outer), wb_block)
    for lp, nv in reversed(copies):
        wb = S.For(nv, lp.min, lp.extent, "serial" if lp is L else lp.kind, wb)
    return wb
