"""Schedule primitives as pure functions ``PrimFunc -> PrimFunc`` (the ``Schedule`` methods are thin wrappers).

- ``loop_transform``: split, fuse, reorder
- ``annotate``: parallel, vectorize, unroll, annotate / unannotate
- ``query``: get_loops, get_child_blocks, get_producers, get_consumers
- ``compute_location``: compute_inline, reverse_compute_inline, compute_at, reverse_compute_at
- ``cache``: cache_read, cache_write
- ``reduction``: decompose_reduction, rfactor
- ``unit_loop``: add_unit_loop
- ``blockize``: blockize (a loop's nest into an outer block)
- ``reindex_cache``: reindex_cache_read, reindex_cache_write (a cache laid out by an index map)
- ``decompose_padding``: decompose_padding, can_decompose_padding
- ``block_kinds``: TVM's block kinds (complete, reduction) and the rules built on them (compact data flow,
  stage pipeline, region cover)

Blocks are addressed by unique name, loops by their loop ``Var``; illegal requests raise ``ScheduleError``.
"""
from . import (annotate, blockize, cache, compute_location, decompose_padding, loop_transform, query, reduction,
               reindex_cache, unit_loop)

__all__ = ["annotate", "blockize", "cache", "compute_location", "decompose_padding", "loop_transform", "query",
           "reduction", "reindex_cache", "unit_loop"]
