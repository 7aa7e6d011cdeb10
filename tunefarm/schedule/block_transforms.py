"""The primitives that restructure blocks rather than loops: ``add_unit_loop``, ``blockize``,
``reindex_cache_read`` / ``reindex_cache_write`` and ``decompose_padding`` (a mixin of ``Schedule``: same thin
shape, resolve random variables, call a pure primitive, record the instruction)."""
from __future__ import annotations

from .error import ScheduleError
from .primitives import blockize as _blockize
from .primitives import decompose_padding as _padding
from .primitives import reindex_cache as _reindex
from .primitives import unit_loop as _unit_loop
from .random_variables import BlockRV, LoopRV


class BlockTransforms:
    """Methods of ``Schedule`` (which provides ``_block``, ``_loop``, ``_block_and_loop``, ``_split_off_block``,
    ``_set``, ``_new``, ``_record``...)."""

    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """A loop of extent 1 directly above a block (or a block name) or a loop."""
        prim = "add_unit_loop"
        if isinstance(block_or_loop, LoopRV):
            fname, var = self._loop(block_or_loop, prim)
            func, new_var = _unit_loop.add_unit_loop(self._funcs[fname], loop=var)
        else:
            block_or_loop, fname, name = self._block(block_or_loop, prim)
            func, new_var = _unit_loop.add_unit_loop(self._funcs[fname], block=name)
        self._set(fname, func)
        rv = self._new(LoopRV, (fname, new_var))
        self._record("AddUnitLoop", (block_or_loop,), (), (rv,))
        return rv

    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRV:
        """Wrap the loop nest under ``target`` (a LoopRV) and its block in a new outer block."""
        prim = "blockize"
        if not isinstance(target, LoopRV):
            raise ScheduleError(prim, "only a loop can be blockized here (a list of blocks is not supported)")
        fname, var = self._loop(target, prim)
        pui = self._flag(preserve_unit_iters, prim, "preserve_unit_iters")
        func, name = _blockize.blockize(self._funcs[fname], var, pui)
        self._set(fname, func)
        rv = self._new(BlockRV, (fname, name))
        self._record("Blockize", (target,), (pui,), (rv,))
        return rv

    def _reindex_cache(self, kind: str, prim: str, block, index, storage_scope: str, index_map) -> BlockRV:
        block, fname, name = self._block(block, prim)
        index = self._int(index, prim, "the buffer index")
        if not isinstance(storage_scope, str):
            raise ScheduleError(prim, f"storage_scope must be a string, got {storage_scope!r}")
        func, new_name, text = _reindex.reindex_cache(self._funcs[fname], name, index, storage_scope, index_map,
                                                      write=kind == "ReindexCacheWrite")
        self._set(fname, func)
        rv = self._new(BlockRV, (fname, new_name))
        self._record(kind, (block,), (index, storage_scope, text), (rv,))
        return rv

    def reindex_cache_read(self, block, read_buffer_index: int, storage_scope: str, index_map) -> BlockRV:
        """Copy what ``block`` reads of a buffer, one element per iteration, into a cache laid out by
        ``index_map`` (a function of the block's iteration variables, or its text)."""
        return self._reindex_cache("ReindexCacheRead", "reindex_cache_read", block, read_buffer_index,
                                   storage_scope, index_map)

    def reindex_cache_write(self, block, write_buffer_index: int, storage_scope: str, index_map) -> BlockRV:
        return self._reindex_cache("ReindexCacheWrite", "reindex_cache_write", block, write_buffer_index,
                                   storage_scope, index_map)

    def decompose_padding(self, block, loop) -> BlockRV:
        """Split a padding block at ``loop`` into a constant fill and a copy of the valid region."""
        return self._split_off_block("DecomposePadding", "decompose_padding", block, loop,
                                     _padding.decompose_padding)

    def can_decompose_padding(self, block, loop) -> bool:
        """Whether ``decompose_padding(block, loop)`` applies and has padding to split off (not recorded)."""
        _, fname, name = self._block(block, "can_decompose_padding")
        _, var = self._loop(loop, "can_decompose_padding")
        return _padding.can_decompose_padding(self._funcs[fname], name, var)
