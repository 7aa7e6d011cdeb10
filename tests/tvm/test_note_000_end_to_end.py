"""Course note 000 (MLC lesson 3, end-to-end model execution): every code block, imports changed only.

Each test names its block (``b<N>``: the N-th fenced block of the note). Blocks that are the note's printed
results are parsed as written and compared with what tunefarm computes or prints. The weights are seeded
stand-ins of the course's shapes (``in_course_dir`` writes them where the note opens its pickle).
"""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.tvm import relax
from tunefarm.tvm.script import ir as I
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T
from tunefarm.ir.structural import assert_structural_equal

from tvm_note_helpers import CLASS_NAMES as class_names
from tvm_note_helpers import IPython, mlp_weights, pkl


# b1 -------------------------------------------------------------------------------------------------------
def numpy_mlp(data, w0, b0, w1, b1):
    lv0 = data @ w0.T + b0
    lv1 = np.maximum(lv0, 0)
    lv2 = lv1 @ w1.T + b1
    return lv2


# b2 -------------------------------------------------------------------------------------------------------
# 全连接层0
def lnumpy_linear0(X: np.ndarray, W: np.ndarray, B: np.ndarray, Z: np.ndarray):
    Y = np.empty((1, 128), dtype="float32")
    for i in range(1):
        for j in range(128):
            for k in range(784):
                if k == 0:
                    Y[i, j] = 0
                Y[i, j] = Y[i, j] + X[i, k] * W[j, k]

    for i in range(1):
        for j in range(128):
            Z[i, j] = Y[i, j] + B[j]

# relu激活层
def lnumpy_relu0(X: np.ndarray, Y: np.ndarray):
     for i in range(1):
        for j in range(128):
            Y[i, j] = np.maximum(X[i, j], 0)

# 全连接层1
def lnumpy_linear1(X: np.ndarray, W: np.ndarray, B: np.ndarray, Z: np.ndarray):
    Y = np.empty((1, 10), dtype="float32")
    for i in range(1):
        for j in range(10):
            for k in range(128):
                if k == 0:
                    Y[i, j] = 0
                Y[i, j] = Y[i, j] + X[i, k] * W[j, k]

    for i in range(1):
        for j in range(10):
            Z[i, j] = Y[i, j] + B[j]

# 整体模型
def lnumpy_mlp(data, w0, b0, w1, b1):
    lv0 = np.empty((1, 128), dtype="float32")
    lnumpy_linear0(data, w0, b0, lv0)

    lv1 = np.empty((1, 128), dtype="float32")
    lnumpy_relu0(lv0, lv1)

    out = np.empty((1, 10), dtype="float32")
    lnumpy_linear1(lv1, w1, b1, out)
    return out


# b3 -------------------------------------------------------------------------------------------------------
@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (1, n), "float32")
        Y = T.match_buffer(y, (1, n), "float32")
        for i, j in T.grid(1, n):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear0(x: T.handle,
                w: T.handle,
                b: T.handle,
                z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n, ), "float32")
        Z = T.match_buffer(z, (1, n), "float32")
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, k in T.grid(1, n, m):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("relu0", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("linear0", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


# b12 ------------------------------------------------------------------------------------------------------
@tvm.script.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        # block 0
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


# b16 ------------------------------------------------------------------------------------------------------
@tvm.script.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(x: T.handle,
                w: T.handle,
                b: T.handle,
                z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n, ), "float32")
        Z = T.match_buffer(z, (1, n), "float32")
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, k in T.grid(1, n, m):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


def register_torch_env_funcs():
    """b14, as written (torch implementations of ``env.linear`` / ``env.relu``)."""
    import torch

    @tvm.register_func("env.linear", override=True)
    def torch_linear(x: tvm.nd.NDArray,
                     w: tvm.nd.NDArray,
                     b: tvm.nd.NDArray,
                     out: tvm.nd.NDArray):
        x_torch = torch.from_dlpack(x)
        w_torch = torch.from_dlpack(w)
        b_torch = torch.from_dlpack(b)
        out_torch = torch.from_dlpack(out)
        torch.mm(x_torch, w_torch.T, out=out_torch)
        torch.add(out_torch, b_torch, out=out_torch)

    @tvm.register_func("env.relu", override=True)
    def lnumpy_relu(x: tvm.nd.NDArray,
                    out: tvm.nd.NDArray):
        x_torch = torch.from_dlpack(x)
        out_torch = torch.from_dlpack(out)
        torch.maximum(x_torch, torch.Tensor([0.0]), out=out_torch)

    return torch_linear, lnumpy_relu


def register_numpy_env_funcs():
    """``env.linear`` / ``env.relu`` in numpy, for the tests that do not run b14 itself."""
    calls = []

    @tvm.register_func("env.linear", override=True)
    def np_linear(x, w, b, out):
        calls.append(("env.linear", type(x).__name__))
        np.matmul(x, w.T, out=out)
        np.add(out, b, out=out)

    @tvm.register_func("env.relu", override=True)
    def np_relu(x, out):
        calls.append(("env.relu", type(x).__name__))
        np.maximum(x, 0, out=out)

    return calls


def inputs(params, image):
    return image.reshape(1, 784), params["w0"], params["b0"], params["w1"], params["b1"]


# ----------------------------------------------------------------------------------------------------------
def test_b1_b2_numpy_and_low_level_numpy_mlp_agree(img):
    p = mlp_weights()
    data = img.reshape(1, 784)
    res = numpy_mlp(data, p["w0"], p["b0"], p["w1"], p["b1"])
    low = lnumpy_mlp(data, p["w0"], p["b0"], p["w1"], p["b1"])
    assert res.shape == (1, 10)
    np.testing.assert_allclose(low, res, rtol=1e-4, atol=1e-4)


def test_b3_my_module_parses_into_two_kernels_and_a_graph_function():
    assert list(MyModule) == ["relu0", "linear0", "main"]
    assert isinstance(MyModule["linear0"], tvm.tir.PrimFunc)
    assert isinstance(MyModule["main"], relax.Function)
    assert [p.name for p in MyModule["main"].params] == ["x", "w0", "b0", "w1", "b1"]


def test_b4_one_call_dps_packed_binding():
    @tvm.script.ir_module
    class OneCall:
        @T.prim_func
        def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
            m, n = T.int64(), T.int64()
            X = T.match_buffer(x, (1, m), "float32")
            W = T.match_buffer(w, (n, m), "float32")
            B = T.match_buffer(b, (n,), "float32")
            Z = T.match_buffer(z, (1, n), "float32")
            for i, j, k in T.grid(1, n, m):
                with T.block("Z"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        Z[vi, vj] = B[vj]
                    Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

        @R.function
        def main(x: R.Tensor((1, "m"), "float32"), w0: R.Tensor(("n", "m"), "float32"),
                 b0: R.Tensor(("n",), "float32")):
            n = T.int64()
            with R.dataflow():
                lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), dtype="float32"))
                R.output(lv0)
            return lv0

    p = mlp_weights()
    x = np.random.default_rng(1).random((1, 784), dtype=np.float32)
    vm = relax.VirtualMachine(relax.build(OneCall, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x, p["w0"], p["b0"]).numpy(), x @ p["w0"].T + p["b0"], rtol=1e-4,
                               atol=1e-4)


def test_b5_b7_destination_passing_in_numpy(img):
    # b5
    def lnumpy_call_dps_packed(prim_func, inputs, shape, dtype):
        res = np.empty(shape, dtype=dtype)
        prim_func(*inputs, res)
        return res

    # b7
    def lnumpy_mlp_with_call_dps_packed(data, w0, b0, w1, b1):
        lv0 = lnumpy_call_dps_packed(lnumpy_linear0, (data, w0, b0), (1, 128), dtype="float32")
        lv1 = lnumpy_call_dps_packed(lnumpy_relu0, (lv0, ), (1, 128), dtype="float32")
        out = lnumpy_call_dps_packed(lnumpy_linear1, (lv1, w1, b1), (1, 10), dtype="float32")
        return out

    p = mlp_weights()
    got = lnumpy_mlp_with_call_dps_packed(*inputs(p, img))
    np.testing.assert_allclose(got, numpy_mlp(*inputs(p, img)), rtol=1e-4, atol=1e-4)


def test_b8_two_dataflow_blocks(img):
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
            w0: R.Tensor(("n", "m"), "float32"),
            b0: R.Tensor(("n", ), "float32"),
            w1: R.Tensor(("k", "n"), "float32"),
            b1: R.Tensor(("k", ), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()

        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            gv0 = R.call_dps_packed("relu0", (lv0, ), R.Tensor((1, n), "float32"))
            R.output(gv0)

        with R.dataflow():
            out = R.call_dps_packed("linear0", (gv0, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out

    assert main.script().count("with R.dataflow():") == 2
    mod = tvm.IRModule({"relu0": MyModule["relu0"], "linear0": MyModule["linear0"], "main": main})
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    p = mlp_weights()
    np.testing.assert_allclose(vm["main"](*inputs(p, img)).numpy(), numpy_mlp(*inputs(p, img)), rtol=1e-4,
                               atol=1e-4)


def test_b9_b10_b11_build_and_run_my_module(in_course_dir, img, capsys):
    mlp_params = in_course_dir
    # b9
    ex = relax.build(MyModule, target="llvm")
    # b10
    vm = relax.VirtualMachine(ex, tvm.cpu())
    # b11
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}

    nd_res = vm["main"](data_nd,
                        nd_params["w0"],
                        nd_params["b0"],
                        nd_params["w1"],
                        nd_params["b1"])

    print(nd_res)
    np.testing.assert_allclose(nd_res.numpy(), numpy_mlp(*inputs(mlp_params, img)), rtol=1e-4, atol=1e-4)
    assert str(nd_res.numpy()[0, 0])[:5] in capsys.readouterr().out


def test_b13_an_extern_call_binding(img):
    calls = register_numpy_env_funcs()

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"), w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n",), "float32")):
        n = T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, n), "float32"))
            R.output(lv0)
        return lv0

    vm = relax.VirtualMachine(relax.build(tvm.IRModule.from_expr(main), target="llvm"), tvm.cpu())
    p = mlp_weights()
    x = img.reshape(1, 784)
    np.testing.assert_allclose(vm["main"](x, p["w0"], p["b0"]).numpy(), x @ p["w0"].T + p["b0"], rtol=1e-4,
                               atol=1e-4)
    assert calls == [("env.linear", "NDArray")]  # registered functions get NDArrays


@pytest.mark.torch
def test_b14_b15_torch_functions_registered_and_called(in_course_dir, img, capsys):
    mlp_params = in_course_dir
    torch_linear, lnumpy_relu = register_torch_env_funcs()
    assert callable(torch_linear) and callable(lnumpy_relu)
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    # b15
    ex = relax.build(MyModuleWithExternCall, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())

    nd_res = vm["main"](data_nd,
                        nd_params["w0"],
                        nd_params["b0"],
                        nd_params["w1"],
                        nd_params["b1"])

    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("MyModuleWithExternCall Prediction:", class_names[pred_kind[0]])
    expected = numpy_mlp(*inputs(mlp_params, img))
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
    assert capsys.readouterr().out == f"MyModuleWithExternCall Prediction: {class_names[expected.argmax()]}\n"


@pytest.mark.torch
def test_b16_mixture_of_a_kernel_and_library_functions(img):
    register_torch_env_funcs()
    p = mlp_weights()
    vm = relax.VirtualMachine(relax.build(MyModuleMixture, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](*inputs(p, img)).numpy(), numpy_mlp(*inputs(p, img)), rtol=1e-4,
                               atol=1e-4)


def test_b17_b18_bind_params_and_show_the_module(in_course_dir, img):
    calls = register_numpy_env_funcs()
    # b17
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    # b18
    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    shown = IPython.display.Code(MyModuleWithParams.script(), language="python")

    text = str(shown)
    assert 'def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):' in text
    assert 'R.call_dps_packed("linear0", (x, metadata["relax.expr.Constant"][0], ' \
           'metadata["relax.expr.Constant"][1]), out_sinfo=R.Tensor((1, 128), dtype="float32"))' in text
    assert text.rstrip().endswith("# Metadata omitted. Use show_meta=True in script() method to show it.")
    vm = relax.VirtualMachine(relax.build(MyModuleWithParams, target="llvm"), tvm.cpu())
    x = tvm.nd.array(img.reshape(1, 784))
    np.testing.assert_allclose(vm["main"](x).numpy(), numpy_mlp(*inputs(mlp_params, img)), rtol=1e-4, atol=1e-4)
    assert [c[0] for c in calls] == ["env.relu", "env.linear"]


def test_b19_the_printed_bound_module_parses_and_runs(img):
    register_numpy_env_funcs()
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @I.ir_module
    class Module:
        @T.prim_func
        def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
            m = T.int64()
            X = T.match_buffer(x, (1, m))
            n = T.int64()
            W = T.match_buffer(w, (n, m))
            B = T.match_buffer(b, (n,))
            Z = T.match_buffer(z, (1, n))
            # with T.block("root"):
            Y = T.alloc_buffer((1, n))
            for i, j, k in T.grid(1, n, m):
                with T.block("Y"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(X[vi, vk], W[vj, vk])
                    T.writes(Y[vi, vj])
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
            for i, j in T.grid(1, n):
                with T.block("Z"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(Y[vi, vj], B[vj])
                    T.writes(Z[vi, vj])
                    Z[vi, vj] = Y[vi, vj] + B[vj]

        @R.function
        def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
            with R.dataflow():
                lv0 = R.call_dps_packed("linear0", (x, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1]), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                lv1 = R.call_dps_packed("env.relu", (lv0,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                out = R.call_dps_packed("env.linear", (lv1, metadata["relax.expr.Constant"][2], metadata["relax.expr.Constant"][3]), out_sinfo=R.Tensor((1, 10), dtype="float32"))
                R.output(out)
            return out
    # Metadata omitted. Use show_meta=True in script() method to show it.

    assert_structural_equal(Module["linear0"], MyModuleMixture["linear0"])
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    x = img.reshape(1, 784)
    np.testing.assert_allclose(vm["main"](x).numpy(), numpy_mlp(*inputs(p, img)), rtol=1e-4, atol=1e-4)


def test_b20_script_with_metadata_shows_the_weights_and_parses_back(in_course_dir, img, capsys):
    register_numpy_env_funcs()
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    # b20
    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    script_with_meta = MyModuleWithParams.script(show_meta=True)
    print(script_with_meta)

    out = capsys.readouterr().out
    assert out.startswith("# from tunefarm.script import I, T, ir_module\n\nmetadata = {\"relax.expr.Constant\": [")
    assert "Metadata omitted" not in out
    from tunefarm.script import from_source

    again = from_source(script_with_meta)
    assert again.script(show_meta=True) == script_with_meta
    vm = relax.VirtualMachine(relax.build(again, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](img.reshape(1, 784)).numpy(), numpy_mlp(*inputs(mlp_params, img)),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.torch
def test_b21_the_homework_imports():
    import numpy as np
    from tvm_note_helpers import pkl
    import torch
    import torch.nn.functional as F
    from tunefarm import tvm
    import tunefarm.tvm.testing

    from torch import nn
    from tunefarm.tvm import topi, relax, te
    from tunefarm.tvm.script import tir as T

    assert callable(topi.nn.dense) and callable(relax.BlockBuilder) and callable(te.compute)
    assert callable(tvm.testing.assert_allclose) and callable(pkl.load) and F.relu and nn.Linear and np.pi
    assert T.prim_func is not None and torch.ones(1).item() == 1.0
