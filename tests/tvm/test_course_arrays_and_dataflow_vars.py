"""Course-style code (imports changed only) that relies on two TVM behaviours: ``tvm.nd.array`` copies its
source, and what ``bb.emit_te`` binds inside ``bb.dataflow()`` is a ``relax.DataflowVar``, which is a
``relax.Var``."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.tvm import relax, te
from tunefarm.tvm.script import tir as T


@tvm.script.ir_module
class TwoOutputs:
    @T.prim_func
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(64):
            with T.block("C"):
                vi = T.axis.spatial(64, i)
                C[vi] = A[vi] + T.float32(1)


def test_two_outputs_made_from_one_source_array():
    x = np.random.default_rng(0).standard_normal(64).astype("float32")
    z = np.zeros(64, "float32")
    rt_lib = tvm.build(TwoOutputs, target="llvm")
    a_nd, b_nd, c_nd = [tvm.nd.array(a) for a in (x, z, z)]
    rt_lib["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(b_nd.numpy(), x * 2)
    np.testing.assert_allclose(c_nd.numpy(), x + 1)
    assert (z == 0).all()  # the source arrays are untouched


def test_the_same_ndarray_twice_is_still_refused():
    x, z = np.ones(64, "float32"), np.zeros(64, "float32")
    rt_lib = tvm.build(TwoOutputs, target="llvm")
    a_nd, c_nd = tvm.nd.array(x), tvm.nd.array(z)
    for _ in range(20):  # past the warm-up: the native call path refuses it too, with the same message
        rt_lib["main"](a_nd, c_nd, tvm.nd.array(z))
    with pytest.raises(ValueError, match="output parameter 'B' overlaps the memory of parameter 'C'"):
        rt_lib["main"](a_nd, c_nd, c_nd)


def test_course_timing_on_ndarrays_reads_the_copies():
    a_np = np.random.default_rng(1).standard_normal(64).astype("float32")
    a_nd = tvm.nd.array(a_np)
    b_nd = tvm.nd.empty((64,), dtype="float32")
    c_nd = tvm.nd.empty((64,), dtype="float32")
    rt_lib = tvm.build(TwoOutputs, target="llvm")
    f_timer = rt_lib.time_evaluator("main", tvm.cpu())
    assert f_timer(a_nd, b_nd, c_nd).mean > 0
    a_np[:] = 0  # changing the source after the copy changes nothing the module reads
    rt_lib["main"](a_nd, b_nd, c_nd)
    assert np.abs(b_nd.numpy()).max() > 0
    np.testing.assert_allclose(c_nd.numpy(), a_nd.numpy() + 1)


def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def test_emit_te_inside_dataflow_is_a_dataflow_var(capsys):
    A = relax.Var("A", relax.TensorStructInfo((16, 16), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((16, 16), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    MyModule = bb.get()
    print(type(C))
    print(isinstance(C, relax.Var))
    type_line, var_line = capsys.readouterr().out.splitlines()
    assert type_line == str(relax.DataflowVar) and type_line.endswith(".DataflowVar'>")
    assert var_line == "True"
    assert type(C) is relax.DataflowVar and issubclass(relax.DataflowVar, relax.Var)
    # the block's output is visible after it: a Var, not a DataflowVar (so are the parameters)
    assert isinstance(R, relax.Var) and not isinstance(R, relax.DataflowVar)
    assert not isinstance(A, relax.DataflowVar)
    a, b = np.random.default_rng(2).standard_normal((2, 16, 16)).astype("float32")
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(a), tvm.nd.array(b)).numpy(), np.maximum(a @ b, 0),
                               rtol=1e-4, atol=1e-4)


def test_emit_outside_dataflow_is_a_var():
    A = relax.Var("A", relax.TensorStructInfo((4, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", params=[A]):
        C = bb.emit_te(te_relu, A)
        bb.emit_func_output(C)
    assert isinstance(C, relax.Var) and not isinstance(C, relax.DataflowVar)
    a = np.random.default_rng(3).standard_normal((4, 4)).astype("float32")
    vm = relax.VirtualMachine(relax.build(bb.get(), target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(a)).numpy(), np.maximum(a, 0))
