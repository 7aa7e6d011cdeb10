"""Loop transformations: split, fuse, reorder (pure functions ``PrimFunc -> PrimFunc``).

They change only loops and the bindings/predicates of the blocks under them (TensorIR keeps block bodies
in terms of block iteration variables, so bodies are shared untouched). Rewritten bindings are simplified
with the bounds of the loops around them so that, e.g., ``fused // 128`` stays readable.

Non-divisible splits are *predicated* (TVM's default ``disable_predication=False``): every block below the
split loop gets ``outer * f + inner < extent`` added to its ``BlockRealize.predicate``. With
``disable_predication=True`` such a split is refused (a ScheduleError), because running the extra
iterations unguarded would read and write out of bounds.

As in TVM, split and fuse refuse annotated loops and loops not starting at 0, and reorder refuses blocks
whose bindings are not affine in the reordered loops (``schedule.affine``) and opaque blocks that use them.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import add_int, mul_int, simplify
from ...ir.dtype import bits
from ...ir.function import PrimFunc
from ...ir.functor import substitute, uses_var
from ...ir.stmt_functor import StmtMutator
from ..error import ScheduleError
from ..affine import is_affine_binding
from ..tree import (all_loops_above, find_loop, for_with, func_index, loop_bounds, loops_above, realize_with,
                    replace_path)
from .query import binding_kinds, blocks_under, expr_vars, is_reduction_block


# ----------------------------------------------------------------------------------------------------------
# Rewriting the bindings below a changed loop
# ----------------------------------------------------------------------------------------------------------
class _Rebinder(StmtMutator):
    """Substitutes removed loop variables in everything below the changed loop.

    Only loop ranges, block bindings, predicates and conditions can mention a loop variable (blocks are
    self-contained), so block bodies are not visited. ``guard`` (an optional condition over the new loop
    variables) is and-ed into the predicate of every block below; loose statements get an ``if``.
    """

    def __init__(self, vmap: dict, guard: E.PrimExpr | None):
        self.vmap = vmap
        self.keys = set(vmap)
        self.guard = guard

    def _expr(self, e, bounds):
        if isinstance(e, E.Var):
            return self.vmap.get(e, e)
        if isinstance(e, E.IntImm) or not uses_var(e, self.keys):
            return e
        new = substitute(e, self.vmap)
        return e if new is e else simplify(new, bounds)

    def _guard(self, bounds):
        if self.guard is None:
            return None
        g = simplify(self.guard, bounds)
        return None if isinstance(g, E.IntImm) and g.value else g

    # ``bounds`` (passed down) holds the ranges of the loops around a statement; a loop's entry is set while
    # its body is visited, and restored after
    def visit_For(self, s: S.For, bounds: dict):
        mn, ext = self._expr(s.min, bounds), self._expr(s.extent, bounds)
        if isinstance(mn, E.IntImm) and isinstance(ext, E.IntImm):
            var = s.loop_var
            saved = bounds.get(var, _ABSENT)
            bounds[var] = (mn.value, mn.value + ext.value - 1)
            try:
                body = self.visit(s.body, bounds)
            finally:
                if saved is _ABSENT:
                    del bounds[var]
                else:
                    bounds[var] = saved
        else:
            body = self.visit(s.body, bounds)
        if mn is s.min and ext is s.extent and body is s.body:
            return s
        if type(s) is S.For:
            return for_with(s, mn, ext, body)
        return s.replace(min=mn, extent=ext, body=body)

    def visit_BlockRealize(self, s: S.BlockRealize, bounds: dict):
        values = [self._expr(v, bounds) for v in s.iter_values]
        pred = self._expr(s.predicate, bounds)
        g = self._guard(bounds)
        if g is not None:
            pred = E.logical_and(pred, g)
        block = s.block
        if not block.iter_vars:  # an opaque block uses the loop variables in its body (as TVM substitutes)
            block = substitute(block, self.vmap)
        if pred is s.predicate and block is s.block and all(a is b for a, b in zip(values, s.iter_values)):
            return s
        if type(s) is S.BlockRealize:
            return realize_with(s, tuple(values), pred, block)
        return s.replace(iter_values=tuple(values), predicate=pred, block=block)

    def visit_IfThenElse(self, s: S.IfThenElse, bounds: dict):
        cond = self._expr(s.condition, bounds)
        then = self.visit(s.then_case, bounds)
        other = self.visit(s.else_case, bounds)
        if cond is s.condition and then is s.then_case and other is s.else_case:
            return s
        return S.IfThenElse(cond, then, other)

    def _loose(self, s, bounds: dict):
        """A store or evaluate directly under loops: substituted, and guarded by an ``if``."""
        new = substitute(s, self.vmap)
        g = self._guard(bounds)
        return new if g is None else S.IfThenElse(g, new)

    visit_BufferStore = visit_Evaluate = visit_Block = _loose


_ABSENT = object()


def check_plain_loop(node: S.For, primitive: str) -> None:
    """split and fuse make new loops: refuse a loop whose annotations would be lost, or that does not start
    at 0 (TVM refuses both)."""
    name = node.loop_var.name
    if node.annotations:
        raise ScheduleError(primitive, f"loop {name!r} has annotations {sorted(node.annotations)}, which the new "
                                       "loops would lose; unannotate it first")
    if not (isinstance(node.min, E.IntImm) and node.min.value == 0):
        raise ScheduleError(primitive, f"loop {name!r} starts at {node.min!r}, not 0; only loops starting at 0 "
                                       "can be split or fused")


def check_reorder_bindings(func: PrimFunc, chain: list, primitive: str) -> None:
    """Every block directly under the reordered ``chain`` of loops must have affine bindings, at least in the
    loops from the chain's top down (TVM's partial affine binding): reordering loops that feed a non-affine
    binding changes which values it takes in which order. An opaque block (no iteration variables) that uses
    a chain loop in its body is refused too: its iterations run in program order, and TVM's check (which such
    a block passes vacuously) lets a reorder change what a loop-carried dependence computes."""
    idx = func_index(func)
    top = chain[0]
    chain_vars = {n.loop_var for n in chain}
    for realize in blocks_under(chain[-1].body):
        if not realize.block.iter_vars:
            if uses_var(realize.predicate, chain_vars) or uses_var(realize.block, chain_vars):
                raise ScheduleError(primitive, f"opaque block {realize.block.name!r} (no iteration variables) "
                                               "uses the reordered loops directly; its iterations may depend on "
                                               "each other in program order")
            continue
        loops = loops_above(idx.path(realize))
        if is_affine_binding(realize, loops, overlap=True):
            continue
        k = next((i for i, lp in enumerate(loops) if lp is top), 0)
        if not is_affine_binding(realize, loops[k:], overlap=True):
            raise ScheduleError(primitive, f"block {realize.block.name!r} under the loops does not have an affine "
                                           f"binding in the loops from {top.loop_var.name!r} down (or a predicate "
                                           "ties them together); reordering them is not supported")


def find_loops(func: PrimFunc, loops, primitive: str) -> dict:
    """``Var -> path`` for several loops (a missing loop is reported as ``find_loop`` does). Loops on the
    path of one found before take a prefix of it instead of another walk up the tree."""
    idx = func_index(func)
    paths: dict = {}
    longest: list = []
    position: dict = {}  # node -> index on ``longest``
    for v in loops:
        node = idx.loops.get(v)
        k = position.get(node) if node is not None else None
        if k is not None:
            paths[v] = longest[: k + 1]
            continue
        path = find_loop(func, v, primitive)
        paths[v] = path
        if len(path) > len(longest):
            longest = path
            position = {n: i for i, n in enumerate(path)}
    return paths


def _outer_bounds(path) -> dict:
    return loop_bounds(all_loops_above(path))


def _const(value: int, dtype: str) -> E.PrimExpr:
    return E.const(value, dtype)


# ----------------------------------------------------------------------------------------------------------
# split
# ----------------------------------------------------------------------------------------------------------
def split(func: PrimFunc, loop: E.Var, factors, preserve_unit_iters: bool = True,
          disable_predication: bool = False) -> tuple[PrimFunc, list[E.Var]]:
    """Split ``loop`` into ``len(factors)`` nested loops (outermost first); one factor may be ``None``.

    The loop variable becomes ``min + sum(new_i * stride_i)`` in the bindings below. When the factors'
    product exceeds the extent the blocks below are predicated (see module doc); a product smaller than
    the extent is an error.
    """
    prim = "split"
    path = find_loop(func, loop, prim)
    node: S.For = path[-1]
    check_plain_loop(node, prim)
    factors = list(factors)
    if not factors:
        raise ScheduleError(prim, "needs at least one factor")
    if sum(f is None for f in factors) > 1:
        raise ScheduleError(prim, f"at most one factor may be None, got {factors}")
    for f in factors:
        if f is not None and (isinstance(f, bool) or not isinstance(f, int) or f < 1):
            raise ScheduleError(prim, f"factors must be positive integers (or one None), got {factors}")
    dtype = loop.dtype
    known = 1
    for f in factors:
        if f is not None:
            known *= f
    extent = node.const_extent()
    if extent is not None:
        if None in factors:
            factors[factors.index(None)] = -(-extent // known)
        total = 1
        for f in factors:
            total *= f
        if total < extent:
            raise ScheduleError(prim, f"the factors {factors} multiply to {total}, which does not cover the "
                                      f"extent {extent} of loop {loop.name!r}")
        need_guard = total != extent
        extents = [_const(f, dtype) for f in factors]
    else:
        if None not in factors:
            raise ScheduleError(prim, f"loop {loop.name!r} has the symbolic extent {node.extent!r}; "
                                      "give one factor as None so that it can be inferred")
        k = factors.index(None)
        outer = simplify(E.floordiv(add_int(node.extent, known - 1), _const(known, dtype)))
        extents = [outer if i == k else _const(f, dtype) for i, f in enumerate(factors)]
        need_guard = known != 1
    if need_guard and disable_predication:
        raise ScheduleError(prim, f"the factors {factors} do not divide the extent {node.extent!r} of loop "
                                  f"{loop.name!r}; refused because disable_predication=True would run "
                                  "out-of-bounds iterations")
    new_vars = [E.Var(f"{loop.name}_{i}", dtype) for i in range(len(factors))]
    strides = [None] * len(new_vars)
    stride = None
    for i in range(len(new_vars) - 1, -1, -1):
        strides[i] = stride
        stride = extents[i] if stride is None else mul_int(stride, extents[i])
    fused = None
    for v, ext, st in zip(new_vars, extents, strides):
        if isinstance(ext, E.IntImm) and ext.value == 1 and not preserve_unit_iters:
            continue
        term = v if st is None else mul_int(v, st)
        fused = term if fused is None else add_int(fused, term)
    if fused is None:
        fused = _const(0, dtype)
    guard = E.compare("<", fused, node.extent) if need_guard else None
    bounds = _outer_bounds(path)
    for v, ext in zip(new_vars, extents):
        if isinstance(ext, E.IntImm):
            bounds[v] = (0, ext.value - 1)
    value = add_int(node.min, fused)
    body = _Rebinder({loop: value}, guard).visit(node.body, bounds)
    for v, ext in reversed(list(zip(new_vars, extents))):
        body = S.For(v, _const(0, dtype), ext, "serial", body)
    return replace_path(func, path, body), new_vars


# ----------------------------------------------------------------------------------------------------------
# fuse
# ----------------------------------------------------------------------------------------------------------
def _widest(dtypes) -> str:
    return max(dtypes, key=bits)



def _distinct_loops(prim: str, loops) -> list:
    loops = list(loops)
    if not loops:
        raise ScheduleError(prim, "needs at least one loop")
    if len(set(loops)) != len(loops):
        raise ScheduleError(prim, f"a loop is given twice: {[v.name for v in loops]}")
    return loops


def _check_independent_ranges(prim: str, loops: list, consequence: str) -> None:
    """No loop's range (min, extent) may use another of ``loops``' variables."""
    own = {n.loop_var for n in loops}
    for n in loops:
        used = (expr_vars(n.min) | expr_vars(n.extent)) & own
        if used:
            raise ScheduleError(prim, f"the range of loop {n.loop_var.name!r} depends on loop "
                                      f"{next(iter(used)).name!r}{consequence}")

def fuse(func: PrimFunc, loops, preserve_unit_iters: bool = True) -> tuple[PrimFunc, E.Var]:
    """Fuse directly nested loops (given outermost first) into one loop ``a_b_fused``.

    Each old variable becomes ``min_i + (fused // stride_i) % extent_i`` in the bindings below; a loop of
    extent 1 becomes its minimum (so ``preserve_unit_iters``, kept for TVM compatibility and recorded in
    traces, changes nothing here).
    """
    prim = "fuse"
    loops = _distinct_loops(prim, loops)
    path = find_loop(func, loops[0], prim)
    nodes = [path[-1]]
    check_plain_loop(nodes[0], prim)
    for nxt in loops[1:]:
        body = nodes[-1].body
        if not (isinstance(body, S.For) and body.loop_var is nxt):
            find_loop(func, nxt, prim)  # a loop that no longer exists is reported as such
            raise ScheduleError(prim, f"loops {nodes[-1].loop_var.name!r} and {nxt.name!r} are not adjacent: "
                                      "fuse needs loops given outermost first, each the only statement in the "
                                      "body of the previous one")
        check_plain_loop(body, prim)
        nodes.append(body)
    _check_independent_ranges(prim, nodes, "")
    dtype = _widest([n.loop_var.dtype for n in nodes])
    fused = E.Var("_".join(n.loop_var.name for n in nodes) + "_fused", dtype)
    extents = [n.extent if n.extent.dtype == dtype else E.cast(dtype, n.extent) for n in nodes]
    total = extents[0]
    for ext in extents[1:]:
        total = mul_int(total, ext)
    bounds = _outer_bounds(path)
    if isinstance(total, E.IntImm):
        bounds[fused] = (0, total.value - 1)
    vmap = {}
    stride = None
    for i in range(len(nodes) - 1, -1, -1):
        n, ext = nodes[i], extents[i]
        if isinstance(ext, E.IntImm) and ext.value == 1:
            value = n.min  # a single iteration: whatever the fused variable, it is the minimum
        else:
            q = fused if stride is None else E.floordiv(fused, stride)
            if i > 0:
                q = E.floormod(q, ext)
            value = add_int(E.cast(dtype, n.min), q) if dtype != n.loop_var.dtype else add_int(n.min, q)
            value = simplify(value, bounds)
            if value.dtype != n.loop_var.dtype:
                value = E.cast(n.loop_var.dtype, value)
        vmap[n.loop_var] = value
        stride = ext if stride is None else mul_int(ext, stride)
    body = _Rebinder(vmap, None).visit(nodes[-1].body, bounds)
    new = S.For(fused, _const(0, dtype), total, "serial", body)
    return replace_path(func, path, new), fused


# ----------------------------------------------------------------------------------------------------------
# reorder
# ----------------------------------------------------------------------------------------------------------
def reorder(func: PrimFunc, loops) -> PrimFunc:
    """Put the given loops in the given order, in the positions they occupied; other loops stay put.

    The loops must lie on one chain of perfectly nested loops (each the only statement in the body of the
    one above, no block in between). Refused when a loop in the chain is bound into both spatial and
    reduction variables of one reduction block: reordering such a loop could run the reduction's first
    iteration (where ``init`` runs) after others.
    """
    prim = "reorder"
    loops = _distinct_loops(prim, loops)
    paths = find_loops(func, loops, prim)
    bottom_var = max(loops, key=lambda v: len(paths[v]))
    bottom = paths[bottom_var]
    top_var = min(loops, key=lambda v: len(paths[v]))
    for v in loops:
        p = paths[v]
        if bottom[len(p) - 1] is not p[-1]:
            raise ScheduleError(prim, f"loops {v.name!r} and {bottom_var.name!r} are not in one loop nest "
                                      "(neither is inside the other)")
    start = len(paths[top_var]) - 1
    chain: list[S.For] = []
    for node in bottom[start:]:
        if isinstance(node, S.SeqStmt):
            raise ScheduleError(prim, f"loop {chain[-1].loop_var.name!r} has other statements beside the loops "
                                      "below it; reorder needs a single chain of nested loops")
        if not isinstance(node, S.For):
            raise ScheduleError(prim, f"loops {top_var.name!r} .. {bottom_var.name!r} are not perfectly nested: "
                                      f"a {type(node).__name__} lies between them")
        if chain and chain[-1].body is not node:
            raise ScheduleError(prim, f"loop {chain[-1].loop_var.name!r} has other statements beside loop "
                                      f"{node.loop_var.name!r}; reorder needs a single chain of nested loops")
        chain.append(node)
    _check_independent_ranges(prim, chain, ", so they cannot be reordered")
    if len(loops) > 1:
        check_reorder_bindings(func, chain, prim)
    for realize in blocks_under(chain[-1].body):
        if not is_reduction_block(realize.block):
            continue
        kinds = binding_kinds(realize)
        for n in chain:
            if kinds.get(n.loop_var, set()) >= {"S", "R"}:
                raise ScheduleError(prim, f"loop {n.loop_var.name!r} is bound into both spatial and reduction "
                                          f"iteration variables of block {realize.block.name!r}")
    given = set(loops)
    positions = [i for i, n in enumerate(chain) if n.loop_var in given]
    by_var = {n.loop_var: n for n in chain}
    order = list(chain)
    for pos, v in zip(positions, loops):
        order[pos] = by_var[v]
    body = chain[-1].body
    for n in reversed(order):
        body = for_with(n, n.min, n.extent, body) if type(n) is S.For else n.replace(body=body)
    return replace_path(func, bottom[: start + 1], body)
