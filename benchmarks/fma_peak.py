"""The machine's measured single-core float32 peak: an FMA-throughput microkernel generated in LLVM IR.

``peak(n)`` runs ``chains`` independent vector FMA chains (``acc = fma(acc, x, y)``) ``n`` times; with at
least (FMA units x FMA latency) chains the loop is throughput-bound, so flops/second is the core's peak.
The vector width comes from the target (8 floats on AVX2, 16 on AVX-512).
"""
from __future__ import annotations

import ctypes
import time

import llvmlite.ir as ir

from tunefarm.codegen.llvm_compile import compile_ir
from tunefarm.runtime.jit import LoadedObject
from tunefarm.target import Target

I64 = ir.IntType(64)
F32 = ir.FloatType()


def fma_kernel_ir(lanes: int, chains: int) -> str:
    vt = ir.VectorType(F32, lanes)
    m = ir.Module(name="fma_peak")
    fn = ir.Function(m, ir.FunctionType(F32, [I64]), "fma_peak")
    fma = ir.Function(m, ir.FunctionType(vt, [vt, vt, vt]), f"llvm.fma.v{lanes}f32")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    accs = []
    for k in range(chains):
        p = b.phi(vt)
        p.add_incoming(ir.Constant(vt, [1e-3 * k] * lanes), entry)
        accs.append(p)
    x = ir.Constant(vt, [0.999999] * lanes)
    y = ir.Constant(vt, [1e-7] * lanes)
    new = [b.call(fma, [a, x, y]) for a in accs]
    for p, v in zip(accs, new):
        p.add_incoming(v, loop)
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[0]), loop, done)
    b.position_at_end(done)
    total = new[0]
    for v in new[1:]:
        total = b.fadd(total, v)
    b.ret(b.extract_element(total, ir.Constant(ir.IntType(32), 0)))
    return str(m)


class FmaPeak:
    def __init__(self, target: Target | None = None, chains: int = 12):
        target = target or Target.host()
        self.lanes = target.vector_bits // 32
        self.chains = chains
        code = compile_ir(fma_kernel_ir(self.lanes, chains), target, keep_ll=False)
        self._loaded = LoadedObject(code.object, target.cpu, target.feature_string)
        self._fn = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64)(self._loaded.address("fma_peak"))

    def gflops(self, iterations: int = 20_000_000) -> float:
        t0 = time.perf_counter()
        self._fn(iterations)
        dt = time.perf_counter() - t0
        return iterations * self.chains * self.lanes * 2 / dt / 1e9


if __name__ == "__main__":
    p = FmaPeak()
    runs = sorted(p.gflops() for _ in range(15))
    print(f"fp32 FMA peak, 1 core: median {runs[len(runs) // 2]:.1f} GFLOP/s, best {runs[-1]:.1f} GFLOP/s")
