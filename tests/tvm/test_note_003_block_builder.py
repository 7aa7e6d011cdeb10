"""Course note 003 (MLC chapter 5, integration with machine learning frameworks), 5.3.2-5.3.3 BlockBuilder: every code block,
imports changed only. ``b<N>`` is the N-th fenced block of the note.

This chapter was written for an older Relax: its printed modules use ``Tensor(...)`` without ``R.``,
``Tensor(None, "float32", ndim = 2)``, ``R.call_tir(f, args, shape, dtype=...)``, ``meta[relay.Constant][i]``
and ``relax.nn.dense``; they are parsed as printed and run. Its first block's ``from __future__ import
annotations`` is what lets such annotations stand in a Python file, so it heads this one too.
"""
# b1
# This is needed for deferring annotation parsing in TVMScript
from __future__ import annotations

import numpy as np

from tunefarm import tvm
from tunefarm.tvm import relax
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tunefarm.tvm import te


# b9 (the functions the later blocks use)
def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


# b13
def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def old_style_vars():
    """b23"""
    A = relax.Var("A", (128, 128), relax.DynTensorType(2, "float32"))
    B = relax.Var("B", (128, 128), relax.DynTensorType(2, "float32"))
    return A, B


def test_b23_b24_b27_to_b30_block_builder_with_the_older_var_spelling(capsys):
    A, B = old_style_vars()
    # b24
    bb = relax.BlockBuilder()

    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])

    MyModule = bb.get()
    MyModule.show()
    # b27, b29
    print(type(C))
    print(isinstance(C, relax.Var))

    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == [str(relax.DataflowVar), "True"]  # the note: DataflowVar, True
    assert "R.call_tir(te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), dtype=\"float32\"))" in out
    a, b = np.random.default_rng(1).standard_normal((2, 128, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_b25_b31_the_printed_older_relax_module():
    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def te_matmul(rxplaceholder: T.Buffer[(128, 128), "float32"], rxplaceholder_1: T.Buffer[(128, 128), "float32"], matmul: T.Buffer[(128, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "te_matmul", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1, i2 in T.grid(128, 128, 128):
                with T.block("matmul"):
                    i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                    T.reads(rxplaceholder[i, k], rxplaceholder_1[k, j])
                    T.writes(matmul[i, j])
                    with T.init():
                        matmul[i, j] = T.float32(0)
                    matmul[i, j] = matmul[i, j] + rxplaceholder[i, k] * rxplaceholder_1[k, j]

        @T.prim_func
        def te_relu(rxplaceholder: T.Buffer[(128, 128), "float32"], relu: T.Buffer[(128, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "te_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(128, 128):
                with T.block("relu"):
                    i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(relu[i0_1, i1_1])
                    relu[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

        @R.function
        def main(A: Tensor((128, 128), "float32"), B: Tensor((128, 128), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv = R.call_tir(te_matmul, (A, B), (128, 128), dtype="float32")
                lv1 = R.call_tir(te_relu, (lv,), (128, 128), dtype="float32")
                gv: Tensor((128, 128), "float32") = lv1
                R.output(gv)
            return gv

    a, b = np.random.default_rng(2).standard_normal((2, 128, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_b33_b34_b35_where_the_parameters_are_given():
    A, B = old_style_vars()
    a, b = np.random.default_rng(3).standard_normal((2, 128, 128)).astype("float32")
    # b34 with b33 in its "...": parameters given at the end
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        # specify parameters in the end
        bb.emit_func_output(R, params=[A, B])
    at_end = bb.get()
    # b35: parameters given at the beginning
    bb = relax.BlockBuilder()
    # specify parameters in the beginning.
    with bb.function("main", params=[A, B]):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R)
    at_start = bb.get()
    assert at_end.script() == at_start.script()
    vm = relax.VirtualMachine(relax.build(at_start, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
