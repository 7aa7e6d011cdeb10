"""Hand-written (not sampled) matmul schedules: what an expert writes for this CPU, and the yardstick the
code generator is benchmarked with (``benchmarks/bench_codegen.py``).

All of them turn block ``"C"`` of ``C = A @ B`` (function ``"main"``) into a BLIS-style microkernel:

* a ``ti x tj`` register tile of C accumulated in a ``local`` buffer (``cache_write`` + ``reverse_compute_at``;
  lowering compacts it to the tile so LLVM keeps it in vector registers),
* rows of the tile unrolled, columns vectorized (``tj`` floats = ``tj / 8`` AVX2 registers per row), so each
  step of the k loop is ``ti`` broadcasts of A, ``tj / 8`` vector loads of B and ``ti * tj / 8`` FMAs,
* the k loop outside the register tile, the reduction init decomposed out of it.

With 4 x 16 the tile is 8 accumulators (two FMA units x four cycles of latency) plus two B vectors and one
broadcast: 11 of the 16 AVX2 registers. When rows of B are a power of two apart (128 floats = 512 B, 512
floats = 2 KB), walking a 16-column panel of B down k touches one cache set in 8 (or 32) and thrashes L1
(and L2 at 512), so both schedules first copy the panel to a contiguous ``local`` buffer (``cache_read`` +
``compute_at`` under the panel loop: a packed B panel of k x 16 floats, 8 KB at 128 and 32 KB at 512) and
reuse it for every row tile. Measured here, packing takes the 128^3 kernel from ~70% to ~85-90% of peak.
"""
from __future__ import annotations

import tunefarm


def _tile(sch: tunefarm.Schedule, ti: int, tj: int, pack_b: bool, block: str = "C"):
    """Shared structure; returns the outermost loop (to be parallelized by callers that want it)."""
    b = sch.get_block(block)
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    if pack_b:
        sch.reorder(j0, i0, k, i1, j1)
    else:
        sch.reorder(i0, j0, k, i1, j1)
    c_local = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(c_local, i0 if pack_b else j0)
    if pack_b:
        b_panel = sch.cache_read(b, 1, "local")
        sch.compute_at(b_panel, j0)
        rows, cols = sch.get_loops(b_panel)[-2:]
        sch.vectorize(cols)
        if sch.get(rows).const_extent() % 4 == 0:  # copy 4 rows per iteration: the copy is ~3% of the 128^3 run
            sch.unroll(sch.split(rows, [None, 4])[1])
    init = sch.decompose_reduction(b, k)
    sch.unroll(i1)
    sch.vectorize(j1)
    for blk in (init, c_local):
        loops = sch.get_loops(blk)
        sch.unroll(loops[-2])
        sch.vectorize(loops[-1])
    return j0 if pack_b else i0


def matmul_128_handwritten(sch: tunefarm.Schedule) -> tunefarm.Schedule:
    """128^3: a 4 x 16 register tile over a packed 128 x 16 panel of B (see the module docstring)."""
    _tile(sch, 4, 16, pack_b=True)
    return sch


def matmul_512_handwritten(sch: tunefarm.Schedule) -> tunefarm.Schedule:
    """512^3: a 4 x 16 register tile over a packed 512 x 16 panel of B (see the module docstring)."""
    _tile(sch, 4, 16, pack_b=True)
    return sch


def matmul_512_handwritten_parallel(sch: tunefarm.Schedule) -> tunefarm.Schedule:
    """``matmul_512_handwritten`` with its outermost loop (the B panels) parallel: each thread packs its own
    panels (the panel buffer is allocated inside the loop, so it is private to the thread)."""
    outer = _tile(sch, 4, 16, pack_b=True)
    sch.parallel(outer)
    return sch


def tiled_matmul(sch: tunefarm.Schedule, ti: int = 4, tj: int = 16, pack_b: bool = False,
                 parallel: bool = False) -> tunefarm.Schedule:
    """The same family with explicit parameters (tile size, packing, parallel outer loop)."""
    outer = _tile(sch, ti, tj, pack_b)
    if parallel:
        sch.parallel(outer)
    return sch
