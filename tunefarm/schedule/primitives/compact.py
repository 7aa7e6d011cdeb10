"""compact_buffer_allocations: shrink ``local`` scratch buffers to what one loop iteration touches.

``cache_write`` keeps its cache full-size (as TVM does). Lowering calls this pass so that, after the
write-back was moved into a tile, the accumulator becomes a tile-sized array that LLVM can keep in
registers, allocated per iteration of the tile loop (so parallel loops above it get private copies).

What it guarantees, for every buffer of scope ``local`` allocated by some block ``B`` (never parameters,
never ``global`` buffers):

* Let ``L`` be the innermost loop (inside ``B``) that contains every access to the buffer. If one exists,
  the per-iteration bounding box of the accesses under ``L`` has constant extents, and the box origins of
  different iterations of ``L`` and of the loops around it (inside ``B``) are provably pairwise disjoint
  (each such loop with more than one iteration moves the origin along exactly one dimension, in a
  mixed-radix pattern whose strides are at least the tile size) - then no value can flow from one
  iteration of ``L`` to another, and the buffer is replaced by a tile-shaped buffer allocated in an opaque
  block directly under ``L``; every access subtracts the (loop-variable) origin of its tile.
* Otherwise, if the bounding box of all accesses is constant and smaller than the buffer, the buffer
  shrinks to that box in place (allocation unchanged, indices shifted by a constant).
* Otherwise the buffer is left untouched.

Either rewrite maps every accessed element one-to-one to an element of the new buffer for as long as it
may be live, so the program computes the same values. The output is for lowering: indices inside blocks
may mention enclosing loop variables (as after TVM's ConvertBlocksToOpaque), so it is not meant to be
scheduled further.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import simplify
from ...ir.buffer import Buffer
from ...ir.function import PrimFunc
from ...ir.functor import IRMutator, substitute
from ...ir.stmt_functor import StmtVisitor, iter_stmts
from ..tree import find_loop, loop_bounds, replace_path
from . import dataflow as D


class _Site:
    __slots__ = ("loops", "indices")

    def __init__(self, loops, indices):
        self.loops = loops
        self.indices = indices


class _SiteCollector(StmtVisitor):
    """``_collect_sites``'s walk. Passed down: the loops around a statement (outermost first, their ranges
    in the variables of the block being compacted) and each enclosing block iteration variable's binding
    in those variables."""

    def __init__(self, buf: Buffer):
        self.buf = buf
        self.sites: list[_Site] = []
        self.bad = False  # the buffer shows up where it cannot be rewritten

    def _loads(self, e, loops, vmap) -> None:
        for ld in D.loads_of(e, self.buf):
            self.sites.append(_Site(loops, [substitute(i, vmap) for i in ld.indices]))

    def _touches(self, *exprs) -> None:
        if any(D.loads_of(e, self.buf) for e in exprs):
            self.bad = True

    def visit_For(self, s: S.For, loops: tuple, vmap: dict):
        self._touches(s.min, s.extent)
        lp = s if not vmap else s.replace(min=substitute(s.min, vmap), extent=substitute(s.extent, vmap))
        self.visit(s.body, loops + (lp,), vmap)

    def visit_BlockRealize(self, s: S.BlockRealize, loops: tuple, vmap: dict):
        self._touches(*s.iter_values, s.predicate)
        inner = dict(vmap)
        for iv, v in zip(s.block.iter_vars, s.iter_values):
            inner[iv.var] = substitute(v, vmap)
        self.visit(s.block, loops, inner)

    def visit_BufferStore(self, s: S.BufferStore, loops: tuple, vmap: dict):
        if s.buffer is self.buf:
            self.sites.append(_Site(loops, [substitute(i, vmap) for i in s.indices]))
        self._loads(s.value, loops, vmap)
        for i in s.indices:
            self._loads(i, loops, vmap)

    def visit_IfThenElse(self, s: S.IfThenElse, loops: tuple, vmap: dict):
        self._touches(s.condition)
        self.generic_visit(s, loops, vmap)

    def visit_Evaluate(self, s: S.Evaluate, loops: tuple, vmap: dict):
        self._loads(s.value, loops, vmap)


def _collect_sites(block: S.Block, buf: Buffer) -> list[_Site] | None:
    """Every access to ``buf`` below ``block``: loops around it and indices in loop variables.

    None when the buffer shows up where it cannot be rewritten (a binding, a loop bound, a condition).
    """
    collector = _SiteCollector(buf)
    collector.visit(block, (), {})
    return None if collector.bad else collector.sites


def _common_prefix(sites) -> list[S.For]:
    prefix = list(sites[0].loops)
    for s in sites[1:]:
        k = 0
        while k < len(prefix) and k < len(s.loops) and s.loops[k].loop_var is prefix[k].loop_var:
            k += 1
        prefix = prefix[:k]
    return prefix


def _box(sites, fixed_loops, buf) -> tuple[list, list] | None:
    """Origin (expressions in the fixed loops' variables) and constant extents of the accesses' bounding
    box when the loops after ``fixed_loops`` are relaxed; None if unbounded."""
    bounds = loop_bounds(fixed_loops)
    lo = hi = None
    nfixed = len(fixed_loops)
    for s in sites:
        relax, rb = D.relax_loops(s.loops[nfixed:], bounds)
        dims = []
        for idx in s.indices:
            r = D.interval(idx, relax, rb)
            if r is None:
                return None
            dims.append((simplify(r[0], bounds), simplify(r[1], bounds)))
        if lo is None:
            lo, hi = [d[0] for d in dims], [d[1] for d in dims]
        else:
            lo = [D.sym_min(a, d[0], bounds) for a, d in zip(lo, dims)]
            hi = [D.sym_max(a, d[1], bounds) for a, d in zip(hi, dims)]
    extents = []
    for a, b in zip(lo, hi):
        ext = simplify(E.add(E.sub(b, a), 1), bounds)
        if not isinstance(ext, E.IntImm) or ext.value <= 0:
            return None
        extents.append(ext.value)
    return lo, extents


def _digit(x, loop_vars):
    """``(var, divisor, modulus)`` when ``x`` is ``v``, ``v // d``, ``v % m`` or ``(v // d) % m`` for a loop
    variable ``v`` (one "digit" of ``v`` in a mixed-radix view; modulus None means unbounded)."""
    if isinstance(x, E.Var) and x in loop_vars:
        return (x, 1, None)
    if isinstance(x, E.Binary) and isinstance(x.b, E.IntImm) and x.b.value > 0:
        if x.op == "//" and isinstance(x.a, E.Var) and x.a in loop_vars:
            return (x.a, x.b.value, None)
        if x.op == "%":
            inner = _digit(x.a, loop_vars)
            if inner is not None and inner[2] is None:
                return (inner[0], inner[1], x.b.value)
    return None


def _digit_terms(e, loop_vars) -> list | None:
    """``e`` as ``sum(coef * digit) + const``; None when it has another shape."""
    terms: dict = {}

    def add(x, k) -> bool:
        if isinstance(x, E.IntImm):
            return True
        if isinstance(x, E.Binary) and x.op in ("+", "-"):
            return add(x.a, k) and add(x.b, k if x.op == "+" else -k)
        if isinstance(x, E.Binary) and x.op == "*":
            if isinstance(x.b, E.IntImm):
                return add(x.a, k * x.b.value)
            if isinstance(x.a, E.IntImm):
                return add(x.b, k * x.a.value)
            return False
        dig = _digit(x, loop_vars)
        if dig is None:
            return False
        key = (id(dig[0]), dig[1], dig[2])
        old = terms.get(key)
        terms[key] = (dig, k + (old[1] if old else 0))
        return True

    if not add(simplify(e), 1):
        return None
    return [(dig, c) for dig, c in terms.values() if c != 0]


def _tiles_disjoint(origin, extents, loops) -> bool:
    """Distinct iterations of ``loops`` give boxes at least one extent apart in some dimension.

    Each box origin must be a sum of constant multiples of "digits" of the loop variables (``v``,
    ``v // d``, ``v % m``, ``(v // d) % m``: fused loops give such terms). The digits of each loop with more
    than one iteration must determine it (they tile its place values), each digit may move one dimension
    only, and per dimension the strides must form a mixed radix no finer than the box: then different
    iterations have different digit tuples and boxes that cannot overlap. A loop with a symbolic extent
    (a dynamic batch) is fine as the coarsest digit of its dimension.
    """
    loop_vars = {lp.loop_var for lp in loops}
    ext_of = {}
    for lp in loops:
        if not (isinstance(lp.min, E.IntImm) and lp.min.value == 0):
            return False
        ext_of[lp.loop_var] = lp.extent.value if isinstance(lp.extent, E.IntImm) else None
    places: dict = {}
    owner: dict = {}
    per_dim = []
    for d, o in enumerate(origin):
        terms = _digit_terms(o, loop_vars)
        if terms is None:
            return False
        dim_terms = []
        for (var, div, mod), coef in terms:
            n = ext_of[var]
            count = None if n is None else -(-n // div)  # None: unknown (symbolic), assume several
            if mod is not None:
                count = mod if count is None else min(count, mod)
            places.setdefault(var, []).append((div, div * mod if mod is not None else None))
            if count is not None and count <= 1:
                continue
            key = (id(var), div, mod)
            if key in owner:
                return False
            owner[key] = d
            dim_terms.append((abs(coef), count))
        per_dim.append(dim_terms)
    for var, n in ext_of.items():
        if n is not None and n <= 1:
            continue
        covered = 1
        for start, end in sorted(places.get(var, ()), key=lambda p: p[0]):
            if start != covered:
                return False
            covered = end
            if end is None:
                break
        if covered is not None and (n is None or covered < n):
            return False
    for d, terms in enumerate(per_dim):
        span = extents[d]
        ordered = sorted(terms, key=lambda t: t[0])
        for k, (coef, count) in enumerate(ordered):
            if coef < span:
                return False
            if count is None:
                if k != len(ordered) - 1:
                    return False
                break
            span = coef * (count - 1) + span
    return True


class _Reindex(IRMutator):
    """Point every access of ``old`` at ``new`` with ``origin`` subtracted; refresh changed blocks' regions."""

    def __init__(self, old: Buffer, new: Buffer, origin, root: S.Block, infer_regions: bool = True):
        self.old, self.new, self.origin, self.root = old, new, origin, root
        self.infer_regions = infer_regions

    def _idx(self, indices):
        return tuple(simplify(E.sub(i, o)) for i, o in zip(self._visit_child(indices), self.origin))

    def visit_BufferLoad(self, node):
        if node.buffer is self.old:
            return E.BufferLoad(self.new, self._idx(node.indices))
        return self.generic_visit(node)

    def visit_BufferStore(self, node):
        if node.buffer is self.old:
            return S.BufferStore(self.new, self.visit(node.value), self._idx(node.indices))
        return self.generic_visit(node)

    def visit_Block(self, node):
        new = self.generic_visit(node)
        if new is not node and node is not self.root and self.infer_regions:
            new = D.with_inferred_regions(new)
        return new


def _compact_one(func: PrimFunc, owner: S.Block, buf: Buffer, infer_regions: bool = True) -> PrimFunc:
    sites = _collect_sites(owner, buf)
    if not sites:
        return func
    prefix = _common_prefix(sites)
    if prefix:
        box = _box(sites, prefix, buf)
        if box is not None and _tiles_disjoint(box[0], box[1], prefix):
            origin, extents = box
            new_buf = Buffer(buf.name, [E.const(e, s.dtype) for e, s in zip(extents, buf.shape)], buf.dtype,
                             buf.scope)
            loop = prefix[-1]
            new_owner = owner.replace(alloc_buffers=tuple(b for b in owner.alloc_buffers if b is not buf))
            func = D.rebuild_block(func, owner, new_owner)
            func = _wrap_loop_body(func, loop.loop_var, new_buf)
            return func.with_body(_Reindex(buf, new_buf, origin, func.root_block, infer_regions).visit(func.body))
    box = _box(sites, [], buf)
    if box is None:
        return func
    origin, extents = box
    shape = buf.const_shape()
    if shape is not None and tuple(extents) == shape and all(isinstance(o, E.IntImm) and o.value == 0
                                                              for o in origin):
        return func
    new_buf = Buffer(buf.name, [E.const(e, s.dtype) for e, s in zip(extents, buf.shape)], buf.dtype, buf.scope)
    new_owner = owner.replace(alloc_buffers=tuple(new_buf if b is buf else b for b in owner.alloc_buffers))
    func = D.rebuild_block(func, owner, new_owner)
    return func.with_body(_Reindex(buf, new_buf, origin, func.root_block, infer_regions).visit(func.body))


def _wrap_loop_body(func: PrimFunc, loop_var: E.Var, buf: Buffer) -> PrimFunc:
    """Allocate ``buf`` in an opaque block directly under the loop (reusing one that is already there)."""
    path = find_loop(func, loop_var, "compact_buffer_allocations")
    loop = path[-1]
    body = loop.body
    if isinstance(body, S.BlockRealize) and not body.block.iter_vars and body.block.name.endswith("_alloc"):
        blk = body.block
        new = body.replace(block=blk.replace(alloc_buffers=blk.alloc_buffers + (buf,)))
    else:
        name = D.fresh_name(func, f"{loop_var.name}_alloc")
        new = S.BlockRealize((), S.TRUE, S.Block(name, (), (), (), body, None, (buf,)))
    return replace_path(func, path, loop.replace(body=new))


def compact_buffer_allocations(func: PrimFunc, infer_regions: bool = True) -> PrimFunc:
    """Shrink every ``local`` buffer to its per-iteration footprint (see the module doc for the rules).

    ``infer_regions=False`` leaves the read/write regions of the blocks it rewrites as they were (stale) and
    those of the new allocation blocks empty: lowering never reads block regions, and inferring them was
    half of this pass's time.
    """
    if not (isinstance(func.body, S.BlockRealize) and func.body.block.name == "root"):
        return func  # not in block form (already lowered): nothing to do
    todo = []
    for n in iter_stmts(func.body):
        if isinstance(n, S.Block):
            todo.extend(b for b in n.alloc_buffers if b.scope == "local")
    for buf in todo:
        owner = D.allocating_block(func, buf)
        if owner is not None:
            func = _compact_one(func, owner, buf, infer_regions)
    if not infer_regions:
        return func
    # the wrappers' regions are only known once every buffer found its place
    return func.with_body(_RefreshWrappers(func.root_block).visit(func.body))


class _RefreshWrappers(IRMutator):
    def __init__(self, root):
        self.root = root

    def visit_Block(self, node):
        new = self.generic_visit(node)
        if node is not self.root and not node.iter_vars and node.name.endswith("_alloc"):
            new = D.with_inferred_regions(new)
        return new
