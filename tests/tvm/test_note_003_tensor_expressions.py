"""Course note 003 (MLC chapter 5, integration with machine learning frameworks), 5.3.1 tensor expressions: every code block,
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
import pytest

from tunefarm import tvm
from tunefarm.tvm.ir.module import IRModule
from tunefarm.tvm.script import tir as T
from tunefarm.ir.structural import assert_structural_equal

# b3
from tunefarm.tvm import te

# b4
A = te.placeholder((128, 128), name="A", dtype="float32")
B = te.placeholder((128, 128), name="B", dtype="float32")


# b9
def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


# b10
C = te_matmul(A, B)


# b13
def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def run(func, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    outs = [np.zeros(tuple(int(d) for d in p.const_shape()), "float32") for p in func.params[len(shapes):]]
    tvm.build(func, target="llvm")["main"](*args, *outs)
    return args, outs


@pytest.mark.torch
def test_b2_the_torch_imports():
    import torch
    import torch.nn as nn
    from torch import fx
    from torch.nn import functional as F

    assert torch.relu and nn.Linear and fx.symbolic_trace and F.relu
    assert IRModule is tvm.IRModule


def test_b4_to_b8_placeholders():
    print(type(A))
    assert type(A) is te.Tensor
    assert list(A.shape) == [128, 128] and A.dtype == "float32"


def test_b11_b12_matmul_prim_func_as_printed(capsys):
    te.create_prim_func([A, B, C]).show()
    assert "def main(A: T.Buffer((128, 128), \"float32\")" in capsys.readouterr().out

    # b12
    @T.prim_func
    def func(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], matmul: T.Buffer[(128, 128), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # body
        # with T.block("root")
        for i0, i1, i2 in T.grid(128, 128, 128):
            with T.block("matmul"):
                i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                T.reads(A[i, k], B[k, j])
                T.writes(matmul[i, j])
                with T.init():
                    matmul[i, j] = T.float32(0)
                matmul[i, j] = matmul[i, j] + A[i, k] * B[k, j]

    assert_structural_equal(te.create_prim_func([A, B, C]), func)
    (a, b), (c,) = run(func, (128, 128), (128, 128))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_b14_b15_relu_of_a_vector_as_printed():
    X1 = te.placeholder((10,), name="X1", dtype="float32")
    Y1 = te_relu(X1)
    te.create_prim_func([X1, Y1]).show()

    # b15
    @T.prim_func
    def func(X1: T.Buffer[10, "float32"], relu: T.Buffer[10, "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # body
        # with T.block("root")
        for i0 in T.serial(10):
            with T.block("relu"):
                i0_1 = T.axis.spatial(10, i0)
                T.reads(X1[i0_1])
                T.writes(relu[i0_1])
                relu[i0_1] = T.max(X1[i0_1], T.float32(0))

    assert_structural_equal(te.create_prim_func([X1, Y1]), func)
    (x,), (y,) = run(func, (10,))
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_b16_b17_relu_of_a_matrix_as_printed():
    X2 = te.placeholder((10, 20), name="X1", dtype="float32")
    Y2 = te_relu(X2)
    te.create_prim_func([X2, Y2]).show()

    # b17
    @T.prim_func
    def func(X1: T.Buffer[(10, 20), "float32"], relu: T.Buffer[(10, 20), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # body
        # with T.block("root")
        for i0, i1 in T.grid(10, 20):
            with T.block("relu"):
                i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                T.reads(X1[i0_1, i1_1])
                T.writes(relu[i0_1, i1_1])
                relu[i0_1, i1_1] = T.max(X1[i0_1, i1_1], T.float32(0))

    assert_structural_equal(te.create_prim_func([X2, Y2]), func)
    (x,), (y,) = run(func, (10, 20))
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_b18_to_b22_fused_matmul_relu_as_printed():
    # b18
    C = te_matmul(A, B)
    D = te_relu(C)
    # b19
    te.create_prim_func([A, B, D]).show()

    # b20
    @T.prim_func
    def func(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], relu: T.Buffer[(128, 128), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # body
        # with T.block("root")
        matmul = T.alloc_buffer([128, 128], dtype="float32")
        for i0, i1, i2 in T.grid(128, 128, 128):
            with T.block("matmul"):
                i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                T.reads(A[i, k], B[k, j])
                T.writes(matmul[i, j])
                with T.init():
                    matmul[i, j] = T.float32(0)
                matmul[i, j] = matmul[i, j] + A[i, k] * B[k, j]
        for i0, i1 in T.grid(128, 128):
            with T.block("relu"):
                i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                T.reads(matmul[i0_1, i1_1])
                T.writes(relu[i0_1, i1_1])
                relu[i0_1, i1_1] = T.max(matmul[i0_1, i1_1], T.float32(0))

    assert_structural_equal(te.create_prim_func([A, B, D]), func)
    # b21
    te.create_prim_func([A, B, C, D]).show()

    # b22
    @T.prim_func
    def func2(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], matmul: T.Buffer[(128, 128), "float32"], relu: T.Buffer[(128, 128), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # body
        # with T.block("root")
        for i0, i1, i2 in T.grid(128, 128, 128):
            with T.block("matmul"):
                i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                T.reads(A[i, k], B[k, j])
                T.writes(matmul[i, j])
                with T.init():
                    matmul[i, j] = T.float32(0)
                matmul[i, j] = matmul[i, j] + A[i, k] * B[k, j]
        for i0, i1 in T.grid(128, 128):
            with T.block("relu"):
                i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                T.reads(matmul[i0_1, i1_1])
                T.writes(relu[i0_1, i1_1])
                relu[i0_1, i1_1] = T.max(matmul[i0_1, i1_1], T.float32(0))

    assert_structural_equal(te.create_prim_func([A, B, C, D]), func2)
    (a, b), (d,) = run(func, (128, 128), (128, 128))
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    (a, b), (c, d) = run(func2, (128, 128), (128, 128))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(d, np.maximum(c, 0))
