"""``blockize``: the loop nest under a loop, with its block, becomes the body of a new outer block.

Tensorization and hierarchical schedules treat a whole tile as one unit; blockize gives that tile a block of
its own (``<name>_o``) whose iteration variables are the *outer* part of each original binding, while the
original block keeps the *inner* part. Each binding must split as ``outer * E + inner``: affine in the loops
under the target, those loops forming one mixed-radix number of extent ``E`` (as TVM's subspace division,
for the perfectly nested case), with ``E`` dividing the variable's domain. A reduction block's init moves to
the outer block (looping over the inner spatial variables it uses), as TVM does.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import affine_coefficients, as_const_int, simplify
from ...ir.function import PrimFunc
from ...ir.functor import substitute
from ...ir.regions import infer_block_regions
from ..error import ScheduleError
from .dataflow import fresh_name
from ..tree import find_loop, replace_path

PRIM = "blockize"


def _chain(loop: S.For) -> tuple[list[S.For], S.BlockRealize]:
    loops, node = [], loop
    while isinstance(node, S.For):
        loops.append(node)
        node = node.body
    if not isinstance(node, S.BlockRealize):
        raise ScheduleError(PRIM, f"the loops under {loop.loop_var.name!r} must nest perfectly over one block "
                                  "(blockizing several blocks or statements is not supported)")
    for lp in loops:
        if as_const_int(lp.min) != 0 or as_const_int(lp.extent) is None:
            raise ScheduleError(PRIM, f"loop {lp.loop_var.name!r} must start at 0 and have a constant extent")
    return loops, node


def _divide(value, iv: S.IterVar, loops: list[S.For]):
    """``(outer, outer_extent, inner, inner_extent)`` with ``value == outer * inner_extent + inner``."""
    extents = {lp.loop_var: as_const_int(lp.extent) for lp in loops}
    found = affine_coefficients(value, list(extents))
    if found is None:
        raise ScheduleError(PRIM, f"the binding {value} of {iv.var.name!r} is not affine in the inner loops")
    coefs, rest = found
    used = sorted(((c, v) for v, c in coefs.items() if c != 0 and extents[v] != 1), key=lambda cv: cv[0])
    inner_extent, inner = 1, None
    for c, v in used:
        if c != inner_extent:
            raise ScheduleError(PRIM, f"the binding {value} of {iv.var.name!r} does not split as outer * extent + "
                                      "inner over the inner loops")
        term = v if c == 1 else E.mul(E.const(c, v.dtype), v)
        inner = term if inner is None else E.add(inner, term)
        inner_extent *= extents[v]
    domain = as_const_int(iv.dom.extent)
    if domain is None or domain % inner_extent:
        raise ScheduleError(PRIM, f"the inner extent {inner_extent} of {iv.var.name!r} does not divide its domain")
    dtype = iv.var.dtype
    outer = simplify(E.floordiv(rest, E.const(inner_extent, dtype))) if inner_extent > 1 else simplify(rest)
    if inner_extent > 1 and as_const_int(simplify(E.sub(rest, E.mul(outer, E.const(inner_extent, dtype))))) != 0:
        raise ScheduleError(PRIM, f"the outer part of {iv.var.name!r}'s binding is not a multiple of {inner_extent}")
    return outer, domain // inner_extent, inner, inner_extent


def _outer_init(init, inner_ivs: list, inner_values: list, loops: list[S.For], name: str):
    """TVM's init of the outer block: a block over the inner spatial variables the init uses, under copies of
    the inner loops that bind them."""
    from ...ir.functor import collect_vars  # only blockize of a reduction needs it

    used = set(collect_vars(init))
    keep = [(iv, val) for iv, val in zip(inner_ivs, inner_values) if iv.iter_type == "S" and iv.var in used]
    vmap = {iv.var: iv.var.copy_with_name(iv.var.name + "_init") for iv, _ in keep}
    loop_vars = {v for _, val in keep for v in collect_vars(val)}
    lmap = {lp.loop_var: lp.loop_var.copy_with_name() for lp in loops if lp.loop_var in loop_vars}
    block = S.Block(name, [S.IterVar(vmap[iv.var], iv.dom, "S") for iv, _ in keep], body=substitute(init, vmap))
    block = block.replace(writes=infer_block_regions(block)[1])
    stmt = S.BlockRealize([substitute(val, lmap) for _, val in keep], E.const(True, "bool"), block)
    for lp in reversed(loops):
        if lp.loop_var in lmap:
            stmt = S.For(lmap[lp.loop_var], lp.min, lp.extent, lp.kind, stmt, lp.annotations)
    return stmt


def blockize(func: PrimFunc, loop: E.Var, preserve_unit_iters: bool = True) -> tuple[PrimFunc, str]:
    """Long because it builds the three parts of the result (inner block, outer init, outer block) in one pass
    over the bindings, as TVM's DeriveBlockBinding does.

    ``func`` with the subtree of ``loop`` wrapped in a new block; returns the new block's name."""
    path = find_loop(func, loop, PRIM)
    loops, realize = _chain(path[-1])
    block = realize.block
    outer_ivs, outer_values, inner_ivs, inner_values, vmap = [], [], [], [], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        outer, outer_extent, inner, inner_extent = _divide(value, iv, loops)
        dtype = iv.var.dtype
        vo = S.IterVar(iv.var.copy_with_name(iv.var.name + "_o"), S.Range.from_extent(E.const(outer_extent, dtype)),
                       iv.iter_type)
        outer_ivs.append(vo)
        unit = outer_extent == 1 and not preserve_unit_iters
        outer_values.append(E.const(0, dtype) if unit else outer)
        if inner_extent == 1:
            vmap[iv.var] = E.const(0, dtype) if unit else vo.var
            continue
        vi = S.IterVar(iv.var.copy_with_name(iv.var.name + "_i"), S.Range.from_extent(E.const(inner_extent, dtype)),
                       iv.iter_type)
        inner_ivs.append(vi)
        inner_values.append(inner)
        vmap[iv.var] = vi.var if outer_extent == 1 else E.add(E.mul(vo.var, E.const(inner_extent, dtype)), vi.var)
    inner_block = S.Block(block.name, inner_ivs, body=substitute(block.body, vmap),
                          alloc_buffers=block.alloc_buffers, annotations=block.annotations)
    reads, writes = infer_block_regions(inner_block)  # without its init, it reads what it accumulates into
    inner_block = inner_block.replace(reads=reads, writes=writes)
    new_body: S.Stmt = S.BlockRealize(inner_values, realize.predicate, inner_block)
    for lp in reversed(loops):
        new_body = lp.replace(body=new_body)
    init = None
    if block.init is not None:
        init_subst = substitute(block.init, vmap)
        init = _outer_init(init_subst, inner_ivs, inner_values, loops, fresh_name(func, block.name + "_init"))
    name = fresh_name(func, block.name + "_o")
    outer_block = S.Block(name, outer_ivs, body=new_body, init=init)
    reads, writes = infer_block_regions(outer_block)
    outer_block = outer_block.replace(reads=reads, writes=writes)
    outer = S.BlockRealize(outer_values, E.const(True, "bool"), outer_block)
    return replace_path(func, path, outer), name
