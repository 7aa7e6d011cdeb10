"""Search space for elementwise programs (``add``, ``relu``, their fusions): one flat parallel vector loop.

Producers are inlined, then every remaining block's loops are fused, split in three (outer parallel, middle,
inner vector lanes of at most 64) with sampled factors, and the middle loop gets a sampled unroll depth.
"""
import tunefarm
from tunefarm.search import block_info

from search_spaces.common import sample_unroll


def elementwise_space(sch: tunefarm.Schedule):
    func = sch.mod["main"]
    for name in block_info.leaf_blocks(func):
        if block_info.is_elementwise_producer(sch.mod["main"], name):
            sch.compute_inline(sch.get_block(name))
    for name in block_info.leaf_blocks(sch.mod["main"]):
        block = sch.get_block(name)
        loops = sch.get_loops(block)
        flat = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        outer, middle, inner = sch.split(flat, factors=sch.sample_perfect_tile(flat, n=3, max_innermost_factor=64))
        sch.parallel(outer)
        sch.vectorize(inner)
        sample_unroll(sch, middle)
    return sch
