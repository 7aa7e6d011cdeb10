"""The operator library against numpy, run through the reference executor."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import te
from tunefarm.ir import stmt as S
from tunefarm.reference import interpret
from tunefarm.schedule.tree import iter_paths
from tunefarm.te import ops

rng = np.random.default_rng(2)


def rand(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def run(inputs, output, arrays, out_shape=None, dtype="float32"):
    """Build ``inputs -> output``, interpret it on ``arrays`` and return the output array."""
    f = te.create_prim_func(list(inputs) + [output])
    shape = out_shape if out_shape is not None else tuple(output.shape)
    out = np.zeros(shape, dtype)
    interpret(f, *arrays, out)
    return out


def block_names(f):
    """Names of the blocks under the root block, in program order."""
    return [p[-1].block.name for p in iter_paths(f.root_block.body) if isinstance(p[-1], S.BlockRealize)]


# ---------------------------------------------------------------------------------------------- matmul / dense
def test_matmul():
    A, B = te.placeholder((7, 5), name="A"), te.placeholder((5, 3), name="B")
    a, b = rand(7, 5), rand(5, 3)
    np.testing.assert_allclose(run([A, B], ops.matmul(A, B), [a, b]), a @ b, rtol=1e-5, atol=1e-6)


def test_batched_matmul_broadcasts_leading_dims():
    A, B = te.placeholder((2, 1, 4, 3), name="A"), te.placeholder((5, 3, 6), name="B")
    C = ops.matmul(A, B)
    assert C.shape == (2, 5, 4, 6)
    a, b = rand(2, 1, 4, 3), rand(5, 3, 6)
    np.testing.assert_allclose(run([A, B], C, [a, b]), a @ b, rtol=1e-5, atol=1e-6)


def test_matmul_dimension_mismatch():
    with pytest.raises(ValueError, match="reduction dimensions"):
        ops.matmul(te.placeholder((4, 5)), te.placeholder((4, 5)))
    with pytest.raises(ValueError, match="at least 2"):
        ops.matmul(te.placeholder((4,)), te.placeholder((4, 5)))


def test_dense_with_and_without_bias():
    x, w, b = te.placeholder((4, 6), name="x"), te.placeholder((3, 6), name="w"), te.placeholder((3,), name="b")
    xa, wa, ba = rand(4, 6), rand(3, 6), rand(3)
    np.testing.assert_allclose(run([x, w], ops.dense(x, w), [xa, wa]), xa @ wa.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run([x, w, b], ops.dense(x, w, b), [xa, wa, ba]), xa @ wa.T + ba,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="bias"):
        ops.dense(x, w, te.placeholder((4,)))


def test_dense_bias_relu_is_one_fused_program():
    x, w, b = te.placeholder((1, 8), name="x"), te.placeholder((5, 8), name="w"), te.placeholder((5,), name="b")
    y = ops.dense_bias_relu(x, w, b)
    f = te.create_prim_func([x, w, b, y])
    assert block_names(f) == ["T_matmul_NT", "T_add", "relu"]
    assert [buf.name for buf in f.root_block.alloc_buffers] == ["T_matmul_NT", "T_add"]
    xa, wa, ba = rand(1, 8), rand(5, 8), rand(5)
    out = np.zeros((1, 5), "float32")
    interpret(f, xa, wa, ba, out)
    np.testing.assert_allclose(out, np.maximum(xa @ wa.T + ba, 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [1, 3])
def test_symbolic_batch_dense_add_relu(rows):
    n = te.var("n", "int64")
    x = te.placeholder((n, 12), name="x")
    w, b = te.placeholder((4, 12), name="w"), te.placeholder((4,), name="b")
    y = ops.relu(ops.add(ops.dense(x, w), b))
    assert y.shape[0] is n and y.shape[1] == 4
    f = te.create_prim_func([x, w, b, y])
    assert f.symbolic_vars() == [n]
    xa, wa, ba = rand(rows, 12), rand(4, 12), rand(4)
    out = np.zeros((rows, 4), "float32")
    interpret(f, xa, wa, ba, out)
    np.testing.assert_allclose(out, np.maximum(xa @ wa.T + ba, 0), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("sa,sb", [((1, 16), (16,)), ((4, 1), (1, 5)), ((3, 4), (3, 4)), ((2, 1, 3), (4, 1)),
                                   ((6,), ())])
@pytest.mark.parametrize("op,ref", [(ops.add, np.add), (ops.subtract, np.subtract), (ops.multiply, np.multiply),
                                    (ops.maximum, np.maximum)])
def test_broadcast_binary(sa, sb, op, ref):
    A, B = te.placeholder(sa, name="A"), te.placeholder(sb, name="B")
    a, b = rand(*sa), rand(*sb)
    want = ref(a, b)
    C = op(A, B)
    assert C.shape == want.shape
    np.testing.assert_array_equal(run([A, B], C, [a, b]), want)


def test_tensor_operators_and_scalars():
    A, B = te.placeholder((3, 4), name="A"), te.placeholder((4,), name="B")
    a, b = rand(3, 4), rand(4)
    np.testing.assert_array_equal(run([A, B], A + B, [a, b]), a + b)
    np.testing.assert_array_equal(run([A], A * 2.0, [a]), a * np.float32(2))
    np.testing.assert_array_equal(run([A], 1.0 - A, [a]), np.float32(1) - a)
    np.testing.assert_allclose(run([A, B], A / B, [a, b]), a / b, rtol=1e-6)


def test_broadcast_mismatch_is_rejected():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ops.add(te.placeholder((3, 4)), te.placeholder((5,)))


def test_integer_tensors_keep_their_dtype():
    A, B = te.placeholder((5,), "int32", name="A"), te.placeholder((5,), "int32", name="B")
    C = ops.add(A, B)
    assert C.dtype == "int32"
    a, b = np.arange(5, dtype="int32"), np.arange(5, dtype="int32") * 3
    np.testing.assert_array_equal(run([A, B], C, [a, b], dtype="int32"), a + b)


@pytest.mark.parametrize("op,ref", [(ops.relu, lambda v: np.maximum(v, 0)), (ops.exp, np.exp),
                                    (ops.tanh, np.tanh), (ops.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
                                    (ops.negative, np.negative)])
def test_unary(op, ref):
    X = te.placeholder((3, 5), name="X")
    x = rand(3, 5)
    np.testing.assert_allclose(run([X], op(X), [x]), ref(x).astype("float32"), rtol=2e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------- nn
def conv2d_ref(x, w, stride, padding, dilation=(1, 1)):
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, h, wd = xp.shape
    k, _, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, k, oh, ow), "float64")
    for ry in range(kh):
        for rx in range(kw):
            patch = xp[:, :, ry * dh: ry * dh + sh * (oh - 1) + 1: sh, rx * dw: rx * dw + sw * (ow - 1) + 1: sw]
            out += np.einsum("nchw,kc->nkhw", patch.astype("float64"), w[:, :, ry, rx].astype("float64"))
    return out


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (1, 1, 1), (2, 1, 1), ((2, 1), (0, 2), 1),
                                                     (1, 2, 2)])
def test_conv2d(stride, padding, dilation):
    X, W = te.placeholder((2, 3, 7, 6), name="data"), te.placeholder((4, 3, 3, 3), name="weight")
    Y = ops.conv2d(X, W, stride=stride, padding=padding, dilation=dilation)
    x, w = rand(2, 3, 7, 6), rand(4, 3, 3, 3)
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    want = conv2d_ref(x, w, pair(stride), pair(padding), pair(dilation))
    assert Y.shape == want.shape
    np.testing.assert_allclose(run([X, W], Y, [x, w]), want, rtol=1e-4, atol=1e-5)


def test_conv2d_padding_is_a_separate_in_bounds_block():
    X, W = te.placeholder((1, 2, 5, 5), name="data"), te.placeholder((3, 2, 3, 3), name="weight")
    f = te.create_prim_func([X, W, ops.conv2d(X, W, padding=1)])
    assert block_names(f) == ["pad_temp", "conv2d_nchw"]
    assert [b.name for b in f.root_block.alloc_buffers] == ["pad_temp"]
    no_pad = te.create_prim_func([X, W, ops.conv2d(X, W)])
    assert block_names(no_pad) == ["conv2d_nchw"]
    with pytest.raises(ValueError, match="channels"):
        ops.conv2d(X, te.placeholder((3, 4, 3, 3)))


@pytest.mark.parametrize("pool,stride,padding", [(2, None, 0), (3, 2, 1), ((2, 3), (1, 2), (1, 1))])
def test_max_pool2d(pool, stride, padding):
    X = te.placeholder((2, 3, 7, 8), name="data")
    Y = ops.max_pool2d(X, pool, stride, padding)
    x = rand(2, 3, 7, 8) - 5  # negative: a zero pad value would show up in the maxima
    kh, kw = (pool, pool) if isinstance(pool, int) else pool
    st = (kh, kw) if stride is None else ((stride, stride) if isinstance(stride, int) else stride)
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
    oh = (xp.shape[2] - kh) // st[0] + 1
    ow = (xp.shape[3] - kw) // st[1] + 1
    want = np.full((2, 3, oh, ow), -np.inf, "float32")
    for ry in range(kh):
        for rx in range(kw):
            want = np.maximum(want, xp[:, :, ry: ry + st[0] * (oh - 1) + 1: st[0], rx: rx + st[1] * (ow - 1) + 1: st[1]])
    assert Y.shape == want.shape
    np.testing.assert_array_equal(run([X], Y, [x]), want)


# ---------------------------------------------------------------------------------------------- transform
def test_flatten_keeps_symbolic_batch():
    n = te.var("n", "int64")
    X = te.placeholder((n, 2, 3, 4), name="X")
    Y = ops.flatten(X)
    assert Y.shape[0] is n and Y.shape[1] == 24
    x = rand(3, 2, 3, 4)
    np.testing.assert_array_equal(run([X], Y, [x], out_shape=(3, 24)), x.reshape(3, 24))


@pytest.mark.parametrize("src,dst", [((2, 3, 4), (4, -1)), ((6, 4), (2, 3, 4)), ((24,), (2, 2, 6)),
                                     ((2, 12), (2, 3, 4))])
def test_reshape(src, dst):
    X = te.placeholder(src, name="X")
    x = rand(*src)
    want = x.reshape(dst)
    Y = ops.reshape(X, dst)
    assert Y.shape == want.shape
    np.testing.assert_array_equal(run([X], Y, [x]), want)


def test_reshape_rejects_size_mismatch():
    with pytest.raises(ValueError, match="cannot reshape"):
        ops.reshape(te.placeholder((2, 3)), (4, 2))


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)])
def test_transpose(axes):
    X = te.placeholder((2, 3, 4), name="X")
    x = rand(2, 3, 4)
    want = np.transpose(x, axes)
    np.testing.assert_array_equal(run([X], ops.transpose(X, axes), [x]), want)


def test_transpose_rejects_non_permutation():
    with pytest.raises(ValueError, match="permutation"):
        ops.transpose(te.placeholder((2, 3)), (0, 0))
