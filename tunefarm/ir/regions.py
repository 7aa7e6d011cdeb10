"""Infer a block's read and write regions from the loads and stores in its body.

TVMScript lets users leave out ``T.reads`` / ``T.writes``; the te front end and the schedule primitives
rebuild blocks whose regions change. All of them call ``infer_block_regions`` so that every block in the
system follows one rule (TVM's ``GetBlockReadWriteRegion``):

* every load / store below the block contributes the region it touches, expressed in the block's own
  iteration variables: loop variables of loops *inside* the block are relaxed over their ranges, and nested
  blocks contribute their declared regions (iteration variables replaced by their bindings, then relaxed);
* regions of one buffer are joined per dimension (exact when the bounds differ by constants, otherwise the
  whole dimension: conservative, never wrong);
* buffers allocated inside the block (its ``alloc_buffers``, nested blocks' allocations, ``Allocate``) are
  not part of its interface and are left out;
* a block with an ``init`` (a reduction) does not list the buffers it writes among its reads, so the
  course's matmul reads ``A, B`` and writes ``Y`` exactly as TVM prints it.

Buffers keep their order of first access; the index expressions of point accesses are kept as written.
"""
from __future__ import annotations

from . import expr as E
from . import stmt as S
from .arith import (add_int, affine_coefficients, const_bound, expr_key, mul_int, simplified_int, simplify,
                    sub_int)
from .buffer import Buffer
from .dtype import is_float
from .functor import collect_vars, substitute, uses_var
from .memo import NodeCache
from .stmt_functor import StmtFunctor


_REGIONS = NodeCache("regions.infer_block_regions", 2048)


def infer_block_regions(block: S.Block) -> tuple[tuple[S.BufferRegion, ...], tuple[S.BufferRegion, ...]]:
    """``(reads, writes)`` of ``block`` computed from its body and init (declared regions are ignored).

    Cached on what the answer depends on -- the block's body, init and allocations, compared by identity:
    IR nodes are immutable, so the same three objects always give the same regions. Schedule primitives ask
    again for blocks they did not touch, and for copies of a block that differ only in declared regions,
    annotations or bindings."""
    key = (block.body, block.init, block.alloc_buffers)
    hit = _REGIONS.get(key)
    if hit is None:
        hit = _REGIONS.put(key, _infer(block))
    return hit


def _infer(block: S.Block):
    collector = _AccessCollector()
    collector.local.update(block.alloc_buffers)
    if block.init is not None:
        collector.visit(block.init)
    collector.visit(block.body)
    written = set(collector.writes)
    excluded = collector.local | (written if block.init is not None else set())
    reads = tuple(_region(b, dims) for b, dims in collector.reads.items() if b not in excluded)
    writes = tuple(_region(b, dims) for b, dims in collector.writes.items() if b not in collector.local)
    return reads, writes


# -----------------------------------------------------------------------------------------------------------
class _Bounds:
    """Inclusive bounds ``[lo, hi]`` of one dimension of an access, as expressions."""

    __slots__ = ("lo", "hi", "point")

    def __init__(self, lo, hi, point: bool):
        self.lo = lo
        self.hi = hi
        self.point = point  # lo is hi: an unrelaxed index kept as written


class _AccessCollector(StmtFunctor):
    def __init__(self):
        self.reads: dict[Buffer, list] = {}
        self.writes: dict[Buffer, list] = {}
        self.local: set[Buffer] = set()
        self.relax: list[tuple[E.Var, E.PrimExpr, E.PrimExpr]] = []  # (var, min, extent), outermost first

    # ------------------------------------------------------------------ statements
    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self.expr(s.value)
        for i in s.indices:
            self.expr(i)
        self.access(self.writes, s.buffer, s.indices)

    def visit_SeqStmt(self, s: S.SeqStmt) -> None:
        for x in s.seq:
            self.visit(x)

    def visit_For(self, s: S.For) -> None:
        self.expr(s.min)
        self.expr(s.extent)
        self.relax.append((s.loop_var, s.min, s.extent))
        self.visit(s.body)
        self.relax.pop()

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        self.expr(s.condition)
        self.visit(s.then_case)
        self.visit(s.else_case)

    def visit_Evaluate(self, s: S.Evaluate) -> None:
        self.expr(s.value)

    def visit_Allocate(self, s: S.Allocate) -> None:
        self.local.add(s.buffer)
        self.visit(s.body)

    def visit_BlockRealize(self, s: S.BlockRealize) -> None:
        self.nested_block(s)

    def visit_Block(self, s: S.Block) -> None:
        self.nested_block(S.BlockRealize([iv.var for iv in s.iter_vars], S.TRUE, s))

    def generic_visit(self, s) -> None:
        raise TypeError(f"infer_block_regions: unexpected statement {type(s).__name__}")

    def nested_block(self, r: S.BlockRealize) -> None:
        for v in r.iter_values:
            self.expr(v)
        self.expr(r.predicate)
        inner = r.block
        self.local.update(inner.alloc_buffers)
        reads, writes = inner.reads, inner.writes
        vmap = {iv.var: v for iv, v in zip(inner.iter_vars, r.iter_values)}
        for table, regions in ((self.reads, reads), (self.writes, writes)):
            for br in regions:
                dims = []
                for rg in br.region:
                    lo = substitute(rg.min, vmap)
                    hi = substitute(sub_int(add_int(rg.min, rg.extent), E.const(1, rg.extent.dtype)), vmap)
                    dims.append((lo, hi))
                self.add_bounds(table, br.buffer, dims)

    # ------------------------------------------------------------------ expressions
    def expr(self, e) -> None:
        t = type(e)
        if t is E.Binary:
            self.expr(e.a)
            self.expr(e.b)
            return
        if t is E.Var or t is E.IntImm:
            return
        if e is None or isinstance(e, (E.Var, E.IntImm, E.FloatImm)):
            return
        if isinstance(e, E.BufferLoad):
            for i in e.indices:
                self.expr(i)
            self.access(self.reads, e.buffer, e.indices)
            return
        for f in e._fields:
            child = getattr(e, f)
            if isinstance(child, tuple):
                for c in child:
                    self.expr(c)
            else:
                self.expr(child)

    # ------------------------------------------------------------------ regions
    def access(self, table: dict, buf: Buffer, indices) -> None:
        self.add_bounds(table, buf, [(i, None) for i in indices])

    def add_bounds(self, table: dict, buf: Buffer, dims) -> None:
        new = []
        for d, (lo, hi) in enumerate(dims):
            new.append(self.relax_dim(buf, d, lo, hi))
        old = table.get(buf)
        if old is None:
            table[buf] = new
        else:
            table[buf] = [_join(buf, d, a, b) for d, (a, b) in enumerate(zip(old, new))]

    def relax_dim(self, buf: Buffer, d: int, lo, hi) -> _Bounds:
        """Bounds of one index (``hi is None``: a point) with the loops inside the block relaxed."""
        point = hi is None
        if point:
            hi = lo
        if not self.relax:
            return _Bounds(lo, hi, point)
        relaxed = {v for v, _, _ in self.relax}
        if not (uses_var(lo, relaxed) or uses_var(hi, relaxed)):
            return _Bounds(lo, hi, point)
        rlo = _relax(lo, self.relax, lower=True)
        rhi = _relax(hi, self.relax, lower=False)
        if rlo is None or rhi is None:
            return _full(buf, d)
        return _Bounds(rlo, rhi, False)


def _uses(e, var) -> bool:
    return uses_var(e, {var})


def _relax(e, relax: list, lower: bool):
    """Smallest (``lower``) or largest value of ``e`` over the relaxed loop variables, or None."""
    for var, vmin, extent in reversed(relax):  # innermost first: inner ranges may use outer loop variables
        if not _uses(e, var):
            continue
        split = affine_coefficients(e, [var])
        if split is None:
            return _relax_by_constants(e, relax, lower)
        coefs, rest = split
        c = coefs.get(var, 0)
        vmax = sub_int(add_int(vmin, extent), E.const(1, extent.dtype))
        pick = vmin if (c > 0) == lower else vmax
        e = simplify(add_int(rest, mul_int(E.const(c, e.dtype), pick)))
    return e


def _relax_by_constants(e, relax: list, lower: bool):
    """Bounds of a non-affine index when every variable in it is a loop with constant range."""
    bounds = {}
    for var, vmin, extent in relax:
        if isinstance(vmin, E.IntImm) and isinstance(extent, E.IntImm) and extent.value > 0:
            bounds[var] = (vmin.value, vmin.value + extent.value - 1)
    if any(v not in bounds for v in collect_vars(e)):
        return None
    b = const_bound(e, bounds)
    if b is None:
        return None
    return E.const(b[0] if lower else b[1], e.dtype)


def _full(buf: Buffer, d: int) -> _Bounds:
    ext = buf.shape[d]
    return _Bounds(E.const(0, ext.dtype), simplify(sub_int(ext, E.const(1, ext.dtype))), False)


def _const_diff(a, b) -> int | None:
    if a is b:
        return 0
    return simplified_int(sub_int(a, b))


def _join(buf: Buffer, d: int, a: _Bounds, b: _Bounds) -> _Bounds:
    if a.point and b.point and same_expr(a.lo, b.lo):
        return a
    dlo = _const_diff(a.lo, b.lo)
    dhi = _const_diff(a.hi, b.hi)
    if dlo is None or dhi is None:
        return _full(buf, d)
    lo = a.lo if dlo <= 0 else b.lo
    hi = a.hi if dhi >= 0 else b.hi
    if lo is hi or (a.point and b.point and dlo == 0 and dhi == 0):
        return _Bounds(lo, lo, a.point and b.point)
    return _Bounds(lo, hi, False)


def same_expr(a, b) -> bool:
    """The same node, or structurally equal (``expr_key``): no simplification is tried."""
    return a is b or expr_key(a) == expr_key(b)


def _unit_range(lo) -> S.Range:
    """``S.Range(lo, E.const(1, lo.dtype))`` (``lo`` is an expression, so the constructor converts nothing)."""
    r = _NEW(S.Range)
    r.min = lo
    r.extent = E.FloatImm(1.0, lo.dtype) if is_float(lo.dtype) else E.IntImm(1, lo.dtype)
    return r


_NEW = object.__new__


def _region(buf: Buffer, dims: list) -> S.BufferRegion:
    ranges = []
    for b in dims:
        if b.point or b.lo is b.hi:
            ranges.append(_unit_range(b.lo) if isinstance(b.lo, E.PrimExpr) else S.Range(b.lo, E.const(1, b.lo.dtype)))
            continue
        ext = simplify(add_int(sub_int(b.hi, b.lo), E.const(1, b.lo.dtype)))
        if isinstance(ext, E.IntImm) and ext.dtype != b.lo.dtype:
            ext = E.const(ext.value, b.lo.dtype)
        if isinstance(ext, E.IntImm) and ext.value == 1:
            ranges.append(S.Range(b.lo, E.const(1, b.lo.dtype)))
        else:
            ranges.append(S.Range(b.lo, ext))
    return S.BufferRegion(buf, tuple(ranges))
