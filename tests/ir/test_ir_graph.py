"""The graph IR's own rules: tensor types, the ops' type rules, and a kernel call checked against its PrimFunc."""
from __future__ import annotations

import pytest

from tunefarm.ir import graph_ops as ops
from tunefarm.ir.call_signature import SignatureError, check_signature
from tunefarm.ir.expr import IntImm, Var
from tunefarm.ir.graph_expr import Constant, GraphVar, TensorType
from tunefarm.ir.graph_ops import ShapeError
from tunefarm.script import T


def var(name, shape, dtype="float32") -> GraphVar:
    return GraphVar(name, TensorType(shape, dtype))


@T.prim_func
def scale(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n, 4), "float32")
    for i, j in T.grid(n, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_tensor_type_validation_and_equality():
    n = Var("n", "int64")
    assert TensorType((1, n), "float32") == TensorType((1, n), "float32")
    assert TensorType((1, n), "float32") != TensorType((1, Var("n", "int64")), "float32")
    assert repr(TensorType((3,), "int32")) == 'R.Tensor((3,), "int32")'
    with pytest.raises(TypeError, match="dims must be ints or symbolic vars"):
        TensorType((1.5,), "float32")
    with pytest.raises(ValueError, match=">= 0"):
        TensorType((-1,), "float32")
    with pytest.raises(TypeError, match="unsupported dtype"):
        TensorType((1,), "float33")
    with pytest.raises(ValueError, match="identifiers"):
        GraphVar("not a name", TensorType((1,), "float32"))


def test_every_graph_value_reports_its_type_shape_and_dtype():
    c = Constant([[1, 2, 3]], name="c")
    x = var("x", (2, 1), "int64")
    call = ops.add(x, c)
    assert (c.shape, c.dtype) == ((1, 3), "int64")
    assert (x.shape, x.dtype, x.struct_info) == ((2, 1), "int64", x.type)
    assert (call.shape, call.dtype, call.args) == ((2, 3), "int64", (x, c))
    with pytest.raises(TypeError, match="arguments must be graph values"):
        ops.call_tir("f", [x, 3], TensorType((2,)))
    with pytest.raises(ValueError, match="unknown graph op 'softmax'"):
        ops.make_call("softmax", x)


@pytest.mark.parametrize("build, message", [
    (lambda: ops.matmul(var("a", (2, 3)), var("b", (4, 5))), "matmul: inner dims differ"),
    (lambda: ops.matmul(var("a", (2, 3)), var("b", (3, 5), "float64")), "dtypes differ"),
    (lambda: ops.linear(var("x", (2, 3)), var("w", (4, 5))), "x has 3 features, weight expects 5"),
    (lambda: ops.linear(var("x", (2, 3)), var("w", (4, 3)), var("b", (5,))), "bias .* does not match"),
    (lambda: ops.add(var("a", (2, 3)), var("b", (4,))), "do not broadcast"),
    (lambda: ops.conv2d(var("x", (1, 3, 8, 8)), var("w", (4, 2, 3, 3))), "3 channels, weight expects 2"),
    (lambda: ops.conv2d(var("x", (1, 3, 2, 2)), var("w", (4, 3, 3, 3))), "does not fit"),
    (lambda: ops.conv2d(var("x", (1, 3, 8, 8)), var("w", (4, 3, 3, 3)), strides=(1, 2, 3)), "strides must be"),
    (lambda: ops.max_pool2d(var("x", (1, 3, 8))), "expects NCHW"),
    (lambda: ops.reshape(var("x", (2, 3)), (4, 2)), "cannot reshape"),
    (lambda: ops.reshape(var("x", (2, 3)), (-1, -1)), "at most one -1"),
    (lambda: ops.permute_dims(var("x", (2, 3)), (0, 0)), "not a permutation"),
    (lambda: ops.matmul(var("a", (2, 3)), var("b", (3, 5)), out_dtype="float16"), "no mixed precision"),
])
def test_op_type_rules_raise_clear_errors(build, message):
    with pytest.raises(ShapeError, match=message):
        build()


def test_op_result_types():
    n = Var("n", "int64")
    x = var("x", (n, 1, 28, 28))
    y = ops.conv2d(x, var("w", (8, 1, 3, 3)), strides=1, padding=1)
    assert y.type.shape == (n, 8, 28, 28)
    p = ops.max_pool2d(var("y", y.type.shape), 2)
    assert p.type.shape == (n, 8, 14, 14)
    assert ops.flatten(var("p", p.type.shape)).type.shape == (n, 8 * 14 * 14)
    assert ops.reshape(var("q", (2, 6)), (3, -1)).type.shape == (3, 4)
    assert ops.add(var("a", (4, 1)), var("b", (3,))).type.shape == (4, 3)
    assert ops.permute_dims(var("c", (2, 3, 4))).type.shape == (4, 3, 2)
    assert ops.make_call("transpose", var("d", (2, 3))).attrs["axes"] == (1, 0)  # TVM's name, axes made explicit
    assert ops.linear(var("e", (n, 3)), var("f", (5, 3))).op == "dense"


def test_a_call_binds_the_kernels_symbolic_dims_to_the_callers():
    (n,) = scale.symbolic_vars()
    bound = check_signature(scale, [TensorType((3, 4))], TensorType((3, 4)), "main: lv")
    assert set(bound) == {n} and isinstance(bound[n], IntImm) and bound[n].value == 3
    m = Var("m", "int64")
    assert check_signature(scale, [TensorType((m, 4))], TensorType((m, 4)), "main: lv") == {n: m}


@pytest.mark.parametrize("args, out, message", [
    ([], (3, 4), "main: lv: scale takes 2 buffers \\(1 inputs and the output\\), the call passes 0 inputs"),
    ([(3, 4, 1)], (3, 4), "parameter A has 2 dims, argument has 3"),
    ([(3, 5)], (3, 5), "parameter A expects size 4, got 5"),
    ([(3, 4)], (2, 4), "dim n of scale bound to two sizes"),
    ([(3, Var("k", "int64"))], (3, 4), "parameter A expects size 4, got the symbolic dim k"),
])
def test_a_call_that_does_not_fit_its_kernel_names_what_differs(args, out, message):
    with pytest.raises(SignatureError, match=message):
        check_signature(scale, [TensorType(a) for a in args], TensorType(out), "main: lv")
    with pytest.raises(SignatureError, match="parameter A is float32, argument is float64"):
        check_signature(scale, [TensorType((3, 4), "float64")], TensorType((3, 4)), "main: lv")
