"""te.compute / reductions / create_prim_func: the structure of the generated TensorIR and its numbers."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import te
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.reference import interpret
from tunefarm.schedule.tree import iter_paths

rng = np.random.default_rng(1)


def rand(*shape):
    return rng.standard_normal(shape).astype("float32")


def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def blocks(func):
    """The block realizes under the root block, in program order."""
    return [p[-1] for p in iter_paths(func.root_block.body) if isinstance(p[-1], S.BlockRealize)]


def loops_above(func, name):
    found = []

    def walk(s, path):
        if isinstance(s, S.BlockRealize) and s.block.name == name:
            found.append(path)
        elif isinstance(s, S.SeqStmt):
            for x in s.seq:
                walk(x, path)
        elif isinstance(s, S.For):
            walk(s.body, path + [s])

    walk(func.root_block.body, [])
    return found[0]


# ---------------------------------------------------------------------------------------------- course
def test_course_matmul_structure():
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    C = te_matmul(A, B)
    f = te.create_prim_func([A, B, C])
    assert [p.name for p in f.params] == ["A", "B", "matmul"]
    assert f.attrs == {"global_symbol": "main", "tir.noalias": True}
    assert f.root_block.name == "root" and f.root_block.alloc_buffers == ()
    (r,) = blocks(f)
    blk = r.block
    assert blk.name == "matmul"
    assert [iv.iter_type for iv in blk.iter_vars] == ["S", "S", "R"]
    assert [iv.var.name for iv in blk.iter_vars] == ["i", "j", "k"]
    assert all(iv.dom.extent.value == 128 and iv.dom.min.value == 0 for iv in blk.iter_vars)
    loops = loops_above(f, "matmul")
    assert [l.extent.value for l in loops] == [128, 128, 128]
    assert list(r.iter_values) == [l.loop_var for l in loops]  # T.axis.remap("SSR", [i0, i1, i2])
    vi, vj, vk = (iv.var for iv in blk.iter_vars)
    pA, pB, pC = f.params
    assert [(rg.buffer, [x.min for x in rg.region]) for rg in blk.reads] == [(pA, [vi, vk]), (pB, [vk, vj])]
    assert all(x.extent.value == 1 for rg in blk.reads for x in rg.region)
    assert [(rg.buffer, [x.min for x in rg.region]) for rg in blk.writes] == [(pC, [vi, vj])]
    assert isinstance(blk.init, S.BufferStore) and isinstance(blk.init.value, E.FloatImm)
    assert blk.init.value.value == 0.0 and blk.init.value.dtype == "float32"
    upd = blk.body
    assert upd.buffer is pC and upd.value.op == "+" and upd.value.a.buffer is pC
    assert upd.value.b.op == "*" and upd.value.b.a.buffer is pA and upd.value.b.b.buffer is pB


def test_course_fused_matmul_relu_allocates_the_intermediate():
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    C = te_matmul(A, B)
    D = te_relu(C)
    fused = te.create_prim_func([A, B, D])
    assert [p.name for p in fused.params] == ["A", "B", "relu"]
    (tmp,) = fused.root_block.alloc_buffers
    assert tmp.name == "matmul" and tmp.const_shape() == (128, 128) and tmp.dtype == "float32"
    mm, relu = blocks(fused)
    assert (mm.block.name, relu.block.name) == ("matmul", "relu")
    assert mm.block.writes[0].buffer is tmp and relu.block.reads[0].buffer is tmp
    assert [iv.iter_type for iv in relu.block.iter_vars] == ["S", "S"]
    assert relu.block.init is None
    body = relu.block.body.value
    assert body.op == "max" and isinstance(body.b, E.FloatImm) and body.b.value == 0.0

    # passing the intermediate makes it a parameter instead of an allocation
    unfused = te.create_prim_func([A, B, C, D])
    assert [p.name for p in unfused.params] == ["A", "B", "matmul", "relu"]
    assert unfused.root_block.alloc_buffers == ()
    assert len(blocks(unfused)) == 2

    # numbers at a size the interpreter runs quickly (same program shape)
    A2, B2 = te.placeholder((24, 16), name="A"), te.placeholder((16, 20), name="B")
    small = te.create_prim_func([A2, B2, te_relu(te_matmul(A2, B2))])
    a, b = rand(24, 16), rand(16, 20)
    d = np.zeros((24, 20), "float32")
    interpret(small, a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_relu_on_any_rank_uses_i0_i1_axis_names():
    X2 = te.placeholder((10, 20), name="X1", dtype="float32")
    f = te.create_prim_func([X2, te_relu(X2)])
    (r,) = blocks(f)
    assert [iv.var.name for iv in r.block.iter_vars] == ["i0", "i1"]
    x, y = rand(10, 20), np.zeros((10, 20), "float32")
    interpret(f, x, y)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_functions_from_the_same_tensors_are_independent():
    A = te.placeholder((4, 4), name="A")
    B = te.placeholder((4, 4), name="B")
    C = te_matmul(A, B)
    f1, f2 = te.create_prim_func([A, B, C]), te.create_prim_func([A, B, C])
    assert not set(f1.params) & set(f2.params)
    assert blocks(f1)[0].block.iter_vars[0].var is not blocks(f2)[0].block.iter_vars[0].var


def test_block_names_are_unique():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0)
    C = te.compute((8,), lambda i: B[i] * 2.0)
    D = te.compute((8,), lambda i: C[i] - 3.0)
    f = te.create_prim_func([A, D])
    assert [r.block.name for r in blocks(f)] == ["compute", "compute_1", "compute_2"]
    a, d = rand(8), np.zeros(8, "float32")
    interpret(f, a, d)
    np.testing.assert_allclose(d, (a + 1) * 2 - 3, rtol=1e-6)


# ---------------------------------------------------------------------------------------------- reductions
def test_max_and_min_reductions_init_to_infinities():
    A = te.placeholder((5, 7), name="A")
    k = te.reduce_axis((0, 7), name="k")
    mx = te.compute((5,), lambda i: te.max(A[i, k], axis=k), name="mx")
    k2 = te.reduce_axis((0, 7), name="k2")
    mn = te.compute((5,), lambda i: te.min(A[i, k2], axis=[k2]), name="mn")
    f = te.create_prim_func([A, mx, mn])
    b_mx, b_mn = blocks(f)
    assert b_mx.block.init.value.value == float("-inf")
    assert b_mn.block.init.value.value == float("inf")
    a = -np.abs(rand(5, 7)) - 10  # all negative: a 0 init would be wrong for max
    o1, o2 = np.zeros(5, "float32"), np.zeros(5, "float32")
    interpret(f, a, o1, o2)
    np.testing.assert_array_equal(o1, a.max(axis=1))
    np.testing.assert_array_equal(o2, a.min(axis=1))


def test_multi_axis_sum_with_offset_domain_and_where():
    A = te.placeholder((4, 6, 5), name="A")
    r1 = te.reduce_axis((1, 6), name="r1")  # skips index 0
    r2 = te.reduce_axis((0, 5), name="r2")
    S1 = te.compute((4,), lambda i: te.sum(A[i, r1, r2], axis=[r1, r2], where=r2 < r1), name="s")
    f = te.create_prim_func([A, S1])
    (r,) = blocks(f)
    assert [iv.iter_type for iv in r.block.iter_vars] == ["S", "R", "R"]
    assert r.block.iter_vars[1].dom.min.value == 1 and r.block.iter_vars[1].dom.extent.value == 5
    a, s = rand(4, 6, 5), np.zeros(4, "float32")
    interpret(f, a, s)
    mask = np.arange(5)[None, :] < np.arange(6)[:, None]
    mask[0] = False
    np.testing.assert_allclose(s, (a * mask).sum(axis=(1, 2)), rtol=1e-5, atol=1e-6)


def test_comm_reducer_product():
    A = te.placeholder((3, 4), name="A")
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="prod")
    k = te.reduce_axis((0, 4), name="k")
    P = te.compute((3,), lambda i: prod(A[i, k], axis=k), name="P")
    f = te.create_prim_func([A, P])
    a, p = rand(3, 4), np.zeros(3, "float32")
    interpret(f, a, p)
    np.testing.assert_allclose(p, a.prod(axis=1), rtol=1e-5)


def test_if_then_else_and_math_intrinsics():
    A = te.placeholder((9,), name="A")
    B = te.compute((9,), lambda i: te.if_then_else(A[i] > 0, te.sqrt(A[i]), te.exp(A[i])), name="B")
    f = te.create_prim_func([A, B])
    a, b = rand(9), np.zeros(9, "float32")
    interpret(f, a, b)
    np.testing.assert_allclose(b, np.where(a > 0, np.sqrt(np.abs(a)), np.exp(a)), rtol=1e-6)


def test_symbolic_dims_become_function_symbolic_vars():
    n = te.var("n", "int64")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0, name="B")
    f = te.create_prim_func([A, B])
    assert f.symbolic_vars() == [n]
    (r,) = blocks(f)
    assert r.block.iter_vars[0].var.dtype == "int64" and r.block.iter_vars[1].var.dtype == "int32"
    for rows in (1, 4):
        a, b = rand(rows, 3), np.zeros((rows, 3), "float32")
        interpret(f, a, b)
        np.testing.assert_array_equal(b, a * 2)


# ---------------------------------------------------------------------------------------------- errors
def test_reduction_must_be_the_whole_body():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="whole body"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) * 2.0)


def test_reduce_axis_used_without_reducing():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="reduce axis 'k'"):
        te.compute((4,), lambda i: A[i, k])


def test_fcompute_arity_must_match_shape():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(ValueError, match="2 dimensions"):
        te.compute((4, 4), lambda i: A[i, i])


def test_missing_placeholder_and_bad_arguments():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(ValueError, match="placeholder 'A'"):
        te.create_prim_func([B])
    with pytest.raises(TypeError, match="te Tensors"):
        te.create_prim_func([A, "B"])
    with pytest.raises(ValueError, match="twice"):
        te.create_prim_func([A, B, B])


def test_wrong_number_of_indices():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(IndexError, match="2 dimensions"):
        te.compute((4,), lambda i: A[i])


def test_elementwise_max_needs_operand_or_axis():
    A = te.placeholder((4,), name="A")
    with pytest.raises(TypeError, match="second operand"):
        te.compute((4,), lambda i: te.max(A[i]))
