"""Small hand-built IR programs for the reference-executor tests (built with the IR constructors only)."""
from __future__ import annotations

from tunefarm.ir import (TRUE, Block, BlockRealize, Buffer, BufferRegion, BufferStore, For, IterVar, PrimFunc,
                         Range, Var, const, wrap_root)


def loops(vars_extents, body, kind="serial"):
    for v, ext in reversed(vars_extents):
        body = For(v, 0, ext, kind, body)
    return body


def matmul_block(A, B, C, vi, vj, vk, n, m, k, name="C"):
    return Block(name, [IterVar(vi, Range(0, n), "S"), IterVar(vj, Range(0, m), "S"), IterVar(vk, Range(0, k), "R")],
                 [BufferRegion.point(A, (vi, vk)), BufferRegion.point(B, (vk, vj))],
                 [BufferRegion.point(C, (vi, vj))],
                 BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
                 BufferStore(C, const(0.0), (vi, vj)))


def matmul(n=16, m=16, k=16, kind="serial") -> PrimFunc:
    """The course's matmul: three loops around one reduction block."""
    A, B, C = Buffer("A", (n, k)), Buffer("B", (k, m)), Buffer("C", (n, m))
    i, j, kk = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    blk = matmul_block(A, B, C, vi, vj, vk, n, m, k)
    body = loops([(i, n), (j, m), (kk, k)], BlockRealize((i, j, kk), TRUE, blk), kind)
    return PrimFunc([A, B, C], wrap_root(body))


def vector_add_split(n=10, factor=4, predicate=True) -> PrimFunc:
    """``C[v] = A[v] + B[v]`` with the loop split by ``factor`` (extent rounded up, guarded by a predicate)."""
    A, B, C = Buffer("A", (n,)), Buffer("B", (n,)), Buffer("C", (n,))
    i0, i1, v = Var("i0"), Var("i1"), Var("v")
    blk = Block("C", [IterVar(v, Range(0, n), "S")], [BufferRegion.point(A, (v,)), BufferRegion.point(B, (v,))],
                [BufferRegion.point(C, (v,))], BufferStore(C, A[v] + B[v], (v,)))
    binding = i0 * factor + i1
    pred = (binding < n) if predicate else TRUE
    outer = (n + factor - 1) // factor
    body = loops([(i0, outer), (i1, factor)], BlockRealize((binding,), pred, blk))
    return PrimFunc([A, B, C], wrap_root(body))
