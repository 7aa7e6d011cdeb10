"""cache_read / cache_write: stage a buffer through a copy in another storage scope.

``cache_read(block, i, scope)`` adds a copy block ``X_<scope>`` that copies the region ``block`` reads of
``X = block.reads[i].buffer`` into a new buffer ``X_<scope>``, placed in the block's scope right after the
last earlier writer of ``X`` (or first in the scope when nothing there writes it), and makes ``block``
read the copy. Only ``block`` is redirected (TVM redirects every reader in the scope); other readers keep
reading ``X``.

``cache_write(block, i, scope)`` makes ``block`` write a new buffer ``X_<scope>`` instead of
``X = block.writes[i].buffer`` and adds a write-back block ``X_<scope>`` right after the block's loop
nest copying the written region back to ``X``. The search then moves the write-back under a tile with
``reverse_compute_at`` (the multi-level tiling pattern); ``compact_buffer_allocations`` later shrinks the
full-size cache buffer to the tile.

Both return ``(new_func, name_of_the_new_block)``; the new buffer and block share one fresh name.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import add_int, simplify, sub_int
from ...ir.buffer import SCOPES, Buffer
from ...ir.function import PrimFunc
from ...ir.functor import substitute
from ...ir.stmt_functor import seq_items
from ..error import ScheduleError
from ..tree import enclosing_block, find_block, func_index, loops_above, map_path, replace_path, replace_path_tracked
from . import dataflow as D
from .block_kinds import reduction_var_indexes_output, region_cover_violation


def _check_index(prim: str, regions, index, block: str, what: str) -> int:
    if isinstance(index, bool) or not isinstance(index, int):
        raise ScheduleError(prim, f"{what} index must be an int, got {type(index).__name__}")
    if not 0 <= index < len(regions):
        raise ScheduleError(prim, f"{what} index {index} is out of range: block {block!r} has {len(regions)} "
                                  f"{what} buffers")
    return index


def _check_scope(prim: str, scope) -> str:
    if scope not in SCOPES:
        raise ScheduleError(prim, f"unknown storage scope {scope!r}; use one of {SCOPES}")
    return scope


def _scope_region(site: D.BlockSite, buf: Buffer, kind: str) -> list:
    """``(lo, extent)`` per dimension of what the block accesses of ``buf`` over all its loops in the scope.

    Iteration variables range over their bindings clamped to their domains (iterations outside the domain
    are predicated off), so a write-back never copies elements the block does not write.
    """
    relax, rb = D.relax_loops(loops_above(site.path), {})
    ivr = {}
    for iv, value in zip(site.block.iter_vars, site.realize.iter_values):
        dom_lo = iv.dom.min
        dom_hi = simplify(sub_int(add_int(iv.dom.min, iv.dom.extent), 1))
        r = D.interval(value, relax, rb)
        if r is None:
            ivr[iv.var] = (dom_lo, dom_hi)
        else:
            ivr[iv.var] = (D.sym_max(simplify(r[0], rb), dom_lo, rb), D.sym_min(simplify(r[1], rb), dom_hi, rb))
    reads, writes = D.infer_block_regions(site.block)
    regions = [r for r in (reads if kind == "read" else writes) if r.buffer is buf]
    out = []
    for d, full in enumerate(buf.shape):
        whole = (E.const(0, full.dtype), full)
        box = None
        for reg in regions:
            rg = reg.region[d]
            lo = D.interval(rg.min, ivr, rb)
            hi = D.interval(simplify(sub_int(add_int(rg.min, rg.extent), 1)), ivr, rb)
            if lo is None or hi is None:
                box = None
                break
            pair = (simplify(lo[0], rb), simplify(hi[1], rb))
            box = pair if box is None else (D.sym_min(box[0], pair[0], rb), D.sym_max(box[1], pair[1], rb))
        if box is None:
            out.append(whole)
            continue
        lo = D.sym_max(box[0], E.const(0, box[0].dtype), rb)
        hi = D.sym_min(box[1], simplify(sub_int(full, 1)), rb)
        ext = simplify(add_int(sub_int(hi, lo), 1))
        out.append((lo, ext) if isinstance(ext, E.IntImm) and ext.value > 0 else whole)
    return out


def _copy_nest(name: str, src: Buffer, dst: Buffer, region: list) -> S.Stmt:
    """Loops ``ax0..`` over ``region`` and a block ``dst[v] = src[v]``."""
    ivs, values, loops = [], [], []
    for d, ((lo, ext), full) in enumerate(zip(region, src.shape)):
        dt = full.dtype
        v = E.Var(f"v{d}", dt)
        ax = E.Var(f"ax{d}", dt)
        ivs.append(S.IterVar(v, S.Range(E.const(0, dt), full), "S"))
        values.append(simplify(add_int(lo, ax)))
        loops.append((ax, ext))
    idx = [iv.var for iv in ivs]
    body = S.BufferStore(dst, E.BufferLoad(src, idx), idx)
    block = D.with_inferred_regions(S.Block(name, ivs, (), (), body))
    stmt: S.Stmt = S.BlockRealize(values, S.TRUE, block)
    for ax, ext in reversed(loops):
        stmt = S.For(ax, E.const(0, ax.dtype), ext, "serial", stmt)
    return stmt


def _install(func: PrimFunc, scope_name: str, new_buf: Buffer, position: int, nest: S.Stmt,
             path=None) -> PrimFunc:
    """Allocate ``new_buf`` in the scope block and insert ``nest`` into its body (``path``: the scope's
    realize in ``func`` when the caller knows it)."""
    if path is None:
        path = find_block(func, scope_name, "cache")
    scope = path[-1].block
    items = seq_items(scope.body)
    items.insert(position, nest)
    new_scope = scope.replace(body=S.seq(items), alloc_buffers=scope.alloc_buffers + (new_buf,))
    return replace_path(func, path, path[-1].replace(block=new_scope))


class _Site:
    """What both cache primitives start from: the block (checked), the buffer cached and its scope block."""

    def __init__(self, func: PrimFunc, block: str, index, storage_scope: str, kind: str):
        self.prim = prim = f"cache_{kind}"
        self.kind = kind
        _check_scope(prim, storage_scope)
        self.path = D.block_path(func, block, prim)
        self.realize = self.path[-1]
        regions = self.realize.block.reads if kind == "read" else self.realize.block.writes
        _check_index(prim, regions, index, block, kind)
        self.buf = regions[index].buffer
        self.scope = enclosing_block(self.path)
        self.info = D.ScopeInfo(func, self.scope)
        self.me = self.info.site(self.realize)


def _redirect(func: PrimFunc, site: _Site, storage_scope: str, position: int) -> tuple[PrimFunc, str]:
    """Make the block use a new ``storage_scope`` buffer for ``site.buf`` and put the copy between the two at
    ``position`` in the scope block."""
    buf = site.buf
    name = D.fresh_name(func, f"{buf.name}_{storage_scope}")
    cache = Buffer(name, buf.shape, buf.dtype, storage_scope)
    region = _scope_region(site.me, buf, site.kind)
    new_blk = D.with_inferred_regions(substitute(site.realize.block, {}, {buf: cache}))
    func, scope_path = _replace_in_scope(func, site.path, site.realize.replace(block=new_blk), site.scope)
    src, dst = (buf, cache) if site.kind == "read" else (cache, buf)
    return _install(func, site.scope.name, cache, position, _copy_nest(name, src, dst, region), scope_path), name


def cache_read(func: PrimFunc, block: str, read_buffer_index: int, storage_scope: str) -> tuple[PrimFunc, str]:
    """Read ``block.reads[read_buffer_index].buffer`` through a copy in ``storage_scope``."""
    site = _Site(func, block, read_buffer_index, storage_scope, "read")
    prim, buf, scope, info, me = site.prim, site.buf, site.scope, site.info, site.me
    if buf in me.writes:
        raise ScheduleError(prim, f"block {block!r} also writes {buf.name!r}; cache_write is the primitive "
                                  "for buffers a block writes")
    for k, other in enumerate(info.sites):
        why = region_cover_violation(info.sites, k, buf) if buf in other.reads else None
        if why:
            raise ScheduleError(prim, f"the region cover of scope {scope.name!r} does not hold for "
                                      f"{buf.name!r}: {why}")
    items = seq_items(scope.body)
    mine = D.child_index_containing(items, me)
    position = 0
    for w in info.writers(buf, exclude=me):
        k = D.child_index_containing(items, w)
        if k == mine:
            raise ScheduleError(prim, f"block {w.name!r} writes {buf.name!r} inside the same loop nest as "
                                      f"{block!r}; the copy cannot be placed between them")
        if k < mine:
            position = max(position, k + 1)
    return _redirect(func, site, storage_scope, position)


def _replace_in_scope(func: PrimFunc, path, new, scope: S.Block):
    """``replace_path(func, path, new)`` and the new path of the realize of ``scope`` (an ancestor), or None
    when it must be looked up by name (its name is not unique: the lookup reports that)."""
    old_scope_path = D.scope_realize_path(path, scope)
    unique = scope.name not in func_index(func).duplicate_blocks
    func, mapping = replace_path_tracked(func, path, new)
    if mapping is None or old_scope_path is None or not unique:
        return func, None
    return func, map_path(old_scope_path, mapping)


def cache_write(func: PrimFunc, block: str, write_buffer_index: int, storage_scope: str) -> tuple[PrimFunc, str]:
    """Write ``block.writes[write_buffer_index].buffer`` through a buffer in ``storage_scope`` and copy it
    back in a new block placed right after the block's loop nest."""
    site = _Site(func, block, write_buffer_index, storage_scope, "write")
    prim, buf, blk, info, me = site.prim, site.buf, site.realize.block, site.info, site.me
    writers = info.writers(buf)
    if len(writers) > 1:
        raise ScheduleError(prim, f"buffer {buf.name!r} is written by {len(writers)} blocks "
                                  f"{[w.name for w in writers]}; cache_write needs a single writer")
    if buf in me.reads and blk.init is None:
        raise ScheduleError(prim, f"block {block!r} reads {buf.name!r} before writing it (no init); the cache "
                                  "would not hold the earlier values")
    if buf in me.reads and reduction_var_indexes_output(blk):
        raise ScheduleError(prim, f"block {block!r} reads {buf.name!r} where its init has not run (a reduction "
                                  "variable indexes what it writes); the cache would not hold the earlier values")
    items = seq_items(site.scope.body)
    mine = D.child_index_containing(items, me)
    for other in info.sites:
        if other is not me and D.child_index_containing(items, other) == mine and buf in (other.reads | other.writes):
            raise ScheduleError(prim, f"block {other.name!r} accesses {buf.name!r} inside the same loop nest as "
                                      f"{block!r}; the write-back cannot be placed between them")
    return _redirect(func, site, storage_scope, mine + 1)
