"""Schedule primitives as pure functions ``PrimFunc -> PrimFunc`` (the ``Schedule`` methods are thin wrappers).

- ``loop_transform``: split, fuse, reorder
- ``annotate``: parallel, vectorize, unroll, annotate / unannotate
- ``query``: get_loops, get_child_blocks, get_producers, get_consumers
- ``compute_location``: compute_inline, reverse_compute_inline, compute_at, reverse_compute_at
- ``cache``: cache_read, cache_write
- ``reduction``: decompose_reduction, rfactor
- ``block_kinds``: TVM's block kinds (complete, reduction) and the rules built on them (compact data flow,
  stage pipeline, region cover)

Blocks are addressed by unique name, loops by their loop ``Var``; illegal requests raise ``ScheduleError``.
"""
from . import annotate, cache, compute_location, loop_transform, query, reduction

__all__ = ["annotate", "cache", "compute_location", "loop_transform", "query", "reduction"]
