"""The whole-model design: several PrimFuncs in one LLVM module, called through their typed functions by a
caller-added entry point, compiled as one object."""
from __future__ import annotations

import ctypes

import llvmlite.ir as ir
import numpy as np

from codegen_programs import loops, realize
from tunefarm.codegen import artifact_from_ir, lower_and_emit
from tunefarm.ir import Buffer, BufferStore, PrimFunc, Var, wrap_root
from tunefarm.runtime import Module
from tunefarm.target import Target


def scale(name, factor):
    n = Var("n", "int64")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    body = loops([("i", n, "serial")], lambda i: realize("B", [("S", n, i)],
                                                        lambda v: BufferStore(B, A[v] * factor, (v,))))
    return PrimFunc([A, B], wrap_root(body), name=name)


def test_caller_added_entry_calls_typed_functions_of_two_prim_funcs():
    mir = lower_and_emit({"times2": scale("times2", 2.0), "times3": scale("times3", 3.0)}, Target())
    infos = {f.name: f for f in mir.functions}
    m = mir.module
    i64, ptr = ir.IntType(64), ir.PointerType()
    # void model(ptr x, ptr tmp, ptr y, i64 n): tmp = 2 * x; y = 3 * tmp
    model = ir.Function(m, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, i64]), "model")
    b = ir.IRBuilder(model.append_basic_block())
    x, tmp, y, n = model.args
    b.call(m.globals[infos["times2"].compute_symbol], [x, tmp, n])
    b.call(m.globals[infos["times3"].compute_symbol], [tmp, y, n])
    b.ret_void()
    mod = Module.from_artifact(artifact_from_ir(mir, Target()))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        mod.symbol_address("model"))
    xs = np.arange(10, dtype="float32")
    t, ys = np.zeros(10, "float32"), np.zeros(10, "float32")
    fn(xs.ctypes.data, t.ctypes.data, ys.ctypes.data, 10)
    np.testing.assert_array_equal(ys, xs * 6)
    # the per-function packed entries are still there and checked
    out = np.zeros(10, "float32")
    mod["times3"](xs, out)
    np.testing.assert_array_equal(out, xs * 3)
