"""The batch-1 fast paths: the native ``__call__`` (checks + allocation + run in one C call) and weights
stored in the order their kernels read them. Both must be invisible except for speed."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import tunefarm
from tunefarm import nn, te
from tunefarm.codegen.layout import plan_layout, rewrite_layout
from tunefarm.nn.models import mlp
from tunefarm.runtime import fastcall
from tunefarm.schedule import Schedule

from graph_helpers import numpy_mlp


def test_native_call_is_installed_and_behaves_like_python(relu_exe):
    assert fastcall.native_call_ok()
    assert type(type(relu_exe).__dict__["__call__"]).__name__ == "builtin_function_or_method"
    assert isinstance(relu_exe, tunefarm.graph.Executable)
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    r = relu_exe(a)
    assert type(r) is np.ndarray and r.dtype == np.float32 and r.flags.c_contiguous and r.flags.writeable
    np.testing.assert_array_equal(r, np.maximum(a, 0))
    out = np.empty((3, 4), np.float32)
    assert relu_exe(a, out=out) is out
    np.testing.assert_array_equal(out, np.maximum(a, 0))
    # everything unusual goes to the Python path, which explains or copes
    with pytest.raises(ValueError, match="share memory"):
        relu_exe(a, out=a)
    with pytest.raises(TypeError, match="unexpected keyword"):
        relu_exe(a, outt=out)
    with pytest.raises(ValueError, match="must have shape"):
        relu_exe(a[:2])
    with pytest.raises(TypeError, match="takes 1 input"):
        relu_exe(a, a)
    np.testing.assert_array_equal(relu_exe(np.asfortranarray(a)), np.maximum(a, 0))
    np.testing.assert_array_equal(relu_exe(a, out=np.empty((3, 4), np.float32)), np.maximum(a, 0))
    with pytest.raises(ValueError, match="out= must have shape"):
        relu_exe(a, out=np.empty((4, 3), np.float32))


def test_native_call_keeps_reference_counts_balanced(relu_exe):
    a = np.ones((3, 4), np.float32)
    out = np.empty((3, 4), np.float32)
    dt = np.dtype("float32")
    base_dt, base_a, base_out = sys.getrefcount(dt), sys.getrefcount(a), sys.getrefcount(out)
    for _ in range(2000):
        relu_exe(a)
        relu_exe(a, out=out)
    assert (sys.getrefcount(dt), sys.getrefcount(a), sys.getrefcount(out)) == (base_dt, base_a, base_out)
    results = [relu_exe(a) for _ in range(100)]
    assert sys.getrefcount(dt) == base_dt + 100  # each result holds its descriptor
    del results
    assert sys.getrefcount(dt) == base_dt


def test_native_call_symbolic_batch_and_threads(mlp_params):
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    exe = tunefarm.compile(mod, params)
    assert type(type(exe).__dict__["__call__"]).__name__ == "builtin_function_or_method"
    rng = np.random.default_rng(1)
    xs = [rng.random((n, 784), dtype=np.float32) for n in (1, 5, 64)]
    for x in xs:
        np.testing.assert_allclose(exe(x), numpy_mlp(x, mlp_params), atol=1e-4)
    errors = []

    def worker(seed):
        r = np.random.default_rng(seed)
        for _ in range(50):
            x = r.random((int(r.integers(1, 9)), 784), dtype=np.float32)
            if np.max(np.abs(exe(x) - numpy_mlp(x, mlp_params))) > 1e-4:
                errors.append(seed)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_native_call_can_be_disabled(monkeypatch, mlp_params):
    monkeypatch.setenv("TUNEFARM_NO_NATIVE_CALL", "1")
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((2, 784), "float32")}})
    exe = tunefarm.compile(mod, params)
    assert type(exe) is tunefarm.graph.Executable  # the plain Python __call__, with the ctypes gate
    x = np.random.default_rng(2).random((2, 784), dtype=np.float32)
    np.testing.assert_allclose(exe(x), numpy_mlp(x, mlp_params), atol=1e-4)


def _matmul_func(m, k, n):
    a = te.placeholder((m, k), "float32", name="a")
    w = te.placeholder((k, n), "float32", name="w")
    return te.create_prim_func([a, w, te.ops.matmul(a, w)])


def test_rewrite_layout_follows_the_loop_order():
    sch = Schedule(_matmul_func(8, 12, 32))
    blk = sch.get_block("matmul")
    i, j, k = sch.get_loops(blk)
    jo, ji = sch.split(j, [4, 8])
    ko, ki = sch.split(k, [3, 4])
    sch.reorder(jo, ko, i, ki, ji)
    f = sch.mod["main"]
    _, order = plan_layout(f, 1)
    assert order == [(1, 8, 4), (0, 4, 3), (0, 1, 4), (1, 1, 8)]  # (dim, coef, extent): jo, ko, ki, ji
    g, pack = rewrite_layout(f, 1)
    assert tuple(s.value for s in g.params[1].shape) == (4, 3, 4, 8)
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((8, 12)).astype(np.float32), rng.standard_normal((12, 32)).astype(np.float32)
    wp = pack(w)
    np.testing.assert_array_equal(wp[2, 1, 3, 5], w[1 * 4 + 3, 2 * 8 + 5])
    out = np.empty((8, 32), np.float32)
    tunefarm.interpret(g, a, wp, out)
    np.testing.assert_allclose(out, a @ w, rtol=1e-5, atol=1e-5)
    tunefarm.compile(g)[g.name](a, wp, out)
    np.testing.assert_allclose(out, a @ w, rtol=1e-5, atol=1e-5)


def test_rewrite_layout_declines_what_it_cannot_prove():
    plain = _matmul_func(4, 8, 16)
    in_order = Schedule(plain)
    i, j, k = in_order.get_loops(in_order.get_block("matmul"))
    in_order.reorder(i, k, j)
    assert rewrite_layout(in_order.mod["main"], 1) is None  # loops already read w[k, j] row by row
    # the naive i, j, k order reads w column-wise: storing it transposed is the right call
    g, pack = rewrite_layout(plain, 1)
    assert tuple(s.value for s in g.params[1].shape) == (16, 8)
    w = np.arange(128, dtype=np.float32).reshape(8, 16)
    np.testing.assert_array_equal(pack(w), w.T)
    sch = Schedule(plain)
    i, j, k = sch.get_loops(sch.get_block("matmul"))
    jo, ji = sch.split(j, [3, 6])  # 18 > 16: a predicated, imperfect tiling
    sch.reorder(jo, k, i, ji)
    assert rewrite_layout(sch.mod["main"], 1) is None
    # the output (written, not only read) is never rewritten
    assert rewrite_layout(plain, 2) is None


def test_compile_with_and_without_packing_agree(mlp_params):
    for batch in (1, 16):
        mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((batch, 784), "float32")}})
        packed = tunefarm.compile(mod, params)
        plain = tunefarm.compile(mod, params, pack_weights=False)
        assert packed.meta["packed_weights"] >= 1 and plain.meta["packed_weights"] == 0
        x = np.random.default_rng(batch).random((batch, 784), dtype=np.float32)
        np.testing.assert_array_equal(packed(x), plain(x))
        np.testing.assert_allclose(packed(x), numpy_mlp(x, mlp_params), atol=1e-4)
