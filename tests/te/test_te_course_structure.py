"""create_prim_func output equals the course's TVMScript (as TVM prints it), structurally."""
from __future__ import annotations

from tunefarm import te
from tunefarm.ir.structural import assert_structural_equal, structural_equal
from tunefarm.script import T, from_source
from tunefarm.te import ops

import course_programs as cp


def te_matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((A.shape[0], B.shape[1]), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


# the notes' printouts of create_prim_func: matmul, relu over 10 elements, matmul + relu fused
course_matmul = from_source(cp.course_script("003", "def func(A:", 'matmul: T.Buffer[(128, 128), "float32"]) -> None:'))
course_relu_1d = from_source(cp.course_script("003", 'def func(X1: T.Buffer[10, "float32"]'))
course_fused = from_source(cp.course_script("003", 'B: T.Buffer[(128, 128), "float32"], relu: T.Buffer'))


@T.prim_func
def course_dense(x: T.Buffer((1, 784), "float32"), B: T.Buffer((128, 784), "float32"),
                 T_matmul_NT: T.Buffer((1, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i0, i1, i2 in T.grid(1, 128, 784):
        with T.block("T_matmul_NT"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            T.reads(x[i, k], B[j, k])
            T.writes(T_matmul_NT[i, j])
            with T.init():
                T_matmul_NT[i, j] = T.float32(0)
            T_matmul_NT[i, j] = T_matmul_NT[i, j] + x[i, k] * B[j, k]


@T.prim_func
def symbolic_batch_dense(x: T.handle, w: T.handle, out: T.handle):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    n = T.int64()
    X = T.match_buffer(x, (n, 784), "float32")
    W = T.match_buffer(w, (128, 784), "float32")
    Y = T.match_buffer(out, (n, 128), "float32")
    for i0, i1, i2 in T.grid(n, 128, 784):
        with T.block("T_matmul_NT"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            T.reads(X[i, k], W[j, k])
            T.writes(Y[i, j])
            with T.init():
                Y[i, j] = T.float32(0)
            Y[i, j] = Y[i, j] + X[i, k] * W[j, k]


def test_matmul_equals_course_script():
    A, B = te.placeholder((128, 128), name="A"), te.placeholder((128, 128), name="B")
    assert_structural_equal(te.create_prim_func([A, B, te_matmul(A, B)]), course_matmul)


def test_fused_matmul_relu_equals_course_script():
    A, B = te.placeholder((128, 128), name="A"), te.placeholder((128, 128), name="B")
    f = te.create_prim_func([A, B, te_relu(te_matmul(A, B))])
    assert_structural_equal(f, course_fused)
    # and the version with the intermediate as a parameter is a different program
    C = te_matmul(A, B)
    assert not structural_equal(te.create_prim_func([A, B, C, te_relu(C)]), course_fused)


def test_relu_1d_equals_course_script():
    X1 = te.placeholder((10,), name="X1")
    assert_structural_equal(te.create_prim_func([X1, te_relu(X1)]), course_relu_1d)


def test_ops_dense_equals_topi_dense_script():
    x, w = te.placeholder((1, 784), name="x"), te.placeholder((128, 784), name="B")
    assert_structural_equal(te.create_prim_func([x, w, ops.dense(x, w)]), course_dense)


def test_printed_program_parses_back_to_the_same_structure():
    from tunefarm.script import from_source

    X, W = te.placeholder((1, 2, 6, 6), name="x"), te.placeholder((3, 2, 3, 3), name="w")
    f = te.create_prim_func([X, W, ops.max_pool2d(ops.conv2d(X, W, stride=2, padding=1), 2, padding=1)])
    assert_structural_equal(from_source(f.script()), f)


def test_symbolic_batch_dense_equals_script_with_int64_dim():
    n = te.var("n", "int64")
    x, w = te.placeholder((n, 784), name="x"), te.placeholder((128, 784), name="w")
    assert_structural_equal(te.create_prim_func([x, w, ops.dense(x, w)]), symbolic_batch_dense)
