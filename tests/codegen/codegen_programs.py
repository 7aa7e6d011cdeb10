"""Hand-built tensor IR programs for code generator tests (what scripts and schedules will produce).

Each builder returns a PrimFunc plus a numpy reference function. They cover the shapes lowering must handle
until the script parser and schedule primitives land: reductions with init, tiled loops with a ``local``
accumulator (full-size, as ``cache_write`` leaves it), vectorized/unrolled/parallel loops, predicates of
non-divisible splits, symbolic dimensions. ``nodes(stmt, cls)`` finds statements in what lowering returns.
"""
from __future__ import annotations

from tunefarm.ir import (TRUE, Block, BlockRealize, Buffer, BufferStore, For, IterVar, PrimFunc, Range, Var,
                         const, wrap_root)
from tunefarm.ir import stmt as S
from tunefarm.ir.regions import infer_block_regions


def realize(name, iters, body, init=None, predicate=TRUE, alloc=(), annotations=None):
    """``iters``: list of (kind "S"/"R", extent, binding expr); ``body``/``init``: fn(*block vars) -> Stmt."""
    vs = [Var(f"v{name}{k}") for k in range(len(iters))]
    ivs = [IterVar(v, Range(0, ext), kind) for v, (kind, ext, _) in zip(vs, iters)]
    blk = Block(name, ivs, [], [], body(*vs), init(*vs) if init else None, alloc, annotations)
    reads, writes = infer_block_regions(blk)
    blk = blk.replace(reads=reads, writes=writes)
    return BlockRealize([b for (_, _, b) in iters], predicate, blk)


def loops(spec, inner):
    """``spec``: list of (name, extent, kind); ``inner``: fn(*loop vars) -> Stmt. Outermost first."""
    vs = [Var(n) for n, _, _ in spec]
    stmt = inner(*vs)
    for v, (_, ext, kind) in reversed(list(zip(vs, spec))):
        stmt = For(v, 0, ext, kind, stmt)
    return stmt


def matmul_naive(n=32, m=24, k=16, dtype="float32"):
    A, B, C = Buffer("A", (n, k), dtype), Buffer("B", (k, m), dtype), Buffer("C", (n, m), dtype)
    body = loops([("i", n, "serial"), ("j", m, "serial"), ("k", k, "serial")], lambda i, j, kk: realize(
        "C", [("S", n, i), ("S", m, j), ("R", k, kk)],
        lambda vi, vj, vk: BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=lambda vi, vj, vk: BufferStore(C, const(0, dtype), (vi, vj))))
    return PrimFunc([A, B, C], wrap_root(body), name="matmul"), lambda a, b: a @ b


def matmul_tiled(n=64, m=64, k=64, ti=4, tj=16, kinds=("serial", "serial"), inner="vectorized",
                 unroll_rows=True, dtype="float32", name="matmul_tiled", ko_split=None, j_outer=False):
    """Register-tiled matmul: C_local (ti x tj, local) accumulates over k, then is written back to C.

    Shaped like cache_write(local) + reverse_compute_at + decompose_reduction: the accumulator is allocated
    full-size in the root block, and lowering's compaction shrinks it to the tile.
    """
    A, B, C = Buffer("A", (n, k), dtype), Buffer("B", (k, m), dtype), Buffer("C", (n, m), dtype)
    CL = Buffer("C_local", (n, m), dtype, "local")
    row_kind = "unrolled" if unroll_rows else "serial"

    def tile(io, jo):
        init = loops([("ii0", ti, row_kind), ("ji0", tj, inner)], lambda ii, ji: realize(
            "C_init", [("S", n, io * ti + ii), ("S", m, jo * tj + ji)],
            lambda vi, vj: BufferStore(CL, const(0, dtype), (vi, vj))))

        def update_body(kk):
            return loops([("ii", ti, row_kind), ("ji", tj, inner)], lambda ii, ji: realize(
                "C_update", [("S", n, io * ti + ii), ("S", m, jo * tj + ji), ("R", k, kk)],
                lambda vi, vj, vk: BufferStore(
                    CL, CL[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))))

        if ko_split:
            update = loops([("ko", k // ko_split, "serial"), ("ki", ko_split, "serial")],
                           lambda ko, ki: update_body(ko * ko_split + ki))
        else:
            update = loops([("k", k, "serial")], update_body)
        write = loops([("ax0", ti, row_kind), ("ax1", tj, inner)], lambda a0, a1: realize(
            "C_write", [("S", n, io * ti + a0), ("S", m, jo * tj + a1)],
            lambda vi, vj: BufferStore(C, CL[vi, vj], (vi, vj))))
        from tunefarm.ir import seq
        return seq(init, update, write)

    if j_outer:
        body = loops([("jo", m // tj, kinds[0]), ("io", n // ti, kinds[1])], lambda jo, io: tile(io, jo))
    else:
        body = loops([("io", n // ti, kinds[0]), ("jo", m // tj, kinds[1])], tile)
    return PrimFunc([A, B, C], wrap_root(body, [CL]), name=name), lambda a, b: a @ b


def nodes(stmt, cls):
    """Every ``cls`` statement in a lowered body (through sequences, loops, allocations and branches), pre-order."""
    out = []

    def walk(s):
        if s is None:
            return
        if isinstance(s, cls):
            out.append(s)
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                walk(x)
        elif isinstance(s, (S.For, S.Allocate)):
            walk(s.body)
        elif isinstance(s, S.IfThenElse):
            walk(s.then_case)
            walk(s.else_case)

    walk(stmt)
    return out
