"""Workloads and spaces whose *legal* schedules misbehave on purpose, for the failure-status tests.

Each space samples a categorical: decision 0 is a harmless schedule, decision 1 the bad one, so a job over
it measures one good and one bad program (two distinct programs: the dedup guarantees both get measured).

- ``wrong``: a reduction whose float sum is ill-conditioned (+1e20 at k=0, -1e20 at k=1); splitting k and
  running the inner part outside reorders the sum, the small terms between the spikes are absorbed, and the
  result differs from the unscheduled program's -> ``wrong_result``.
- ``hang``: ``C[i] = exp(A)[i] + exp(A)[N-1-i]``; ``compute_at`` of the exp block under ``i`` recomputes a
  bounding box of ~N elements per iteration (N^2 exps, minutes) -> ``timeout``.
- ``build_error``: ``erf`` of float16 values, which the code generator does not support (every schedule of it
  fails to build; ``split_space`` only splits the loop two ways, ``three_way_split_space`` in 91 ways over
  ``wide_float16_erf``'s 4096 elements: more programs than a job's budget, all failing alike).
- ``segfault``: 132 inputs summed; a ``local`` cache of each input is a 64 KiB stack array, 8.4 MiB in all,
  more than the 8 MiB stack -> the worker dies of SIGSEGV -> ``worker_lost``.
"""
from __future__ import annotations

from tunefarm.ir import (Block, BlockRealize, Buffer, BufferRegion, BufferStore, FloatImm, For, IterVar, PrimFunc,
                         Range, SeqStmt, TRUE, Var, wrap_root)
from tunefarm.ir import expr as E


def _choice(sch) -> int:
    return sch.get(sch.sample_categorical(candidates=[0, 1], probs=[0.5, 0.5]))


def ill_conditioned_sum(m: int = 16, n: int = 64) -> PrimFunc:
    A = Buffer("A", (m, n))
    C = Buffer("C", (m,))
    i, k, vi, vk = Var("i"), Var("k"), Var("vi"), Var("vk")
    spike = E.select(vk.equal(0), FloatImm(1e20), E.select(vk.equal(1), FloatImm(-1e20), FloatImm(0.0)))
    blk = Block("C", [IterVar(vi, Range(0, m), "S"), IterVar(vk, Range(0, n), "R")],
                [BufferRegion.point(A, (vi, vk))], [BufferRegion.point(C, (vi,))],
                BufferStore(C, C[vi] + (spike + A[vi, vk]), (vi,)), BufferStore(C, FloatImm(0.0), (vi,)))
    return PrimFunc([A, C], wrap_root(For(i, 0, m, "serial", For(k, 0, n, "serial", BlockRealize([i, k], TRUE, blk)))))


def reorder_reduction_space(sch):
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    k0, k1 = sch.split(k, factors=[None, 4])
    if _choice(sch):
        sch.reorder(i, k1, k0)
    return sch


def recompute_workload(n: int = 1 << 17) -> PrimFunc:
    A, Bexp, C = Buffer("A", (n,)), Buffer("Bexp", (n,)), Buffer("C", (n,))
    j, i, vj, vi = Var("j"), Var("i"), Var("vj"), Var("vi")
    b1 = Block("Bexp", [IterVar(vj, Range(0, n), "S")], [BufferRegion.point(A, (vj,))],
               [BufferRegion.point(Bexp, (vj,))], BufferStore(Bexp, E.call("exp", A[vj]), (vj,)))
    b2 = Block("C", [IterVar(vi, Range(0, n), "S")], [BufferRegion.point(Bexp, (vi,)),
                                                      BufferRegion.point(Bexp, (n - 1 - vi,))],
               [BufferRegion.point(C, (vi,))], BufferStore(C, Bexp[vi] + Bexp[n - 1 - vi], (vi,)))
    body = SeqStmt([For(j, 0, n, "serial", BlockRealize([j], TRUE, b1)),
                    For(i, 0, n, "serial", BlockRealize([i], TRUE, b2))])
    return PrimFunc([A, C], wrap_root(body, [Bexp]))


def recompute_space(sch):
    if _choice(sch):
        (i,) = sch.get_loops(sch.get_block("C"))
        sch.compute_at(sch.get_block("Bexp"), i)
    return sch


def many_inputs_workload(n_inputs: int = 132, n: int = 128) -> PrimFunc:
    ins = [Buffer(f"A{k}", (n, n)) for k in range(n_inputs)]
    out = Buffer("B", (n, n))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    value = ins[0][vi, vj]
    for b in ins[1:]:
        value = value + b[vi, vj]
    blk = Block("B", [IterVar(vi, Range(0, n), "S"), IterVar(vj, Range(0, n), "S")],
                [BufferRegion.point(b, (vi, vj)) for b in ins], [BufferRegion.point(out, (vi, vj))],
                BufferStore(out, value, (vi, vj)))
    return PrimFunc(ins + [out], wrap_root(For(i, 0, n, "serial", For(j, 0, n, "serial",
                                                                         BlockRealize([i, j], TRUE, blk)))))


def stack_overflow_space(sch):
    if _choice(sch):
        block = sch.get_block("B")
        for k in range(len(sch.mod["main"].params) - 1):
            sch.cache_read(block, k, "local")
    return sch


def float16_erf_workload(n: int = 64) -> PrimFunc:
    A, B = Buffer("A", (n,), "float16"), Buffer("B", (n,), "float16")
    i, vi = Var("i"), Var("vi")
    blk = Block("B", [IterVar(vi, Range(0, n), "S")], [BufferRegion.point(A, (vi,))], [BufferRegion.point(B, (vi,))],
                BufferStore(B, E.call("erf", A[vi]), (vi,)))
    return PrimFunc([A, B], wrap_root(For(i, 0, n, "serial", BlockRealize([i], TRUE, blk))))


def split_space(sch):
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4 if _choice(sch) else 8])
    return sch


def wide_float16_erf() -> PrimFunc:
    return float16_erf_workload(4096)


def three_way_split_space(sch):
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=sch.sample_perfect_tile(i, n=3))
    return sch
