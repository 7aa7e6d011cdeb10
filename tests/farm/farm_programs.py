"""Workloads and traces for the farm tests: a good matmul, its tiled trace, and programs that fail for real.

- ``oob_func``: reads ``A[i * 100000000]``, gigabytes past the buffer -> SIGSEGV in JIT code;
- ``hang_func``: a loop of 10**12 iterations with a loop-carried float chain (cannot be folded);
- ``wrong_func``: the matmul with a store of a wrong expression (``+ 1``), checked against the right one.
"""
from __future__ import annotations

from tunefarm import te
from tunefarm.ir import (TRUE, Block, BlockRealize, Buffer, BufferRegion, BufferStore, For, IterVar, PrimFunc,
                         Range, Var, wrap_root)
from tunefarm.ir.serialize import to_json
from tunefarm.ir.structural import workload_key
from tunefarm.farm import MeasureInput
from tunefarm.schedule import Schedule, Trace
from tunefarm.target import Target

HOST = str(Target.host())
EMPTY_TRACE = Trace().as_json()


def matmul_func(n: int = 32, name: str = "C"):
    A = te.placeholder((n, n), "float32", "A")
    B = te.placeholder((n, n), "float32", "B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name=name)
    return te.create_prim_func([A, B, C])


def add_func(n: int = 32):
    A = te.placeholder((n,), "float32", "A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return te.create_prim_func([A, B])


def tiled_trace(func, factors=(None, 8), block="C") -> dict:
    """split i and j by ``factors`` and reorder: a legal schedule whose program differs from the naive one."""
    sch = Schedule(func)
    b = sch.get_block(block)
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, list(factors))
    j0, j1 = sch.split(j, list(factors))
    sch.reorder(i0, j0, k, i1, j1)
    return sch.trace.as_json()


def _one_loop_func(name: str, extent: int, value_of, dtype_index: str = "int64"):
    """``for i in range(extent): B[i % 16] = value_of(A, B, i)`` wrapped in a block, built by hand."""
    A = Buffer("A", (16,), "float32")
    B = Buffer("B", (16,), "float32")
    i = Var("i", dtype_index)
    vi = Var("vi", dtype_index)
    store = BufferStore(B, value_of(A, B, vi), (vi % 16,))
    block = Block(name, (IterVar(vi, Range(0, extent) if dtype_index == "int32" else
                                 Range(_c(0, dtype_index), _c(extent, dtype_index)), "S"),),
                  reads=(BufferRegion.full(A), BufferRegion.full(B)), writes=(BufferRegion.full(B),), body=store)
    loop = For(i, _c(0, dtype_index), _c(extent, dtype_index), "serial", BlockRealize((i,), TRUE, block))
    return PrimFunc((A, B), wrap_root(loop))


def _c(v, dtype):
    from tunefarm.ir import const

    return const(v, dtype)


def oob_func():
    return _one_loop_func("oob", 16, lambda A, B, i: A[i * 100000000] + B[i % 16])


def hang_func():
    return _one_loop_func("spin", 10 ** 12, lambda A, B, i: B[i % 16] * 0.5 + A[i % 16])


def wrong_matmul_func(n: int = 32):
    A = te.placeholder((n, n), "float32", "A")
    B = te.placeholder((n, n), "float32", "B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j] + 1.0, axis=k), name="C")
    return te.create_prim_func([A, B, C])


def candidate(func, trace=None, timeout_s: float = 20.0, **kw) -> MeasureInput:
    return MeasureInput(workload_key(func), to_json(func), trace if trace is not None else EMPTY_TRACE, HOST,
                     timeout_s=timeout_s, **kw)
