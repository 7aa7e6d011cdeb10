"""Course note 003 (MLC chapter 5, integration with machine learning frameworks), 5.4-5.6 importing from PyTorch: every code block,
imports changed only. ``b<N>`` is the N-th fenced block of the note.

This chapter was written for an older Relax: its printed modules use ``Tensor(...)`` without ``R.``,
``Tensor(None, "float32", ndim = 2)``, ``R.call_tir(f, args, shape, dtype=...)``, ``meta[relay.Constant][i]``
and ``relax.nn.dense``; they are parsed as printed and run. Its first block's ``from __future__ import
annotations`` is what lets such annotations stand in a Python file, so it heads this one too.
"""
# b1
# This is needed for deferring annotation parsing in TVMScript
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.tvm import relax
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tvm_note_helpers import CLASS_NAMES as class_names
from tvm_note_helpers import mlp_weights, pkl

from tunefarm.tvm import te


# b9 (the functions the later blocks use)
def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


# b13
def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


# ----------------------------------------------------------------------------------------------------------
# 5.4: importing from PyTorch
# ----------------------------------------------------------------------------------------------------------
def fx_translator():
    """b41, as written (older spellings: ``DynTensorType``, ``relax.Var(name, shape, type)``)."""
    import torch.nn as nn

    def map_param(param: nn.Parameter):
        ndim = len(param.data.shape)
        return relax.const(
            param.data.cpu().numpy(), relax.DynTensorType(ndim, "float32")
        )

    def fetch_attr(fx_mod, target: str):
        """Helper function to fetch an attr"""
        target_atoms = target.split('.')
        attr_itr = fx_mod
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistant target {'.'.join(target_atoms[:i])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def from_fx(fx_mod, input_shapes, call_function_map, call_module_map):
        input_index = 0
        node_map = {}
        named_modules = dict(fx_mod.named_modules())

        bb = relax.BlockBuilder()

        fn_inputs = []
        fn_output = None
        with bb.function("main"):
            with bb.dataflow():
                for node in fx_mod.graph.nodes:
                    if node.op == "placeholder":
                        # create input placeholder
                        shape = input_shapes[input_index]
                        input_index += 1
                        input_var = relax.Var(
                            node.target, shape, relax.DynTensorType(len(shape), "float32")
                        )
                        fn_inputs.append(input_var)
                        node_map[node] = input_var
                    elif node.op == "get_attr":
                        node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                    elif node.op == "call_function":
                        node_map[node] = call_function_map[node.target](bb, node_map, node)
                    elif node.op == "call_module":
                        named_module = named_modules[node.target]
                        node_map[node] = call_module_map[type(named_module)](bb, node_map, node, named_module)
                    elif node.op == "output":
                        output = node_map[node.args[0]]
                        assert fn_output is None
                        fn_output = bb.emit_output(output)
            # output and finalize the function
            bb.emit_func_output(output, fn_inputs)
        return bb.get()

    return map_param, fetch_attr, from_fx


def map_relu(bb, node_map, node):
    """b42's ``map_relu`` (b52 and b55 use it)."""
    A = node_map[node.args[0]]
    return bb.emit_te(te_relu, A)


def mlp_model_with_weights(params):
    """b48 and b49"""
    import torch
    import torch.nn as nn

    class MLP(nn.Module):
        def __init__(self):
            super(MLP, self).__init__()
            self.linear0 = nn.Linear(784, 128, bias=True)
            self.relu = nn.ReLU()
            self.linear1 = nn.Linear(128, 10, bias=True)

        def forward(self, x):
            x = self.linear0(x)
            x = self.relu(x)
            x = self.linear1(x)
            return x

    mlp_model = MLP()

    mlp_params = params
    mlp_model.linear0.weight.data = torch.from_numpy(mlp_params["w0"])
    mlp_model.linear0.bias.data = torch.from_numpy(mlp_params["b0"])
    mlp_model.linear1.weight.data = torch.from_numpy(mlp_params["w1"])
    mlp_model.linear1.bias.data = torch.from_numpy(mlp_params["b1"])
    return mlp_model


@pytest.mark.torch
def test_b36_to_b42_matmul_relu_model_from_torch_fx(capsys):
    import torch
    import torch.nn as nn
    from torch import fx

    torch.manual_seed(1)

    # b36
    class MyModel(nn.Module):
        def __init__(self):
            super(MyModel, self).__init__()
            self.weight = nn.Parameter(torch.randn(128, 128))

        def forward(self, x):
            x = torch.matmul(x, self.weight)
            x = torch.relu(x)
            return x

    # b37 (b39, ``print_tabular``, needs the tabulate package, which is not installed here)
    model = MyModel()
    fx_module = fx.symbolic_trace(model)
    print(type(fx_module))
    assert "GraphModule" in capsys.readouterr().out
    map_param, fetch_attr, from_fx = fx_translator()

    # b42
    def map_matmul(bb, node_map, node: fx.Node):
        A = node_map[node.args[0]]
        B = node_map[node.args[1]]
        return bb.emit_te(te_matmul, A, B)

    def map_relu(bb, node_map, node: fx.Node):
        A = node_map[node.args[0]]
        return bb.emit_te(te_relu, A)

    MyModule = from_fx(
        fx_module,
        input_shapes = [(1, 128)],
        call_function_map = {
          torch.matmul: map_matmul,
          torch.relu: map_relu,
        },
        call_module_map={},
    )

    MyModule.show()

    assert "R.call_tir(te_relu, (lv,), out_sinfo=R.Tensor((1, 128), dtype=\"float32\"))" in capsys.readouterr().out
    x = np.random.default_rng(4).standard_normal((1, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), model(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-4)


def test_b43_the_printed_older_fx_module():
    w = np.random.default_rng(5).standard_normal((128, 128)).astype("float32")
    metadata = {"relax.expr.Constant": [w]}

    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def te_matmul(rxplaceholder: T.Buffer[(1, 128), "float32"], rxplaceholder_1: T.Buffer[(128, 128), "float32"], matmul: T.Buffer[(1, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "te_matmul", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1, i2 in T.grid(1, 128, 128):
                with T.block("matmul"):
                    i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                    T.reads(rxplaceholder[i, k], rxplaceholder_1[k, j])
                    T.writes(matmul[i, j])
                    with T.init():
                        matmul[i, j] = T.float32(0)
                    matmul[i, j] = matmul[i, j] + rxplaceholder[i, k] * rxplaceholder_1[k, j]

        @T.prim_func
        def te_relu(rxplaceholder: T.Buffer[(1, 128), "float32"], relu: T.Buffer[(1, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "te_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(1, 128):
                with T.block("relu"):
                    i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(relu[i0_1, i1_1])
                    relu[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

        @R.function
        def main(x: Tensor((1, 128), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv = R.call_tir(te_matmul, (x, meta[relay.Constant][0]), (1, 128), dtype="float32")
                lv1 = R.call_tir(te_relu, (lv,), (1, 128), dtype="float32")
                gv: Tensor((1, 128), "float32") = lv1
                R.output(gv)
            return lv1

    x = np.random.default_rng(6).standard_normal((1, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.torch
def test_b48_to_b53_the_course_mlp_through_topi_and_relax_vm_build(in_course_dir, img, capsys):
    import torch
    from torch import fx

    # b49
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    mlp_model = mlp_model_with_weights(mlp_params)
    # b50
    torch_res = mlp_model(torch.from_numpy(img.reshape(1, 784)))

    pred_kind = np.argmax(torch_res.detach().numpy(), axis=1)
    print("Torch Prediction:", class_names[pred_kind[0]])

    map_param, fetch_attr, from_fx = fx_translator()
    # b52
    from tunefarm.tvm import topi


    def map_nn_linear(bb, node_map, node, nn_mod):
        x = node_map[node.args[0]]
        w = map_param(nn_mod.weight)
        if nn_mod.bias is not None:
            b = map_param(nn_mod.bias)
        y = bb.emit_te(topi.nn.dense, x, w)
        return bb.emit_te(topi.add, y, b)

    def map_nn_relu(bb, node_map, node, nn_mod):
        return map_relu(bb, node_map, node)


    MLPModule = from_fx(
        fx.symbolic_trace(mlp_model),
        input_shapes = [(1, 784)],
        call_function_map={
        },
        call_module_map={
            torch.nn.Linear: map_nn_linear,
            torch.nn.ReLU: map_nn_relu,
        },
    )

    MLPModule.show()
    # b53's code
    ex = relax.vm.build(MLPModule, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    data_nd = tvm.nd.array(img.reshape(1, 784))

    nd_res = vm["main"](data_nd)

    pred_kind = np.argmax(nd_res.numpy(), axis=1)
    print("MLPModule Prediction:", class_names[pred_kind[0]])

    out = capsys.readouterr().out.splitlines()
    want = class_names[torch_res.detach().numpy().argmax()]
    assert out[0] == f"Torch Prediction: {want}" and out[-1] == f"MLPModule Prediction: {want}"
    np.testing.assert_allclose(nd_res.numpy(), torch_res.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_b53_the_printed_older_topi_module(img):
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def dense1(rxplaceholder: T.Buffer[(1, 128), "float32"], rxplaceholder_1: T.Buffer[(10, 128), "float32"], T_matmul_NT: T.Buffer[(1, 10), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "dense1", "tir.noalias": True, "layout_free_buffers": [1]})
            # body
            # with T.block("root")
            for i0, i1, i2 in T.grid(1, 10, 128):
                with T.block("T_matmul_NT"):
                    i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                    T.reads(rxplaceholder[i, k], rxplaceholder_1[j, k])
                    T.writes(T_matmul_NT[i, j])
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + rxplaceholder[i, k] * rxplaceholder_1[j, k]

        @R.function
        def main(x: Tensor((1, 784), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv = R.call_tir(dense, (x, meta[relay.Constant][0]), (1, 128), dtype="float32")
                lv1 = R.call_tir(add, (lv, meta[relay.Constant][1]), (1, 128), dtype="float32")
                lv2 = R.call_tir(te_relu, (lv1,), (1, 128), dtype="float32")
                lv3 = R.call_tir(dense1, (lv2, meta[relay.Constant][2]), (1, 10), dtype="float32")
                lv4 = R.call_tir(add1, (lv3, meta[relay.Constant][3]), (1, 10), dtype="float32")
                gv: Tensor((1, 10), "float32") = lv4
                R.output(gv)
            return lv4

        @T.prim_func
        def add1(rxplaceholder: T.Buffer[(1, 10), "float32"], rxplaceholder_1: T.Buffer[10, "float32"], T_add: T.Buffer[(1, 10), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "add1", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(1, 10):
                with T.block("T_add"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[ax0, ax1], rxplaceholder_1[ax1])
                    T.writes(T_add[ax0, ax1])
                    T_add[ax0, ax1] = rxplaceholder[ax0, ax1] + rxplaceholder_1[ax1]

        @T.prim_func
        def add(rxplaceholder: T.Buffer[(1, 128), "float32"], rxplaceholder_1: T.Buffer[128, "float32"], T_add: T.Buffer[(1, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "add", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(1, 128):
                with T.block("T_add"):
                    ax0, ax1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[ax0, ax1], rxplaceholder_1[ax1])
                    T.writes(T_add[ax0, ax1])
                    T_add[ax0, ax1] = rxplaceholder[ax0, ax1] + rxplaceholder_1[ax1]

        @T.prim_func
        def dense(rxplaceholder: T.Buffer[(1, 784), "float32"], rxplaceholder_1: T.Buffer[(128, 784), "float32"], T_matmul_NT: T.Buffer[(1, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "dense", "tir.noalias": True, "layout_free_buffers": [1]})
            # body
            # with T.block("root")
            for i0, i1, i2 in T.grid(1, 128, 784):
                with T.block("T_matmul_NT"):
                    i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                    T.reads(rxplaceholder[i, k], rxplaceholder_1[j, k])
                    T.writes(T_matmul_NT[i, j])
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + rxplaceholder[i, k] * rxplaceholder_1[j, k]

        @T.prim_func
        def te_relu(rxplaceholder: T.Buffer[(1, 128), "float32"], relu: T.Buffer[(1, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "te_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(1, 128):
                with T.block("relu"):
                    i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(relu[i0_1, i1_1])
                    relu[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

    ex = relax.vm.build(Module, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_res = vm["main"](data_nd)
    expected = np.maximum(img.reshape(1, 784) @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.torch
def test_b55_high_level_ops(capsys):
    import torch
    from torch import fx

    mlp_model = mlp_model_with_weights(mlp_weights())
    map_param, fetch_attr, from_fx = fx_translator()

    # b55
    def map_nn_relu_op(bb, node_map, node, nn_mod):
        A = node_map[node.args[0]]
        return bb.emit(relax.op.relu(A))

    def map_nn_linear_op(bb, node_map, node, nn_mod):
        x = node_map[node.args[0]]
        w = map_param(nn_mod.weight)
        if nn_mod.bias is not None:
            b = map_param(nn_mod.bias)
        y = bb.emit(relax.op.dense(x, w))
        return bb.emit(relax.op.add(y, b))

    MLPModuleHighLevel = from_fx(
        fx.symbolic_trace(mlp_model),
        input_shapes = [(1, 784)],
        call_function_map={
        },
        call_module_map={
            torch.nn.Linear: map_nn_linear_op,
            torch.nn.ReLU: map_nn_relu_op,
        },
    )

    MLPModuleHighLevel.show()

    shown = capsys.readouterr().out
    assert "lv = R.nn.linear(x, metadata[\"relax.expr.Constant\"][0])" in shown and "R.nn.relu(lv1)" in shown
    assert not MLPModuleHighLevel.prim_funcs()  # high-level ops: no kernels until the build legalizes them
    x = np.random.default_rng(7).random((1, 784), dtype=np.float32)
    vm = relax.VirtualMachine(relax.build(MLPModuleHighLevel, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), mlp_model(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-4)


def test_b56_the_printed_high_level_module():
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @tvm.script.ir_module
    class Module:
        @R.function
        def main(x: Tensor((1, 784), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv: Tensor((1, 128), "float32") = relax.nn.dense(x, meta[relay.Constant][0])
                lv1: Tensor((1, 128), "float32") = relax.add(lv, meta[relay.Constant][1])
                lv2: Tensor((1, 128), "float32") = relax.nn.relu(lv1)
                lv3: Tensor((1, 10), "float32") = relax.nn.dense(lv2, meta[relay.Constant][2])
                lv4: Tensor((1, 10), "float32") = relax.add(lv3, meta[relay.Constant][3])
                gv: Tensor((1, 10), "float32") = lv4
                R.output(gv)
            return lv4

    x = np.random.default_rng(8).random((1, 784), dtype=np.float32)
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    expected = np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(vm["main"](x).numpy(), expected, rtol=1e-4, atol=1e-4)
