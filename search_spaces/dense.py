"""Search space for the MLP layer ``relu(x @ w.T + b)`` built by ``te.ops.dense_bias_relu``.

Blocks: ``T_matmul_NT`` (the reduction), ``T_add`` (bias) and ``relu``. The bias add is inlined into the
ReLU, the product is tiled ``SSRSRS`` and accumulated in a ``local`` buffer, and bias + ReLU are folded into
the write-back (when the schedule can fold it), so the intermediate tensors never reach memory.
"""
import tunefarm
from tunefarm.search import block_info

from search_spaces.common import accumulate_locally, reduction_block, sample_unroll, tile_ssrsrs, vectorize_innermost


def dense_bias_relu_space(sch: tunefarm.Schedule):
    dense = reduction_block(sch, "T_matmul_NT")
    sch.compute_inline(sch.get_block("T_add"))
    s_levels, _ = tile_ssrsrs(sch, dense)
    writeback = accumulate_locally(sch, dense, s_levels[1][-1], epilogues=["relu"])
    outer = sch.fuse(*s_levels[0], *s_levels[1])
    sch.parallel(outer)
    sch.vectorize(s_levels[3][-1])
    sample_unroll(sch, outer)
    sch.decompose_reduction(dense, sch.get_loops(dense)[1])
    vectorize_innermost(sch, writeback)
    if "relu" in block_info.leaf_blocks(sch.mod["main"]):  # ReLU could not be folded: vectorize it alone
        vectorize_innermost(sch, sch.get_block("relu"))
    return sch
