"""Parallel loops: outlined to libgomp with the target's thread count; correct results with private
per-thread buffers, captured variables, uneven and symbolic trip counts, nested parallel loops."""
from __future__ import annotations

import re

import numpy as np
import pytest

from codegen_programs import loops, matmul_tiled, realize
from tunefarm.codegen import compile_funcs, lower_and_emit
from tunefarm.ir import Buffer, BufferStore, For, PrimFunc, Var, wrap_root
from tunefarm.ir import expr as E
from tunefarm.runtime import build
from tunefarm.target import Target

RNG = np.random.default_rng(5)
TWO = Target.host(2)


def add_one(n, kind="parallel", extent_var=None):
    size = extent_var if extent_var is not None else n
    A, B = Buffer("A", (size,)), Buffer("B", (size,))
    i = Var("i", "int64")
    return PrimFunc([A, B], wrap_root(For(i, 0, size, kind, BufferStore(B, A[i] + 1.0, (i,)))), name="add_one")


def test_parallel_loop_calls_gomp_with_the_target_thread_count():
    ir = str(lower_and_emit(add_one(100), TWO).module)
    calls = re.findall(r'call void @"GOMP_parallel"\(.*\)', ir)
    assert len(calls) == 1 and "i32 2, i32 0" in calls[0]
    assert compile_funcs(add_one(100), TWO).metadata["uses_gomp"]
    one = compile_funcs(add_one(100), Target.host(1))
    assert not one.metadata["uses_gomp"] and "GOMP" not in one.ll


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_parallel_results_for_uneven_trip_counts(n):
    a = RNG.standard_normal(n).astype("float32")
    b = np.zeros(n, "float32")
    build(add_one(n), TWO)(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_parallel_loop_with_symbolic_extent():
    n = Var("n", "int64")
    mod = build(add_one(None, extent_var=n), TWO)
    for size in (0, 1, 3, 513):
        a = RNG.standard_normal(size).astype("float32")
        b = np.zeros(size, "float32")
        mod(a, b)
        np.testing.assert_array_equal(b, a + 1)


def test_captured_outer_loop_variable_and_nested_parallel_runs_serially():
    n, m, r = 3, 6, 4
    A, B = Buffer("A", (n, m, r)), Buffer("B", (n, m, r))
    body = loops([("o", n, "serial"), ("p", m, "parallel"), ("q", r, "parallel")], lambda o, p, q: realize(
        "B", [("S", n, o), ("S", m, p), ("S", r, q)],
        lambda vo, vp, vq: BufferStore(B, A[vo, vp, vq] + E.cast("float32", vo * 100 + vq), (vo, vp, vq))))
    f = PrimFunc([A, B], wrap_root(body), name="nested_par")
    ir = str(lower_and_emit(f, TWO).module)
    assert len(re.findall(r'call void @"GOMP_parallel"', ir)) == 1  # the inner parallel loop is serial
    a = RNG.standard_normal((n, m, r)).astype("float32")
    b = np.zeros_like(a)
    build(f, TWO)(a, b)
    o = np.arange(n)[:, None, None]
    q = np.arange(r)[None, None, :]
    np.testing.assert_allclose(b, a + o * 100 + q)


@pytest.mark.parametrize("kinds", [("parallel", "serial"), ("serial", "parallel"), ("parallel", "parallel")])
def test_private_accumulator_tiles_under_parallel_loops(kinds):
    f, ref = matmul_tiled(32, 64, 24, 4, 16, kinds=kinds)
    a = RNG.standard_normal((32, 24)).astype("float32")
    b = RNG.standard_normal((24, 64)).astype("float32")
    c = np.zeros((32, 64), "float32")
    mod = build(f, TWO)
    for _ in range(5):  # thread team reuse across calls
        c[:] = 0
        mod(a, b, c)
        np.testing.assert_allclose(c, ref(a, b), rtol=1e-4, atol=1e-4)


def test_parallel_reduction_into_shared_intermediate():
    """Rows are computed in parallel into a heap-allocated global intermediate, then summed serially."""
    n, m = 64, 300
    A, Y, Z = Buffer("A", (n, m)), Buffer("Y", (n,)), Buffer("Z", (1,))
    rows = loops([("i", n, "parallel"), ("k", m, "serial")], lambda i, k: realize(
        "Y", [("S", n, i), ("R", m, k)], lambda vi, vk: BufferStore(Y, Y[vi] + A[vi, vk] * A[vi, vk], (vi,)),
        init=lambda vi, vk: BufferStore(Y, E.const(0.0), (vi,))))
    total = loops([("i", n, "serial")], lambda i: realize(
        "Z", [("R", n, i)], lambda vi: BufferStore(Z, Z[0] + Y[vi], (E.const(0),)),
        init=lambda vi: BufferStore(Z, E.const(0.0), (E.const(0),))))
    from tunefarm.ir import seq

    f = PrimFunc([A, Z], wrap_root(seq(rows, total), [Y]), name="sumsq")
    a = RNG.standard_normal((n, m)).astype("float32")
    z = np.zeros(1, "float32")
    build(f, TWO)(a, z)
    np.testing.assert_allclose(z[0], (a.astype("float64") ** 2).sum(), rtol=1e-4)


def test_libgomp_is_found():
    from tunefarm.runtime.jit import ensure_libgomp, find_libgomp

    assert find_libgomp() is not None
    assert ensure_libgomp() == ensure_libgomp()
