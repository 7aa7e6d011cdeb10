"""Forms TVM's printer writes that the front end reads: scalar size parameters, let-bindings (``v: T.f32 = e``),
``T.min_value`` / ``T.max_value``, ``dtype=`` on intrinsics and ``if_then_else``, and ``scope='shared'``.
Each program is built with LLVM and compared with numpy."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.runtime import build
from tunefarm.script import T
from tunefarm.script.diagnostics import ParseError


def test_scalar_parameter_sizes_a_buffer_and_is_read_from_the_array_shape():
    @T.prim_func
    def scale(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n, 8))
        B = T.match_buffer(b, (n, 8))
        for i, j in T.grid(n, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0

    assert len(scale.params) == 2  # n is the buffers' symbolic dimension, not a third argument
    mod = build(scale)
    for rows in (3, 5):
        a = np.random.default_rng(rows).random((rows, 8), dtype=np.float32)
        b = np.zeros_like(a)
        mod(a, b)
        np.testing.assert_allclose(b, a * 2.0)


def test_let_binding_with_min_value_builds_an_argmax():
    @T.prim_func
    def argmax(val: T.Buffer((4, 16), "float32"), idx: T.Buffer((4,), "int32"), best: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 16):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    idx[vi] = -1
                    best[vi] = T.min_value("float32")
                v_idx: T.int32 = T.Select(best[vi] >= val[vi, vk], idx[vi], vk)
                v_best: T.float32 = T.Select(best[vi] >= val[vi, vk], best[vi], val[vi, vk])
                idx[vi] = v_idx
                best[vi] = v_best

    val = np.random.default_rng(0).random((4, 16), dtype=np.float32)
    idx, best = np.zeros(4, np.int32), np.zeros(4, np.float32)
    build(argmax)(val, idx, best)
    np.testing.assert_array_equal(idx, val.argmax(axis=1))
    np.testing.assert_allclose(best, val.max(axis=1))


def test_a_let_read_before_its_buffer_is_written_again_is_refused():
    with pytest.raises(ParseError, match="no let-statements"):
        @T.prim_func
        def stale(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.remap("S", [i])
                    x: T.float32 = A[vi]
                    A[vi] = 0.0
                    B[vi] = x


def test_max_value_dtype_keywords_and_shared_scope_build():
    @T.prim_func
    def clip_sqrt(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32"), C: T.Buffer((16,), "float32")):
        S = T.alloc_buffer((16,), scope='shared')
        for i in range(16):
            with T.block("S"):
                vi = T.axis.remap("S", [i])
                S[vi] = T.sqrt(A[vi], dtype="float32")
        for i in range(16):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = T.if_then_else(vi < 8, S[vi], T.float32(0), dtype="float32")
                B[vi] = T.max_value("int32")

    a = np.random.default_rng(1).random(16, dtype=np.float32)
    b, c = np.zeros(16, np.int32), np.zeros(16, np.float32)
    build(clip_sqrt)(a, b, c)
    np.testing.assert_allclose(c, np.where(np.arange(16) < 8, np.sqrt(a), 0), rtol=1e-6)
    assert (b == np.iinfo(np.int32).max).all()


def test_dtype_keyword_must_match_the_value():
    with pytest.raises(ParseError, match="dtype='float64'"):
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.remap("S", [i])
                    A[vi] = T.exp(A[vi], dtype="float64")
