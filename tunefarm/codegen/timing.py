"""The native timing loop: ``int64 __tf_timer(void (*entry)(void**), void** args, int64 number)``.

Timing in Python adds a ctypes call (~0.3-1 us) and interpreter jitter to every sample, which dominates
kernels of a few microseconds. This LLVM function calls a kernel's packed entry ``number`` times between two
``clock_gettime(CLOCK_MONOTONIC)`` reads and returns the elapsed nanoseconds. It takes the entry as a
function pointer, so one copy per process serves every module (``tunefarm.runtime.evaluator`` compiles it
once): kernel modules carry no timing code, which saves ~5 ms of LLVM time per compile, and the indirect
call can never be inlined, so LLVM cannot hoist work out of the loop.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .llvm_types import I32, I64, PTR, VOID, alloca, declare

CLOCK_MONOTONIC = 1  # Linux value
TIMER_SYMBOL = "__tf_timer"
_TIMESPEC = ir.LiteralStructType([I64, I64])


def _now_ns(b: ir.IRBuilder, clock_gettime: ir.Function, ts: ir.Value) -> ir.Value:
    b.call(clock_gettime, [ir.Constant(I32, CLOCK_MONOTONIC), ts])
    sec = b.load(b.gep(ts, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True, source_etype=_TIMESPEC),
                 typ=I64, align=8)
    nsec = b.load(b.gep(ts, [ir.Constant(I32, 0), ir.Constant(I32, 1)], inbounds=True, source_etype=_TIMESPEC),
                  typ=I64, align=8)
    return b.add(b.mul(sec, ir.Constant(I64, 1_000_000_000)), nsec)


def timer_module_ir() -> str:
    """LLVM IR text of a module defining ``__tf_timer(entry, args, number) -> elapsed ns``."""
    module = ir.Module(name="tunefarm_timer")
    clock_gettime = declare(module, "clock_gettime", I32, [I32, PTR], attrs=("nounwind",))
    fn = ir.Function(module, ir.FunctionType(I64, [PTR, PTR, I64]), TIMER_SYMBOL)
    entry_fn, args, number = fn.args
    start = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(start)
    ts = alloca(b, _TIMESPEC, 16, "ts")
    t0 = _now_ns(b, clock_gettime, ts)
    b.cbranch(b.icmp_signed(">", number, ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64, "i")
    i.add_incoming(ir.Constant(I64, 0), start)
    b.call(_Callee(entry_fn, ir.FunctionType(VOID, [PTR])), [args])
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, number), loop, done)
    b.position_at_end(done)
    t1 = _now_ns(b, clock_gettime, ts)
    b.ret(b.sub(t1, t0))
    return str(module)


class _Callee:
    """Lets llvmlite emit an indirect call through an opaque pointer (it wants a function type)."""

    def __init__(self, value: ir.Value, ftype: ir.FunctionType):
        self.value = value
        self.function_type = ftype
        self.type = PTR

    def get_reference(self):
        return self.value.get_reference()
