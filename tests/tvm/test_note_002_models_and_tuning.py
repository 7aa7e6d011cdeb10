"""Course note 002, sections 4-5 (end-to-end model execution, automatic program optimization): every code
segment, imports changed only.

The note is plain text without code fences; ``s<N>`` numbers its code segments in order (see the report
that lists them). ``Module`` (the 128^3 matmul the tuning sections start from) and ``a_nd``/``b_nd``/``c_nd``
come from the course chapter before this note; the tests define them as that chapter does. Tuning runs with
a few trials on one local worker process (``num_tuning_cores=1``, a TVM argument).
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.tvm import meta_schedule as ms
from tunefarm.tvm import relax
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tvm_note_helpers import CLASS_NAMES as class_names
from tvm_note_helpers import IPython, mlp_weights, pkl

classes = class_names


# s1
def numpy_mlp(data,w0,b0,w1,b1):
    linear0 = data @ w0.T + b0
    relu = np.maximum(linear0, 0)
    linear1 = relu @ w1.T + b1
    return linear1


# s2
# 定义全连接层0
def lnumpy_linear0(X: np.ndarray, W: np.ndarray, B: np.ndarray, Z: np.ndarray):
    Y = np.empty((1, 128), dtype="float32")
    for i in range(1):
        for j in range(128):
            for k in range(784):
                if k == 0:
                    Y[i, j] = 0
                Y[i, j] += X[i, k] * W[j, k]
    for i in range(1):
        for j in range(128):
            Z[i, j] = Y[i, j] + B[j]
# 定义ReLU激活层
def lnumpy_relu0(X: np.ndarray, Y: np.ndarray):
    for i in range(1):
        for j in range(128):
            Y[i, j] = np.maximum(X[i, j], 0)
# 定义全连接层1
def lnumpy_linear1(X: np.ndarray, W: np.ndarray, B: np.ndarray, Z: np.ndarray):
    Y = np.empty((1, 10), dtype="float32")
    for i in range(1):
        for j in range(10):
            for k in range(128):
                if k == 0:
                    Y[i, j] = 0
                Y[i, j] += X[i, k] * W[j, k]
    for i in range(1):
        for j in range(10):
            Z[i, j] = Y[i, j] + B[j]
# 定义整体模型
def lnumpy_mlp(data, w0, b0, w1, b1):
    lv0 = np.empty((1, 128), dtype="float32")
    lnumpy_linear0(data, w0, b0, lv0)
    lv1 = np.empty((1, 128), dtype="float32")
    lnumpy_relu0(lv0, lv1)
    out = np.empty((1, 10), dtype="float32")
    lnumpy_linear1(lv1, w1, b1, out)
    return out


# s7
# 上图简单神经网络的实现,编译执行要去掉注释
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


# s13
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


# the 128^3 matmul of the course chapter before this note (sections 5.1-5.3 schedule it)
@tvm.script.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"),
             B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


# s22
def stochastic_schedule_mm(sch: tvm.tir.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def register_torch_env_funcs():
    """s14 / s33, as written."""
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


def register_numpy_env_funcs():
    @tvm.register_func("env.linear", override=True)
    def np_linear(x, w, b, out):
        np.matmul(x, w.T, out=out)
        np.add(out, b, out=out)

    @tvm.register_func("env.relu", override=True)
    def np_relu(x, out):
        np.maximum(x, 0, out=out)


def reference(p, img):
    return numpy_mlp(img.reshape(1, 784), p["w0"], p["b0"], p["w1"], p["b1"])


def matmul_arrays():
    rng = np.random.default_rng(11)
    a_np, b_np = (rng.random((128, 128), dtype=np.float32) for _ in range(2))
    return a_np, b_np, tvm.nd.array(a_np), tvm.nd.array(b_np), tvm.nd.empty((128, 128), dtype="float32")


# ----------------------------------------------------------------------------------------------------------
def test_s5_s6_numpy_predictions(in_course_dir, img, capsys):
    # s5
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    res = numpy_mlp(img.reshape(1, 784),
                    mlp_params["w0"],
                    mlp_params["b0"],
                    mlp_params["w1"],
                    mlp_params["b1"])
    pred_kind = np.argmax(res, axis=1)
    print("预测的类别:", classes[pred_kind[0]])
    # s6
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    res2 = lnumpy_mlp(img.reshape(1, 784),
                      mlp_params["w0"],
                      mlp_params["b0"],
                      mlp_params["w1"],
                      mlp_params["b1"])
    pred_kind = np.argmax(res2, axis=1)
    print("预测的类别:", classes[pred_kind[0]])

    np.testing.assert_allclose(res2, res, rtol=1e-4, atol=1e-4)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == lines[1] == f"预测的类别: {classes[res.argmax()]}"


def test_s8_s11_call_dps_packed_binding_and_dataflow_block(img):
    # s8 and s11, in the function they come from
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"), w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n",), "float32")):
        n = T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            gv0 = R.call_dps_packed("relu0", (lv0, ), R.Tensor((1, n), "float32"))
            R.output(gv0)
        return gv0

    mod = tvm.IRModule({"linear0": MyModule["linear0"], "relu0": MyModule["relu0"], "main": main})
    p = mlp_weights()
    x = img.reshape(1, 784)
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x, p["w0"], p["b0"]).numpy(), np.maximum(x @ p["w0"].T + p["b0"], 0),
                               rtol=1e-4, atol=1e-4)


def test_s9_destination_passing_in_numpy(img):
    def lnumpy_call_dps_packed(prim_func, inputs, shape, dtype):
        res = np.empty(shape, dtype=dtype)
        prim_func(*inputs, res)
        return res

    got = lnumpy_call_dps_packed(lnumpy_relu0, (img.reshape(1, 784)[:, :128] - 0.5,), (1, 128), "float32")
    np.testing.assert_array_equal(got, np.maximum(img.reshape(1, 784)[:, :128] - 0.5, 0))


def test_s12_build_and_run_my_module(in_course_dir, img, capsys):
    mlp_params = in_course_dir
    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    nd_res = vm["main"](data_nd,
                        nd_params["w0"],
                        nd_params["b0"],
                        nd_params["w1"],
                        nd_params["b1"])
    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("预测的类别:", classes[pred_kind[0]])

    np.testing.assert_allclose(nd_res.numpy(), reference(mlp_params, img), rtol=1e-4, atol=1e-4)
    assert capsys.readouterr().out == f"预测的类别: {classes[reference(mlp_params, img).argmax()]}\n"


@pytest.mark.torch
def test_s13_s14_s15_extern_calls_to_torch(in_course_dir, img):
    mlp_params = in_course_dir
    register_torch_env_funcs()
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    # s15
    ex = relax.build(MyModuleWithExternCall, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    nd_res = vm["main"](data_nd,
                        nd_params["w0"],
                        nd_params["b0"],
                        nd_params["w1"],
                        nd_params["b1"])
    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("MyModuleWithExternCall Prediction:", class_names[pred_kind[0]])
    np.testing.assert_allclose(nd_res.numpy(), reference(mlp_params, img), rtol=1e-4, atol=1e-4)


def test_s16_to_s20_mixture_bound_printed_and_shown_with_metadata(in_course_dir, img, capsys):
    register_numpy_env_funcs()

    # s16
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

    # s17
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    # s18
    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    shown = IPython.display.Code(MyModuleWithParams.script(), language="python")
    # s20
    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    script_with_meta = MyModuleWithParams.script(show_meta=True)
    print(script_with_meta)

    assert "metadata[\"relax.expr.Constant\"][3]" in str(shown) and "Metadata omitted" in str(shown)
    assert capsys.readouterr().out.strip().startswith("# from tunefarm.script import I, T, ir_module\n\nmetadata = {")
    vm = relax.VirtualMachine(relax.build(MyModuleWithParams, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(img.reshape(1, 784))).numpy(), reference(mlp_params, img),
                               rtol=1e-4, atol=1e-4)


def test_s21_fixed_split():
    sch=tvm.tir.Schedule(Module)
    block_c=sch.get_block("C","main")
    i,j,k=sch.get_loops(block_c)
    j0,j1=sch.split(j,factors=[None,4])
    shown = IPython.display.Code(sch.mod.script(), language="python")

    assert "for i, j_0, j_1, k in T.grid(128, 32, 4, 128):" in str(shown)
    a_np, b_np, a_nd, b_nd, c_nd = matmul_arrays()
    tvm.build(sch.mod, target="llvm")["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)


def test_s22_s23_a_stochastic_schedule_and_its_trace(capsys):
    sch=tvm.tir.Schedule(Module)
    sch=stochastic_schedule_mm(sch)
    IPython.display.Code(sch.mod.script(), language="python")
    print(sch.trace)

    printed = capsys.readouterr().out.splitlines()
    decision = sch.trace.get_decision(2)
    assert printed[0] == "def apply_trace(sch):"
    assert printed[3] == f"    v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, " \
                         f"decision={decision})"
    assert printed[-1] == "    b8 = sch.decompose_reduction(block=b0, loop=l3)"
    assert decision[0] * decision[1] == 128


def test_s24_random_search(capsys):
    a_np, b_np, a_nd, b_nd, c_nd = matmul_arrays()

    def random_search(mod:tvm.IRModule,num_trials=10):
        best_result=None
        best_sch=None
        for i in range(num_trials):
            sch=stochastic_schedule_mm(tvm.tir.Schedule(mod))
            lib=tvm.build(sch.mod,target="llvm")
            f_time_after=lib.time_evaluator("main",tvm.cpu())
            result=f_time_after(a_nd, b_nd, c_nd).mean
            print("==========Attempt %d,time-cost:%.9f ms======="%(i,result*1000))
            print(sch.trace)
            if best_result is None or result<best_result:
                best_result=result
                best_sch=sch
        return best_sch
    sch=random_search(Module)

    out = capsys.readouterr().out
    assert out.count("==========Attempt ") == 10 and out.count("def apply_trace(sch):") == 10
    assert "==========Attempt 9,time-cost:" in out
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)  # the last attempt's result
    c = np.zeros((128, 128), "float32")
    tvm.build(sch.mod, target="llvm")["main"](a_np, b_np, c)
    np.testing.assert_allclose(c, a_np @ b_np, rtol=1e-4)


def test_s26_s27_s28_tune_tir_with_the_stochastic_space_then_the_auto_space(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # no logging configured, as in a plain script
    # s26
    database = ms.tune_tir(
        mod=Module,
        target="llvm --num-cores=1",
        max_trials_global=3,
        num_trials_per_iter=3,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir="./tune_tmp",
        task_name="main",
        num_tuning_cores=1,
    )
    sch = ms.tir_integration.compile_tir(database, Module, "llvm --num-cores=1")
    first = sch.trace
    assert [i.kind for i in first.insts][:3] == ["GetBlock", "GetLoops", "SamplePerfectTile"]
    again = tvm.tir.Schedule(Module)
    first.apply_to_schedule(again, remove_postproc=False)  # the best trace, replayed as TVM users do
    tvm.ir.assert_structural_equal(again.mod, sch.mod)
    # s28: the task table shows while tuning, as MetaSchedule's log does
    shown = capsys.readouterr().out
    assert "ID | Name |    FLOP | Weight | Speed (GFLOPS) | Latency (us) | Weighted Latency (us) | Trials | Done" \
        in shown
    assert "0  | main | 4194304 |" in shown and "Total trials: 3" in shown
    # s27
    database = ms.tune_tir(
        mod=Module,
        target="llvm --num-cores=1",
        max_trials_global=3,
        num_trials_per_iter=3,
        work_dir="./tune_tmp",
        task_name="main",
        num_tuning_cores=1,
    )
    sch = ms.tir_integration.compile_tir(database, Module, "llvm --num-cores=1")

    assert database.count_records() == 6  # each call measures its own budget, into the same work_dir
    assert (tmp_path / "tune_tmp" / "database.sqlite").exists()
    a_np, b_np, a_nd, b_nd, c_nd = matmul_arrays()
    tvm.build(sch.mod, target="llvm")["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)
    assert logging.getLogger("tunefarm.search").handlers == []  # the tuning log's handler is gone again


def test_s31_to_s39_tune_linear0_and_swap_it_into_the_model(in_course_dir, img, tmp_path, capsys):
    register_numpy_env_funcs()
    # s31
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    data_nd=tvm.nd.array(img.reshape(1,784))
    nd_params={k:tvm.nd.array(v) for k,v in mlp_params.items()}

    # s32
    @tvm.script.ir_module
    class MyModuleMixture:
        @T.prim_func
        def linear0(X: T.Buffer((1, 784), "float32"),
                    W: T.Buffer((128, 784), "float32"),
                    B: T.Buffer((128,), "float32"),
                    Z: T.Buffer((1, 128), "float32")):
            T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
            Y = T.alloc_buffer((1, 128), "float32")
            for i, j, k in T.grid(1, 128, 784):
                with T.block("Y"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
            for i, j in T.grid(1, 128):
                with T.block("Z"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Z[vi, vj] = Y[vi, vj] + B[vj]
        @R.function
        def main(x: R.Tensor((1, 784), "float32"),
                 w0: R.Tensor((128, 784), "float32"),
                 b0: R.Tensor((128,), "float32"),
                 w1: R.Tensor((10, 128), "float32"),
                 b1: R.Tensor((10,), "float32")):
            with R.dataflow():
                lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
                lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
                out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
                R.output(out)
            return out

    # s34
    MyModuleWithParams=relax.transform.BindParams("main",nd_params)(MyModule)
    ex = relax.build(MyModuleWithParams, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    nd_res = vm["main"](data_nd)
    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("MyModuleWithExternCall Prediction:", classes[pred_kind[0]])
    # s35
    ftimer=vm.module.time_evaluator("main",tvm.cpu(),number=100)
    print("==========Attempt %d,time-cost:%.9f ms======="%(0,ftimer(data_nd).mean*1000))
    expected = reference(mlp_params, img)
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)

    # s36
    mod_linear = tvm.IRModule.from_expr(MyModuleMixture["linear0"].with_attr("global_symbol", "main"))
    database = ms.tune_tir(
        mod=mod_linear,
        target="llvm --num-cores=1",
        max_trials_global=3,
        num_trials_per_iter=3,
        work_dir="./tune_tmp",
        task_name="main",
        num_tuning_cores=1,
    )
    sch = ms.tir_integration.compile_tir(database, mod_linear, "llvm --num-cores=1")
    assert list(mod_linear) == ["main"] and sch is not None

    # s37
    MyModuleWithParams2 = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    new_func = sch.mod["main"].with_attr("global_symbol", "linear0")
    gv = MyModuleWithParams2.get_global_var("linear0")
    MyModuleWithParams2.update_func(gv, new_func)
    assert MyModuleWithParams2["linear0"] is new_func

    # s38
    ex = relax.build(MyModuleWithParams2, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    nd_res = vm["main"](data_nd)
    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("MyModuleWithParams2 Prediction:", class_names[pred_kind[0]])
    # s39
    ftimer=vm.module.time_evaluator("main",tvm.cpu(),number=100)
    print("==========Attempt %d,time-cost:%.9f ms======="%(0,ftimer(data_nd).mean*1000))

    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
    out = capsys.readouterr().out
    assert f"MyModuleWithExternCall Prediction: {classes[expected.argmax()]}" in out
    assert f"MyModuleWithParams2 Prediction: {class_names[expected.argmax()]}" in out
    timings = [float(line.split("time-cost:")[1].split(" ms")[0]) for line in out.splitlines()
               if line.startswith("==========Attempt 0,time-cost:")]
    assert len(timings) == 2 and all(0 < t < 1000 for t in timings)
