"""estimate_flop: multiply-add counts 2, index arithmetic and padding count 0, symbolic dims need sizes."""
from __future__ import annotations

import pytest

from tunefarm import te
from tunefarm.ir import IRModule
from tunefarm.te import ops


def test_matmul_128_cubed():
    A, B = te.placeholder((128, 128), name="A"), te.placeholder((128, 128), name="B")
    assert te.estimate_flop(te.create_prim_func([A, B, ops.matmul(A, B)])) == 2 * 128 ** 3


def test_fused_matmul_relu_adds_one_op_per_output():
    A, B = te.placeholder((64, 32), name="A"), te.placeholder((32, 16), name="B")
    f = te.create_prim_func([A, B, ops.relu(ops.matmul(A, B))])
    assert te.estimate_flop(f) == 2 * 64 * 32 * 16 + 64 * 16


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1), ((1, 2), (2, 0))])
def test_conv2d_formula(stride, padding):
    n, c, h, w, k, kh, kw = 2, 3, 14, 12, 8, 3, 5
    X, W = te.placeholder((n, c, h, w), name="x"), te.placeholder((k, c, kh, kw), name="w")
    Y = ops.conv2d(X, W, stride=stride, padding=padding)
    oh, ow = Y.shape[2], Y.shape[3]
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    assert (oh, ow) == ((h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1)
    # the pad block (selects and index math only) contributes nothing
    assert te.estimate_flop(te.create_prim_func([X, W, Y])) == 2 * n * k * oh * ow * c * kh * kw


def test_symbolic_dims_need_sizes():
    m = te.var("n", "int64")
    x, w = te.placeholder((m, 784), name="x"), te.placeholder((128, 784), name="w")
    f = te.create_prim_func([x, w, ops.dense(x, w)])
    with pytest.raises(ValueError, match="symbolic extent.*dims="):
        te.estimate_flop(f)
    assert te.estimate_flop(f, dims={"n": 4}) == 2 * 4 * 128 * 784
    assert te.estimate_flop(f, dims={m: 1}) == 2 * 128 * 784
    with pytest.raises(ValueError, match="no symbolic dimension 'batch'"):
        te.estimate_flop(f, dims={"batch": 2})


def test_module_sums_functions_and_intrinsics_count_one():
    X = te.placeholder((10,), name="X")
    f1 = te.create_prim_func([X, ops.exp(X)])
    f2 = te.create_prim_func([X, ops.relu(X)])
    assert te.estimate_flop(f1) == 10
    assert te.estimate_flop(IRModule({"a": f1, "b": f2})) == 20
    with pytest.raises(TypeError, match="PrimFunc"):
        te.estimate_flop("f")
