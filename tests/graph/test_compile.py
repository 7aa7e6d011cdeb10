"""``tunefarm.compile``: numerics against numpy (the real MLP weights), one native entry point, memory
planning, and clear errors for bad inputs."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.graph import BlockBuilder, ops, var
from tunefarm.graph.compile import compose_model, schedule_kernel
from tunefarm.graph.pipeline import prepare
from tunefarm.nn.models import mlp

from graph_helpers import numpy_mlp


@pytest.fixture(scope="module")
def mlp_exe(mlp_params):
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    return tunefarm.compile(mod, params)


def test_mlp_matches_numpy_on_1000_inputs(mlp_exe, mlp_params):
    rng = np.random.default_rng(2024)
    xs = rng.random((1000, 1, 784), dtype=np.float32)
    got = np.stack([mlp_exe(x) for x in xs])[:, 0]
    ref = numpy_mlp(xs[:, 0], mlp_params)
    assert np.max(np.abs(got - ref)) <= 1e-4
    assert np.array_equal(got.argmax(1), ref.argmax(1))


def test_whole_model_is_one_native_function(mlp_exe, mlp_params):
    assert mlp_exe.kind == "native"
    assert mlp_exe.module.function_names == ["model_main"]
    assert set(mlp_exe.kernels) == {"fused_matmul_add_relu", "fused_matmul1_add1"}
    assert all(c.flags.writeable is False for c in mlp_exe.constants)
    # the big weight is stored once, in the order the scheduled kernel reads it (same values, new layout)
    assert mlp_exe.meta["packed_weights"] >= 1
    w0 = mlp_exe.constants[0]
    assert w0.size == 784 * 128 and w0.shape != (128, 784)
    np.testing.assert_array_equal(np.sort(w0, axis=None), np.sort(mlp_params["w0"], axis=None))


def test_symbolic_batch(mlp_params):
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    exe = tunefarm.compile(mod, params)
    x = np.random.default_rng(3).random((1000, 784), dtype=np.float32)
    got = exe(x)
    ref = numpy_mlp(x, mlp_params)
    assert got.shape == (1000, 10)
    assert np.max(np.abs(got - ref)) <= 1e-4 and np.array_equal(got.argmax(1), ref.argmax(1))
    np.testing.assert_allclose(exe(x[:3].copy()), ref[:3], atol=1e-4)


def test_bad_inputs_raise_clear_errors(mlp_exe):
    x = np.zeros((1, 784), np.float32)
    with pytest.raises(ValueError, match=r"input 'x' must have shape \(1, 784\), got \(1, 783\)"):
        mlp_exe(np.zeros((1, 783), np.float32))
    with pytest.raises(ValueError, match="must have shape"):
        mlp_exe(np.zeros((784,), np.float32))
    with pytest.raises(TypeError, match="must have dtype float32, got float64"):
        mlp_exe(np.zeros((1, 784)))
    with pytest.raises(TypeError, match="must be a numpy array, got list"):
        mlp_exe([[0.0] * 784])
    with pytest.raises(TypeError, match=r"takes 1 input\(s\) \(x\), got 2"):
        mlp_exe(x, x)
    with pytest.raises(TypeError, match="got 0"):
        mlp_exe()


def test_unusual_but_valid_inputs_and_out(mlp_exe, mlp_params):
    rng = np.random.default_rng(5)
    big = rng.random((3, 1600), dtype=np.float32)
    strided = big[1:2, ::2][:, :784]  # not contiguous
    assert not strided.flags.c_contiguous
    np.testing.assert_allclose(mlp_exe(strided), numpy_mlp(strided, mlp_params), atol=1e-4)
    x = rng.random((1, 784), dtype=np.float32)
    out = np.full((1, 10), np.nan, np.float32)
    assert mlp_exe(x, out=out) is out
    np.testing.assert_allclose(out, numpy_mlp(x, mlp_params), atol=1e-4)
    with pytest.raises(ValueError, match="out= must have shape"):
        mlp_exe(x, out=np.empty((1, 11), np.float32))
    with pytest.raises(ValueError, match="out="):
        mlp_exe(x, out=np.empty((1, 10), np.float64))
    ro = np.empty((1, 10), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        mlp_exe(x, out=ro)
    # fresh outputs: results of two calls never alias
    a, b = mlp_exe(x), mlp_exe(x)
    assert a is not b and not np.shares_memory(a, b)


def test_out_may_not_alias_an_input(relu_exe):
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(ValueError, match="share memory"):
        relu_exe(a, out=a)
    np.testing.assert_array_equal(relu_exe(a), np.maximum(a, 0))


def test_intermediates_share_memory_when_lifetimes_do_not_overlap():
    x = var("x", (16, 16))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            v = x
            for _ in range(6):  # a chain of matmuls: each result is read only by the next call
                v = bb.emit(ops.matmul(v, x))
            gv = bb.emit_output(v)
        bb.emit_func_output(gv)
    mod = prepare(bb.get(), fuse=False)
    fn = mod["main"]
    kernels = {c.attrs["func"]: schedule_kernel(mod[c.attrs["func"]], None, None)[0] for c in fn.calls()}
    func, consts, order = compose_model(fn, kernels)
    # 5 intermediates (the 6th result is the output) but only two buffers: ping-pong
    assert len([b for b in func.root_block.alloc_buffers if b.scope == "global"]) == 2
    a = (np.random.default_rng(0).standard_normal((16, 16)) / 4).astype(np.float32)
    ref = a
    for _ in range(6):
        ref = ref @ a
    out = np.empty((16, 16), np.float32)
    tunefarm.interpret(func, a, out)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tunefarm.compile(bb.get())(a), ref, rtol=1e-4, atol=1e-5)


def test_returning_an_input_or_constant_still_works():
    x = var("x", (2, 3))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            bb.emit(ops.relu(x))
            gv = bb.emit_output(x)
        bb.emit_func_output(gv)
    exe = tunefarm.compile(bb.get())
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(exe(a), a)
    assert not np.shares_memory(exe(a), a)


def test_model_calling_an_unregistered_function_fails_at_call_time():
    x = var("x", (1, 4))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(tunefarm.graph.call_dps_packed("env.nowhere", [x], x.type)))
        bb.emit_func_output(gv)
    exe = tunefarm.compile(bb.get())
    with pytest.raises(KeyError, match="'env.nowhere', which is not registered"):
        exe(np.zeros((1, 4), np.float32))
