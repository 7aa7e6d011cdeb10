"""Programs produced by the te front end and by schedule primitives print and parse back unchanged."""
from __future__ import annotations

import course_programs as cp
from tunefarm import te
from tunefarm.ir.serialize import dumps, loads
from tunefarm.ir.structural import assert_structural_equal, workload_key
from tunefarm.schedule import Schedule
from tunefarm.script import from_source


def check(node):
    text = node.script()
    assert_structural_equal(node, from_source(text))
    assert_structural_equal(node, loads(dumps(node)))
    return text


def test_tiled_matmul_with_cache_write_and_decomposed_reduction():
    sch = Schedule(cp.MatmulModule)
    b = sch.get_block("C", "main")
    i, j, k = sch.get_loops(b)
    i0, i1, i2, i3 = sch.split(i, [4, 2, 4, 4])
    j0, j1, j2, j3 = sch.split(j, [4, 2, 4, 4])
    k0, k1 = sch.split(k, [32, 4])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    cw = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(cw, j1)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.vectorize(j3)
    sch.annotate(f, "pragma_auto_unroll_max_step", 16)
    sch.decompose_reduction(b, k0)
    text = check(sch.mod)
    assert 'scope="local"' in text and "T.vectorized(4)" in text and 'with T.block("C_init"):' in text
    assert "annotations={\"pragma_auto_unroll_max_step\": 16}" in text
    assert workload_key(sch.mod["main"]) != workload_key(cp.matmul)


def test_course_schedules_round_trip():
    sch = Schedule(cp.MyModule)
    b = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    check(sch.mod)

    sch = Schedule(cp.MyAdd)
    i, j = sch.get_loops(sch.get_block("C", "add"))
    i0, i1 = sch.split(i, factors=[2, 2])
    sch.parallel(i0)
    sch.unroll(i1)
    sch.vectorize(j)
    text = check(sch.mod)
    assert "T.unroll(2)" in text and "T.parallel(2)" in text

    sch = Schedule(cp.before_inline)
    sch.compute_inline(sch.get_block("B"))
    check(sch.mod)

    sch = Schedule(cp.before_fuse)
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    assert "i_j_fused // 128" in check(sch.mod)

    sch = Schedule(cp.dense_bias_relu)
    i, j, k = sch.get_loops(sch.get_block("dense"))
    ko, ki = sch.split(k, [None, 16])
    sch.rfactor(ki, 0)
    check(sch.mod)


def test_te_programs_round_trip():
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    D = te.compute((128, 128), lambda i, j: te.max(C[i, j], 0), name="relu")
    check(te.create_prim_func([A, B, D]))
    n = te.size_var("n")
    X = te.placeholder((n, 64), name="X")
    Y = te.compute((n, 64), lambda i, j: te.exp(X[i, j]) / te.sqrt(X[i, j] + 1.0), name="Y")
    assert "n = T.int32()" in check(te.create_prim_func([X, Y]))
