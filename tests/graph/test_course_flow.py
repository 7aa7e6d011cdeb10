"""The course's end-to-end examples run as written and equal numpy: the three TVMScript modules (before and
after BindParams), the BlockBuilder + emit_te example, and the nn.Module + export flow."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import te
from tunefarm.graph import BindParams, BlockBuilder, TensorStructInfo, Var, VirtualMachine, transform

from graph_helpers import numpy_mlp
from course_programs import MLPModuleWithMain as MyModule, MyModuleMixture, MyModuleWithExternCall


@pytest.fixture()
def image():
    return np.random.default_rng(7).random((1, 784), dtype=np.float32)


def test_my_module_runs_with_weights_as_inputs(mlp_params, image):
    ex = tunefarm.compile(MyModule, target="llvm")
    vm = VirtualMachine(ex, "cpu")
    p = mlp_params
    res = vm["main"](image, p["w0"], p["b0"], p["w1"], p["b1"])
    assert ex.kind == "native"
    np.testing.assert_allclose(res, numpy_mlp(image, p), atol=1e-4)
    # symbolic dims: the same executable takes other sizes
    w0, b0 = p["w0"][:64], p["b0"][:64]
    w1 = np.ascontiguousarray(p["w1"][:, :64])
    x = np.ascontiguousarray(image[:, :700])
    w0 = np.ascontiguousarray(w0[:, :700])
    got = ex(x, w0, b0, w1, p["b1"])
    np.testing.assert_allclose(got, np.maximum(x @ w0.T + b0, 0) @ w1.T + p["b1"], atol=1e-4)


def test_extern_call_module_calls_registered_functions(mlp_params, image, env_funcs):
    ex = tunefarm.compile(MyModuleWithExternCall)
    p = mlp_params
    res = ex(image, p["w0"], p["b0"], p["w1"], p["b1"])
    assert ex.kind == "graph"
    assert env_funcs == ["env.linear", "env.relu", "env.linear"]
    np.testing.assert_allclose(res, numpy_mlp(image, p), atol=1e-4)


def test_mixture_module_mixes_kernels_and_library(mlp_params, image, env_funcs):
    ex = tunefarm.compile(MyModuleMixture)
    p = mlp_params
    res = ex(image, p["w0"], p["b0"], p["w1"], p["b1"])
    assert env_funcs == ["env.relu", "env.linear"]  # linear0 is a compiled kernel
    assert "linear0" in ex.kernels
    np.testing.assert_allclose(res, numpy_mlp(image, p), atol=1e-4)


def test_bind_params_fixes_symbolic_dims_and_runs(mlp_params, image, env_funcs):
    bound = transform.BindParams("main", mlp_params)(MyModuleMixture)
    text = bound["main"].script()
    assert 'def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):' in text
    assert 'R.call_dps_packed("linear0", (x, metadata["relax.expr.Constant"][0], ' \
           'metadata["relax.expr.Constant"][1]), out_sinfo=R.Tensor((1, 128), dtype="float32"))' in text
    ex = tunefarm.compile(bound)
    np.testing.assert_allclose(ex(image), numpy_mlp(image, mlp_params), atol=1e-4)
    native = tunefarm.compile(BindParams("main", mlp_params)(MyModule))
    assert native.kind == "native"
    np.testing.assert_allclose(native(image), numpy_mlp(image, mlp_params), atol=1e-4)


def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    n, m = A.shape[0], B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def test_block_builder_example_from_the_course():
    A = Var("A", TensorStructInfo((128, 128), "float32"))
    B = Var("B", TensorStructInfo((128, 128), "float32"))
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    mod = bb.get()
    assert sorted(mod.prim_funcs()) == ["te_matmul", "te_relu"]
    text = mod["main"].script()
    assert "R.call_tir(te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), dtype=\"float32\"))" in text
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128), dtype=np.float32) for _ in range(2))
    got = tunefarm.compile(mod)(a, b)
    np.testing.assert_allclose(got, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_block_builder_params_at_the_start_and_topi_style_ops(mlp_params, image):
    x = Var("x", TensorStructInfo((1, 784), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit_te(te.ops.dense, x, tunefarm.graph.const(mlp_params["w0"]))
            h = bb.emit_te(te.ops.add, h, tunefarm.graph.const(mlp_params["b0"]))
            h = bb.emit_te(te_relu, h)
            h = bb.emit_te(te.ops.dense, h, tunefarm.graph.const(mlp_params["w1"]))
            gv = bb.emit_output(bb.emit_te(te.ops.add, h, tunefarm.graph.const(mlp_params["b1"])))
        bb.emit_func_output(gv)
    ex = tunefarm.compile(bb.get())
    np.testing.assert_allclose(ex(image), numpy_mlp(image, mlp_params), atol=1e-4)


def test_nn_module_export_like_export_tvm():
    from tunefarm import nn

    class MLPModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 256)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            x = self.fc1(x)
            x = self.relu1(x)
            x = self.fc2(x)
            return x

    model = MLPModel()
    mod, params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    assert list(params) == ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert [p.name for p in mod["forward"].params] == ["x", *params]
    data = np.random.default_rng(1).random((1, 784), dtype=np.float32)
    # the course's flow: weights passed as inputs to the compiled function
    ex = tunefarm.compile(mod, target="llvm")
    out = VirtualMachine(ex, "cpu")["forward"](data, *params.values())
    np.testing.assert_allclose(out, model(data), rtol=1e-5, atol=1e-5)
    # or bound as constants
    np.testing.assert_allclose(tunefarm.compile(mod, params)(data), model(data), rtol=1e-5, atol=1e-5)


def test_course_modules_example_runs(tmp_path):
    import subprocess
    import sys

    from graph_helpers import MLP_PARAMS, ROOT

    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "course_modules.py"), "--params", str(MLP_PARAMS)],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if "max |diff| to numpy" in ln]
    assert len(lines) == 5
    assert all(float(ln.rsplit(" ", 1)[1]) <= 1e-4 for ln in lines)
