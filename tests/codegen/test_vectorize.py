"""Vectorized loops: explicit vector IR where it is equivalent, a correct serial loop where it is not."""
from __future__ import annotations

import re

import numpy as np
import pytest

from codegen_programs import loops, matmul_tiled, realize
from tunefarm.codegen import lower_and_emit
from tunefarm.codegen.vectorize import can_vectorize
from tunefarm.ir import Buffer, BufferStore, For, IfThenElse, PrimFunc, Var, const, seq, wrap_root
from tunefarm.ir import expr as E
from tunefarm.runtime import build
from tunefarm.target import Target

RNG = np.random.default_rng(3)


def unoptimized_ir(func) -> str:
    return str(lower_and_emit(func, Target()).module)


def test_tiled_matmul_emits_vector_loads_fma_and_broadcasts():
    f, _ = matmul_tiled(16, 32, 8, 4, 16)
    ir = unoptimized_ir(f)
    assert "<16 x float>" in ir
    assert "llvm.fmuladd.v16f32" in ir
    assert "shufflevector" in ir  # A[i, k] broadcast across the 16 lanes
    mod = build(f)
    asm = mod.get_source("asm")
    wide = "zmm" if Target.host().has_feature("avx512f") else "ymm"  # 16 lanes: one AVX-512 or two AVX2 registers
    assert "vfmadd" in asm and wide in asm
    ll = mod.get_source("ll")
    assert "alloca" not in ll.split("define void @matmul_tiled")[1].split("\n}")[0]  # tile lives in registers


def test_strided_and_non_affine_accesses_are_gathered():
    n = 16
    A, B = Buffer("A", (2 * n,)), Buffer("B", (n,))
    body = loops([("i", n, "vectorized")], lambda i: realize(
        "B", [("S", n, i)], lambda v: BufferStore(B, A[v * 2] + A[E.floordiv(v, 3)], (v,))))
    f = PrimFunc([A, B], wrap_root(body), name="gather")
    a = RNG.standard_normal(2 * n).astype("float32")
    b = np.zeros(n, "float32")
    build(f)(a, b)
    idx = np.arange(n)
    np.testing.assert_allclose(b, a[idx * 2] + a[idx // 3])


def test_strided_store_is_scattered():
    n = 8
    A, B = Buffer("A", (n,)), Buffer("B", (3 * n,))
    body = loops([("i", n, "vectorized")], lambda i: realize(
        "B", [("S", n, i)], lambda v: BufferStore(B, A[v] + 1.0, (v * 3 + 1,))))
    f = PrimFunc([A, B], wrap_root(body), name="scatter")
    assert can_vectorize(_only_loop(f))
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(3 * n, "float32")
    build(f)(a, b)
    want = np.zeros(3 * n, "float32")
    want[1::3] = a + 1
    np.testing.assert_array_equal(b, want)


def _only_loop(f):
    from tunefarm.codegen import lower

    body = lower(f).body
    while not isinstance(body, For):
        body = body.body
    return body


def test_reduction_over_the_vectorized_loop_is_scalarized_correctly():
    """B[i] += A[i, k] with k vectorized: lanes would race on B[i]; must run serially."""
    n, m = 4, 16
    A, B = Buffer("A", (n, m)), Buffer("B", (n,))
    body = loops([("i", n, "serial"), ("k", m, "vectorized")], lambda i, k: realize(
        "B", [("S", n, i), ("R", m, k)], lambda vi, vk: BufferStore(B, B[vi] + A[vi, vk], (vi,)),
        init=lambda vi, vk: BufferStore(B, const(0.0), (vi,))))
    f = PrimFunc([A, B], wrap_root(body), name="rowsum")
    a = RNG.standard_normal((n, m)).astype("float32")
    b = np.zeros(n, "float32")
    build(f)(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_lane_dependent_branch_is_scalarized_and_invariant_branch_stays_vector():
    n = 16
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    flag = Buffer("flag", (1,), "int32")
    i = Var("i", "int64")
    lane_branch = For(i, 0, n, "vectorized", IfThenElse(i < 5, BufferStore(B, A[i] * 2.0, (i,)),
                                                        BufferStore(B, A[i] - 1.0, (i,))))
    f = PrimFunc([A, flag, B], wrap_root(lane_branch), name="lane_branch")
    assert not can_vectorize(_only_loop(f))
    j = Var("j", "int64")
    inv_branch = For(j, 0, n, "vectorized", IfThenElse(flag[0] > 0, BufferStore(B, A[j] * 2.0, (j,)),
                                                       BufferStore(B, A[j] - 1.0, (j,))))
    g = PrimFunc([A, flag, B], wrap_root(inv_branch), name="inv_branch")
    assert can_vectorize(_only_loop(g))
    assert "<16 x float>" in unoptimized_ir(g)
    a = RNG.standard_normal(n).astype("float32")
    idx = np.arange(n)
    for fl in (0, 1):
        fa = np.array([fl], "int32")
        b = np.zeros(n, "float32")
        build(f)(a, fa, b)
        np.testing.assert_allclose(b, np.where(idx < 5, a * 2, a - 1))
        build(g)(a, fa, b)
        np.testing.assert_allclose(b, a * 2 if fl else a - 1)


def test_nested_loop_inside_vectorized_loop_is_scalarized():
    n, m = 8, 5
    A, B = Buffer("A", (n, m)), Buffer("B", (n,))
    i, k = Var("i", "int64"), Var("k", "int64")
    body = For(i, 0, n, "vectorized", seq(BufferStore(B, const(0.0), (i,)),
                                          For(k, 0, m, "serial", BufferStore(B, B[i] + A[i, k], (i,)))))
    f = PrimFunc([A, B], wrap_root(body), name="nested")
    a = RNG.standard_normal((n, m)).astype("float32")
    b = np.zeros(n, "float32")
    build(f)(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_cross_lane_dependence_is_scalarized():
    """B[i+1] = B[i] + A[i]: a prefix sum; running lanes together would read stale values."""
    n = 16
    A, B = Buffer("A", (n,)), Buffer("B", (n + 1,))
    i = Var("i", "int64")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "vectorized", BufferStore(B, B[i] + A[i], (i + 1,)))),
                 name="prefix")
    assert not can_vectorize(_only_loop(f))
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(n + 1, "float32")
    build(f)(a, b)
    np.testing.assert_allclose(b[1:], np.cumsum(a), rtol=1e-5)


def test_two_statements_sharing_a_buffer_lane_wise_stay_vector():
    n = 16
    A, T, B = Buffer("A", (n,)), Buffer("T", (n,)), Buffer("B", (n,))
    i = Var("i", "int64")
    body = For(i, 0, n, "vectorized", seq(BufferStore(T, A[i] * 3.0, (i,)), BufferStore(B, T[i] + A[i], (i,))))
    f = PrimFunc([A, T, B], wrap_root(body), name="two")
    assert can_vectorize(_only_loop(f))
    a = RNG.standard_normal(n).astype("float32")
    t, b = np.zeros(n, "float32"), np.zeros(n, "float32")
    build(f)(a, t, b)
    np.testing.assert_allclose(b, a * 4, rtol=1e-6)


@pytest.mark.parametrize("n", [64, 100, 129, 512])
def test_long_vectorized_loops_are_chunked(n):
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i = Var("i", "int64")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "vectorized", BufferStore(B, E.max_(A[i], 0.0), (i,)))),
                 name="relu")
    ir = unoptimized_ir(f)
    widths = {int(w) for w in re.findall(r"<(\d+) x float>", ir)}
    assert widths and max(widths) <= 64
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(n, "float32")
    build(f)(a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_vectorized_loop_with_symbolic_extent_runs_serially():
    n = Var("n", "int64")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i = Var("i", "int64")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "vectorized", BufferStore(B, A[i] + 1.0, (i,)))), name="symvec")
    mod = build(f)
    for size in (3, 50):
        a = RNG.standard_normal(size).astype("float32")
        b = np.zeros(size, "float32")
        mod(a, b)
        np.testing.assert_allclose(b, a + 1)


def test_vectorized_loop_with_predicate_from_non_divisible_split():
    n = 10
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    body = loops([("io", 3, "serial"), ("ii", 4, "vectorized")], lambda io, ii: realize(
        "B", [("S", n, io * 4 + ii)], lambda v: BufferStore(B, A[v] * A[v], (v,)), predicate=(io * 4 + ii) < n))
    f = PrimFunc([A, B], wrap_root(body), name="pred")
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(n, "float32")
    build(f)(a, b)
    np.testing.assert_allclose(b, a * a)


def _ragged_program(n_vec: int, lanes: int = 7):
    """T = 2 * A (an intermediate big enough for the heap), then C = T + A in ``lanes``-wide vectors."""
    n = n_vec * lanes
    A, C = Buffer("A", (n,)), Buffer("C", (n,))
    T = Buffer("T", (n,))
    fill = loops([("i", n, "serial")], lambda i: realize(
        "T", [("S", n, i)], lambda v: BufferStore(T, A[v] * const(2.0, "float32"), (v,))))
    use = loops([("o", n_vec, "serial"), ("l", lanes, "vectorized")], lambda o, l: realize(
        "C", [("S", n, o * lanes + l)], lambda v: BufferStore(C, T[v] + A[v], (v,))))
    return PrimFunc([A, C], wrap_root(seq([fill, use]), alloc_buffers=[T]), name="ragged")


def test_ragged_loads_of_an_allocated_buffer_are_one_wider_load():
    f = _ragged_program(3000)  # 84 KB: a heap buffer, allocated with spare bytes after it
    ir = unoptimized_ir(f)
    assert re.search(r"load <8 x float>, ptr", ir)  # T: one 8-lane load, narrowed to 7
    assert "shufflevector <8 x float>" in ir
    assert re.search(r"load <7 x float>, ptr", ir)  # A is the caller's array: never read past its end
    a = RNG.standard_normal(3000 * 7).astype("float32")
    c = np.zeros_like(a)
    build(f)(a, c)
    np.testing.assert_allclose(c, 3 * a, rtol=1e-6)


def test_ragged_loads_of_a_stack_buffer_are_not_widened():
    ir = unoptimized_ir(_ragged_program(10))  # 280 bytes: an alloca of exactly its size
    assert not re.search(r"load <8 x float>, ptr", ir)
