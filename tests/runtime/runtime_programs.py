"""Small programs for runtime tests (built with the IR constructors)."""
from __future__ import annotations

from tunefarm.ir import (TRUE, Block, BlockRealize, Buffer, BufferStore, For, IterVar, PrimFunc, Range, Var,
                         const, wrap_root)


def add(n=16, dtype="float32"):
    """C = A + B over a 1-D buffer of length ``n`` (an int or a symbolic Var)."""
    A, B, C = Buffer("A", (n,), dtype), Buffer("B", (n,), dtype), Buffer("C", (n,), dtype)
    i, v = Var("i", "int64"), Var("v", "int64")
    blk = Block("C", [IterVar(v, Range(0, n), "S")], [], [], BufferStore(C, A[v] + B[v], (v,)))
    return PrimFunc([A, B, C], wrap_root(For(i, 0, n, "vectorized" if isinstance(n, int) else "serial",
                                             BlockRealize([i], TRUE, blk))), name="add")


def matmul_sym(k=8):
    """C[n, m] = A[n, k] @ B[k, m] with symbolic n and m."""
    n, m = Var("n", "int64"), Var("m", "int64")
    A, B, C = Buffer("A", (n, k)), Buffer("B", (k, m)), Buffer("C", (n, m))
    i, j, r = Var("i", "int64"), Var("j", "int64"), Var("r", "int64")
    vi, vj, vr = Var("vi", "int64"), Var("vj", "int64"), Var("vr", "int64")
    blk = Block("C", [IterVar(vi, Range(0, n), "S"), IterVar(vj, Range(0, m), "S"), IterVar(vr, Range(0, k), "R")],
                [], [], BufferStore(C, C[vi, vj] + A[vi, vr] * B[vr, vj], (vi, vj)),
                init=BufferStore(C, const(0.0), (vi, vj)))
    body = For(i, 0, n, "serial", For(j, 0, m, "serial", For(r, 0, k, "serial", BlockRealize([i, j, r], TRUE, blk))))
    return PrimFunc([A, B, C], wrap_root(body), name="matmul")
