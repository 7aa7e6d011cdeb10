"""Search spaces for matrix multiplication ``C = A @ B`` (block ``"C"`` of function ``"main"``).

``stochastic_schedule_mm`` is the MLC course's function exactly as written there (only the import differs):
it samples the tiling of ``j``, moves the inner part innermost and decomposes the reduction. It spans five
programs for a 128-wide ``j`` (inner factor 1, 2, 4, 8 or 16).

``multi_level_tiling_mm`` is the richer space an expert would write for a CPU: ``SSRSRS`` tiling of i, j, k,
accumulation in a ``local`` buffer written back per outer tile, the outer tiles fused into a parallel loop,
the inner j tile vectorized and a sampled unroll depth.
"""
import tunefarm

from search_spaces.common import reduction_block, sample_unroll, vectorize_innermost


def stochastic_schedule_mm(sch: tunefarm.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def multi_level_tiling_mm(sch: tunefarm.Schedule):
    block_C = reduction_block(sch, "C")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2, i3 = sch.split(i, factors=sch.sample_perfect_tile(i, n=4, max_innermost_factor=16))
    j0, j1, j2, j3 = sch.split(j, factors=sch.sample_perfect_tile(j, n=4, max_innermost_factor=64))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2, max_innermost_factor=16))
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    C_local = sch.cache_write(block_C, 0, "local")
    sch.reverse_compute_at(C_local, j1)
    outer = sch.fuse(i0, j0, i1, j1)
    sch.parallel(outer)
    sch.vectorize(j3)
    sample_unroll(sch, outer)
    sch.decompose_reduction(block_C, k0)
    vectorize_innermost(sch, C_local)
    return sch
