"""``parallel`` loops outlined and run on libgomp's native thread team.

The loop body moves to a new function ``body(ptr noalias bufs..., i64 vars..., i64 begin, i64 end)``; a
``worker(void* data)`` unpacks the captured values from a struct, takes its contiguous share of the
iterations (``omp_get_thread_num`` of ``omp_get_num_threads``) and calls it; the original place calls
``GOMP_parallel(worker, &data, num_threads, 0)``. ``num_threads`` is the target's ``num_cores`` (capped by a
constant trip count), never the environment (``OMP_NUM_THREADS`` is ignored because the count is explicit).
A ``GOMP_parallel`` region costs about 2 us here, against about 20 us for a Python thread pool.

Parallel loops nested inside a parallel region run serially; with ``num_cores == 1`` parallel loops are plain
serial loops and the module does not need libgomp at all. Allocations inside the loop belong to ``body`` and
are therefore per thread.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.functor import FreeVarVisitor
from .llvm_types import I32, I64, PTR, VOID, alloca, declare


class _Captures(FreeVarVisitor):
    """Variables and buffers a loop uses that are defined outside it, in first-use order."""

    def __init__(self):
        super().__init__()
        self.vars: dict = {}
        self.buffers: dict = {}
        self.allocated: set = set()

    def free(self, v: E.Var):
        self.vars.setdefault(v, None)

    def visit_Allocate(self, s: S.Allocate):
        self.allocated.add(s.buffer)
        for d in s.buffer.shape:
            self.visit(d)
        self.visit(s.body)

    def visit_BufferLoad(self, node: E.BufferLoad):
        self.buffers.setdefault(node.buffer, None)
        super().visit_BufferLoad(node)

    def visit_BufferStore(self, node: S.BufferStore):
        self.buffers.setdefault(node.buffer, None)
        super().visit_BufferStore(node)


def thread_count(fe, loop: S.For) -> int:
    n = fe.target.num_cores
    ext = loop.const_extent()
    if ext is not None:
        n = min(n, ext)
    return n


def emit_parallel(fe, loop: S.For) -> bool:
    """Outline ``loop`` from FunctionEmitter ``fe``; False means "run it serially" (one thread)."""
    nthreads = thread_count(fe, loop)
    if nthreads <= 1:
        return False
    cap = _Captures()
    cap.bound.add(loop.loop_var)
    cap.visit(loop.body)
    vars_ = [v for v in cap.vars if v is not loop.loop_var]
    bufs = [b for b in cap.buffers if b not in cap.allocated]
    owner = fe.owner
    module = owner.module

    # body(bufs..., vars..., begin, end): the loop over a sub-range, with noalias buffers
    body_type = ir.FunctionType(VOID, [PTR] * len(bufs) + [I64] * len(vars_) + [I64, I64])
    body_fn = ir.Function(module, body_type, owner.fresh_name(f"{fe.fn.name}.par"))
    body_fn.linkage = "internal"
    body_fn.attributes.add("nounwind")
    child = type(fe)(owner, body_fn, in_parallel=True)  # a FunctionEmitter (llvm_codegen imports this module)
    for arg, buf in zip(body_fn.args, bufs):
        arg.add_attribute("noalias")
        child.buffers[buf] = arg
        if buf in fe.slack_buffers:
            child.slack_buffers.add(buf)
    for arg, v in zip(body_fn.args[len(bufs):], vars_):
        child.env[v] = arg
        child.entry_vars.add(v)
        if v in fe.bounds:
            child.bounds[v] = fe.bounds[v]
    begin_arg, end_arg = body_fn.args[-2], body_fn.args[-1]
    child.counted_loop(loop.loop_var, begin_arg, end_arg, lambda: child.visit(loop.body), fe.loop_bound(loop))
    child.finish()

    # the captured values, packed where the loop was
    fields = [PTR] * len(bufs) + [I64] * len(vars_) + [I64, I64]
    struct = ir.LiteralStructType(fields)
    with fe.at_entry():
        data = alloca(fe.builder, struct, 16, "par.data")
    b = fe.builder
    lo = fe.typed(loop.min, "int64")
    ext = fe.typed(loop.extent, "int64")
    values = [fe.buffers[x] for x in bufs] + [fe.env[v] for v in vars_] + [lo, ext]
    for i, val in enumerate(values):
        b.store(val, b.gep(data, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True, source_etype=struct))

    # worker(data): my share of [lo, lo + ext)
    worker = ir.Function(module, ir.FunctionType(VOID, [PTR]), owner.fresh_name(f"{fe.fn.name}.worker"))
    worker.linkage = "internal"
    worker.attributes.add("nounwind")
    wb = ir.IRBuilder(worker.append_basic_block("entry"))
    loaded = []
    for i, t in enumerate(fields):
        slot = wb.gep(worker.args[0], [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True,
                      source_etype=struct)
        loaded.append(wb.load(slot, typ=t, align=8))
    w_lo, w_ext = loaded[-2], loaded[-1]
    tid = wb.sext(wb.call(declare(module, "omp_get_thread_num", I32, [], attrs=("nounwind",)), []), I64)
    nth = wb.sext(wb.call(declare(module, "omp_get_num_threads", I32, [], attrs=("nounwind",)), []), I64)
    start = wb.add(w_lo, wb.sdiv(wb.mul(w_ext, tid), nth))
    stop = wb.add(w_lo, wb.sdiv(wb.mul(w_ext, wb.add(tid, ir.Constant(I64, 1))), nth))
    wb.call(body_fn, loaded[:-2] + [start, stop])
    wb.ret_void()

    gomp = declare(module, "GOMP_parallel", VOID, [PTR, PTR, I32, I32])
    b.call(gomp, [worker, data, ir.Constant(I32, nthreads), ir.Constant(I32, 0)])
    owner.uses_gomp = True
    return True
