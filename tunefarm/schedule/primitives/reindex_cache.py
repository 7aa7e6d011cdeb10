"""``reindex_cache_read`` / ``reindex_cache_write``: a cache stage whose layout is given by an index map.

Where ``cache_read`` copies a buffer region as it is, these copy exactly the elements one block accesses, at
one element per iteration of that block, into a cache indexed by ``index_map(block iteration variables)``
(e.g. a transposed or packed layout for the block's inner loops). As TVM's: the access must be a single
point per iteration, the map must use every iteration variable the access uses (one element per cache slot);
the copy block iterates over those variables, under copies of the block's loops that bind them, placed at the
innermost loop that holds the block and the buffer's producers (read) or consumers (write) (the root block
when there are none), right before
(read) or after (write) the block's subtree there. The cache is allocated in the root block.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import const_bound
from ...ir.buffer import SCOPES, Buffer
from ...ir.function import PrimFunc
from ...ir.functor import IRMutator, collect_vars, substitute
from ...ir.regions import infer_block_regions
from ...ir.stmt_functor import seq_items
from ..error import ScheduleError
from ..index_map import index_map_text
from .dataflow import fresh_name
from ..tree import all_block_realizes, find_block, replace_path
from .query import blocks_under


class _Redirect(IRMutator):
    """Accesses of ``buf`` become accesses of ``cache`` at ``indices``."""

    def __init__(self, buf: Buffer, cache: Buffer, indices: list):
        self.buf, self.cache, self.indices = buf, cache, tuple(indices)

    def visit_BufferLoad(self, e):
        return E.BufferLoad(self.cache, self.indices) if e.buffer is self.buf else self.generic_visit(e)

    def visit_BufferStore(self, s):
        value = self.visit(s.value)
        return S.BufferStore(self.cache, value, self.indices) if s.buffer is self.buf else s.replace(value=value)


def _point(block: S.Block, regions, index: int, what: str, prim: str):
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(regions):
        raise ScheduleError(prim, f"block {block.name!r} has {len(regions)} {what} buffer(s); index {index!r} is "
                                  "out of range")
    region = regions[index]
    if blocks_under(block.body) or any(const_bound(r.extent) != (1, 1) for r in region.region):
        raise ScheduleError(prim, f"block {block.name!r} does not access {region.buffer.name!r} at a single point "
                                  "per iteration")
    return region.buffer, [r.min for r in region.region]


def _cache_buffer(func: PrimFunc, buf: Buffer, scope: str, indices: list, ivs, access: list, prim: str) -> Buffer:
    used = {v for a in access for v in collect_vars(a)} & {iv.var for iv in ivs}
    mapped = {v for e in indices for v in collect_vars(e)}
    if used - mapped or mapped - used:
        raise ScheduleError(prim, f"the index map must use exactly the iteration variables the access to "
                                  f"{buf.name!r} uses ({sorted(v.name for v in used)}), got "
                                  f"{sorted(v.name for v in mapped)}")
    bounds = {}
    for iv in ivs:
        lo, ext = const_bound(iv.dom.min), const_bound(iv.dom.extent)
        if lo is not None and ext is not None:
            bounds[iv.var] = (lo[0], lo[0] + ext[0] - 1)
    shape = []
    for e in indices:
        b = const_bound(e, bounds)
        if b is None or b[0] < 0:
            raise ScheduleError(prim, f"the cache index {e} has no constant, non-negative range")
        shape.append(E.const(b[1] + 1, e.dtype))
    if scope not in SCOPES:
        raise ScheduleError(prim, f"unknown storage scope {scope!r}; use one of {SCOPES}")
    return Buffer(fresh_name(func, f"{buf.name}_{scope}"), shape, buf.dtype, scope)


def _copy_nest(path, lca_depth: int, realize: S.BlockRealize, ivs: list, body_of, name: str):
    """The copy block over the iteration variables ``ivs`` of ``realize``, under copies of the loops below the
    insertion point that bind them."""
    values = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    vmap = {iv.var: iv.var.copy_with_name() for iv in ivs}
    loops = [n for n in path[lca_depth + 1:] if isinstance(n, S.For)]
    needed = {v for iv in ivs for v in collect_vars(values[iv.var])}
    lmap = {lp.loop_var: lp.loop_var.copy_with_name() for lp in loops if lp.loop_var in needed}
    block = S.Block(name, [S.IterVar(vmap[iv.var], iv.dom, "S") for iv in ivs], body=body_of(vmap))
    reads, writes = infer_block_regions(block)
    stmt = S.BlockRealize([substitute(values[iv.var], lmap) for iv in ivs], E.const(True, "bool"),
                          block.replace(reads=reads, writes=writes))
    for lp in reversed(loops):
        if lp.loop_var in lmap:
            stmt = S.For(lmap[lp.loop_var], lp.min, lp.extent, lp.kind, stmt, lp.annotations)
    return stmt


def _lca_depth(path, others) -> int:
    """The depth on ``path`` of the innermost loop or block above its end that also holds every path of
    ``others``; with no others (a parameter read, an output written), the root block."""
    if not others:
        return 1
    depth = len(path) - 2
    for other in others:
        k = 0
        while k < min(len(path), len(other)) - 1 and path[k + 1] is other[k + 1]:
            k += 1
        depth = min(depth, k)
    while not isinstance(path[depth], (S.For, S.Block)):
        depth -= 1
    return depth


def _insert(func: PrimFunc, path, depth: int, stmt, after: bool) -> PrimFunc:
    holder = path[depth]
    items = seq_items(holder.body)
    pos = next(i for i, item in enumerate(items) if any(item is n for n in path[depth + 1:]))
    items.insert(pos + 1 if after else pos, stmt)
    return replace_path(func, path[:depth + 1], holder.replace(body=S.SeqStmt(tuple(items))))


def _with_root_alloc(func: PrimFunc, buf: Buffer) -> PrimFunc:
    root = func.body.block
    return func.with_body(func.body.replace(block=root.replace(alloc_buffers=root.alloc_buffers + (buf,))))


def reindex_cache(func: PrimFunc, block_name: str, index: int, scope: str, index_map, write: bool):
    """Long because read and write share every step but the direction of the copy and where it goes.

    Returns ``(func, copy block name, index map text)``."""
    prim = "reindex_cache_write" if write else "reindex_cache_read"
    path = find_block(func, block_name, prim)
    realize = path[-1]
    block = realize.block
    buf, access = _point(block, block.writes if write else block.reads, index, "written" if write else "read", prim)
    text, indices = index_map_text(index_map, [iv.var for iv in block.iter_vars], prim)
    cache = _cache_buffer(func, buf, scope, indices, block.iter_vars, access, prim)
    used = {v for a in access for v in collect_vars(a)}
    ivs = [iv for iv in block.iter_vars if iv.var in used]
    new_block = _Redirect(buf, cache, indices).visit(block)
    reads, writes = infer_block_regions(new_block)
    func = replace_path(func, path, realize.replace(block=new_block.replace(reads=reads, writes=writes)))
    path = find_block(func, block_name, prim)
    others = [find_block(func, r.block.name, prim) for r in all_block_realizes(func)
              if r.block.name != block_name and r is not func.body
              and any(reg.buffer is buf for reg in (r.block.reads if write else r.block.writes))]
    depth = _lca_depth(path, others)

    def body_of(vmap):
        cached = E.BufferLoad(cache, tuple(substitute(i, vmap) for i in indices))
        original = tuple(substitute(a, vmap) for a in access)
        if write:
            return S.BufferStore(buf, cached, original)
        return S.BufferStore(cache, E.BufferLoad(buf, original), tuple(cached.indices))

    copy = _copy_nest(path, depth, path[-1], ivs, body_of, cache.name)
    func = _insert(func, path, depth, copy, after=write)
    return _with_root_alloc(func, cache), cache.name, text
