"""Course note 002, section 6 (tensor expressions, BlockBuilder, importing a PyTorch model): every code
segment, imports changed only. ``s<N>`` continues the numbering of ``test_note_002_models_and_tuning``.

The printed modules (s48, s57, s61) are parsed as the note shows them and checked against what tunefarm
builds from the same code: same kernels (structurally) and the same numbers.
"""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.tvm import relax, te, topi
from tunefarm.tvm.script import ir as I
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tvm_note_helpers import CLASS_NAMES as class_names
from tvm_note_helpers import mlp_weights, pkl

# s40
# 表示TensorIR的输入
A = te.placeholder((128, 128), name="A", dtype="float32")
B = te.placeholder((128, 128), name="B", dtype="float32")


# s41
def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


C = te_matmul(A, B)


# s43
def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def run(func, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    out_shapes = [tuple(int(d) for d in p.const_shape()) for p in func.params[len(shapes):]]
    outs = [np.zeros(s, "float32") for s in out_shapes]
    tvm.build(func, target="llvm")["main"](*args, *outs)
    return args, outs


def test_s40_s41_s42_matmul_from_tensor_expressions(capsys):
    assert isinstance(A, te.Tensor) and tuple(A.shape) == (128, 128) and A.dtype == "float32"
    te.create_prim_func([A, B, C]).show()
    shown = capsys.readouterr().out
    assert "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"), " \
           "matmul: T.Buffer((128, 128), \"float32\")):" in shown
    (a, b), (c,) = run(te.create_prim_func([A, B, C]), (128, 128), (128, 128))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_s43_relu_on_a_row(capsys):
    X1=te.placeholder((1,128),name="X1",dtype="float32")
    Y1=te_relu(X1)
    te.create_prim_func([X1,Y1]).show()
    assert "relu[i, j] = T.max(X1[i, j], T.float32(0))" in capsys.readouterr().out
    (x,), (y,) = run(te.create_prim_func([X1, Y1]), (1, 128))
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_s44_s45_s46_fused_matmul_relu_with_and_without_the_intermediate(capsys):
    # s44
    C = te_matmul(A, B)
    D = te_relu(C)
    # s45
    te.create_prim_func([A, B, D]).show()
    # s46
    te.create_prim_func([A, B, C, D]).show()

    first, second = capsys.readouterr().out.split("# from tunefarm.script import T")[1:]
    assert 'matmul = T.alloc_buffer((128, 128), "float32")' in first and "alloc_buffer" not in second
    (a, b), (d,) = run(te.create_prim_func([A, B, D]), (128, 128), (128, 128))
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    (a, b), (c, d) = run(te.create_prim_func([A, B, C, D]), (128, 128), (128, 128))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d, np.maximum(c, 0), rtol=1e-6)


def block_builder_module():
    """s47, as written (``R`` is a variable name there)."""
    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    MyModule = bb.get()
    MyModule.show()
    return MyModule, C


def test_s47_s49_block_builder(capsys):
    MyModule, C = block_builder_module()
    shown = capsys.readouterr().out
    # s49
    print(type(C))
    print(isinstance(C, relax.Var))

    assert capsys.readouterr().out.splitlines()[1] == "True"
    assert "lv = R.call_tir(te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), dtype=\"float32\"))" in shown
    assert "lv1 = R.call_tir(te_relu, (lv,), out_sinfo=R.Tensor((128, 128), dtype=\"float32\"))" in shown
    a, b = np.random.default_rng(4).standard_normal((2, 128, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_s48_the_printed_block_builder_module(capsys):
    built, _ = block_builder_module()
    capsys.readouterr()

    @I.ir_module
    class Module:
        @T.prim_func(private=True)
        def te_matmul(A: T.Buffer((T.int64(128), T.int64(128)), "float32"), B: T.Buffer((T.int64(128), T.int64(128)), "float32"), matmul: T.Buffer((T.int64(128), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i, j, k in T.grid(T.int64(128), T.int64(128), T.int64(128)):
                with T.block("matmul"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(matmul[v_i, v_j])
                    with T.init():
                        matmul[v_i, v_j] = T.float32(0.0)
                    matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        @T.prim_func(private=True)
        def te_relu(lv: T.Buffer((T.int64(128), T.int64(128)), "float32"), relu: T.Buffer((T.int64(128), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i, j in T.grid(T.int64(128), T.int64(128)):
                with T.block("relu"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(lv[v_i, v_j])
                    T.writes(relu[v_i, v_j])
                    relu[v_i, v_j] = T.max(lv[v_i, v_j], T.float32(0.0))
        @R.function
        def main(A: R.Tensor((128, 128), dtype="float32"), B: R.Tensor((128, 128), dtype="float32")) -> R.Tensor((128, 128), dtype="float32"):
            cls = Module
            with R.dataflow():
                lv = R.call_tir(cls.te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), dtype="float32"))
                lv1 = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((128, 128), dtype="float32"))
                gv: R.Tensor((128, 128), dtype="float32") = lv1
                R.output(gv)
            return gv

    a, b = np.random.default_rng(5).standard_normal((2, 128, 128)).astype("float32")
    for mod in (Module, built):
        vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
        np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------------------------------------
# 6.3: PyTorch models through torch.fx
# ----------------------------------------------------------------------------------------------------------
def fx_translator():
    """s55, as written (the module needs torch, so the functions are made when a torch test asks)."""
    import torch.nn as nn

    def map_param(param: nn.Parameter):
        return relax.const(
            param.data.cpu().numpy(), relax.TensorStructInfo(param.data.shape, "float32")
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
                            node.target, relax.TensorStructInfo(shape, "float32")
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


def my_model():
    """s53"""
    import torch
    import torch.nn as nn

    class MyModel(nn.Module):
        def __init__(self):
            super(MyModel, self).__init__()
            self.weight = nn.Parameter(torch.randn(128, 128))
        def forward(self, x):
            x = torch.matmul(x, self.weight)
            x = torch.relu(x)
            return x

    return MyModel


def mlp_class():
    """s59's model"""
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

    return MLP


@pytest.mark.torch
def test_s53_to_s56_matmul_relu_from_torch_fx(capsys):
    import torch
    from torch import fx

    torch.manual_seed(0)
    MyModel = my_model()
    map_param, fetch_attr, from_fx = fx_translator()
    # s54 (``fx_module.graph.print_tabular()`` needs the tabulate package, which is not installed here)
    model = MyModel()
    fx_module = fx.symbolic_trace(model)
    type(fx_module)
    for node in fx_module.graph.nodes:
        print(node)
        print(node.op)
    assert capsys.readouterr().out.split() == ["x", "placeholder", "weight", "get_attr", "matmul", "call_function",
                                               "relu", "call_function", "output", "output"]

    # s56
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

    shown = capsys.readouterr().out
    assert "lv = R.call_tir(te_matmul, (x, metadata[\"relax.expr.Constant\"][0]), " in shown
    x = np.random.default_rng(6).standard_normal((1, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(vm["main"](tvm.nd.array(x)).numpy(), expected, rtol=1e-4, atol=1e-4)
    assert fetch_attr(fx_module, "weight") is model.weight
    with pytest.raises(RuntimeError, match="nonexistant target"):
        fetch_attr(fx_module, "weight.nothing")


def test_s57_the_printed_fx_module():
    w = np.random.default_rng(7).standard_normal((128, 128)).astype("float32")
    metadata = {"relax.expr.Constant": [w]}

    @I.ir_module
    class Module:
        @T.prim_func(private=True)
        def te_matmul(x: T.Buffer((T.int64(1), T.int64(128)), "float32"), B: T.Buffer((T.int64(128), T.int64(128)), "float32"), matmul: T.Buffer((T.int64(1), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i, j, k in T.grid(T.int64(1), T.int64(128), T.int64(128)):
                with T.block("matmul"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(x[v_i, v_k], B[v_k, v_j])
                    T.writes(matmul[v_i, v_j])
                    with T.init():
                        matmul[v_i, v_j] = T.float32(0.0)
                    matmul[v_i, v_j] = matmul[v_i, v_j] + x[v_i, v_k] * B[v_k, v_j]
        @T.prim_func(private=True)
        def te_relu(lv: T.Buffer((T.int64(1), T.int64(128)), "float32"), relu: T.Buffer((T.int64(1), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i, j in T.grid(T.int64(1), T.int64(128)):
                with T.block("relu"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(lv[v_i, v_j])
                    T.writes(relu[v_i, v_j])
                    relu[v_i, v_j] = T.max(lv[v_i, v_j], T.float32(0.0))
        @R.function
        def main(x: R.Tensor((1, 128), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
            cls = Module
            with R.dataflow():
                lv = R.call_tir(cls.te_matmul, (x, metadata["relax.expr.Constant"][0]), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                lv1 = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                gv: R.Tensor((1, 128), dtype="float32") = lv1
                R.output(gv)
            return lv1
    # Metadata omitted. Use show_meta=True in script() method to show it.

    x = np.random.default_rng(8).standard_normal((1, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.torch
def test_s59_s60_the_course_mlp_from_torch_with_topi(in_course_dir, img, capsys):
    import torch
    from torch import fx

    MLP = mlp_class()
    map_param, fetch_attr, from_fx = fx_translator()

    def map_relu(bb, node_map, node: fx.Node):
        A = node_map[node.args[0]]
        return bb.emit_te(te_relu, A)

    # s59
    mlp_model = MLP()
    mlp_params = pkl.load(open("fasionmnist_mlp_params.pkl", "rb"))
    mlp_model.linear0.weight.data = torch.from_numpy(mlp_params["w0"])
    mlp_model.linear0.bias.data = torch.from_numpy(mlp_params["b0"])
    mlp_model.linear1.weight.data = torch.from_numpy(mlp_params["w1"])
    mlp_model.linear1.bias.data = torch.from_numpy(mlp_params["b1"])
    torch_res = mlp_model(torch.from_numpy(img.reshape(1, 784)))
    pred_kind = np.argmax(torch_res.detach().numpy(), axis=1)
    print("Torch Prediction:", class_names[pred_kind[0]])

    # s60
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

    shown = capsys.readouterr().out
    assert shown.startswith(f"Torch Prediction: {class_names[torch_res.detach().numpy().argmax()]}\n")
    assert sorted(MLPModule.prim_funcs()) == ["add", "add1", "dense", "dense1", "te_relu"]
    assert "lv4 = R.call_tir(add1, (lv3, metadata[\"relax.expr.Constant\"][3]), " in shown
    vm = relax.VirtualMachine(relax.build(MLPModule, target="llvm"), tvm.cpu())
    got = vm["main"](tvm.nd.array(img.reshape(1, 784))).numpy()
    np.testing.assert_allclose(got, torch_res.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_s61_the_printed_topi_module():
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @I.ir_module
    class Module:
        @T.prim_func(private=True)
        def add(lv: T.Buffer((T.int64(1), T.int64(128)), "float32"), B: T.Buffer((T.int64(128),), "float32"), T_add: T.Buffer((T.int64(1), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for ax0, ax1 in T.grid(T.int64(1), T.int64(128)):
                with T.block("T_add"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(lv[v_ax0, v_ax1], B[v_ax1])
                    T.writes(T_add[v_ax0, v_ax1])
                    T_add[v_ax0, v_ax1] = lv[v_ax0, v_ax1] + B[v_ax1]
        @T.prim_func(private=True)
        def add1(lv3: T.Buffer((T.int64(1), T.int64(10)), "float32"), B: T.Buffer((T.int64(10),), "float32"), T_add: T.Buffer((T.int64(1), T.int64(10)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for ax0, ax1 in T.grid(T.int64(1), T.int64(10)):
                with T.block("T_add"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(lv3[v_ax0, v_ax1], B[v_ax1])
                    T.writes(T_add[v_ax0, v_ax1])
                    T_add[v_ax0, v_ax1] = lv3[v_ax0, v_ax1] + B[v_ax1]
        @T.prim_func(private=True)
        def dense(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), B: T.Buffer((T.int64(128), T.int64(784)), "float32"), T_matmul_NT: T.Buffer((T.int64(1), T.int64(128)), "float32")):
            T.func_attr({"layout_free_buffers": [1], "tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i0, i1, k in T.grid(T.int64(1), T.int64(128), T.int64(784)):
                with T.block("T_matmul_NT"):
                    v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                    T.reads(x[v_i0, v_k], B[v_i1, v_k])
                    T.writes(T_matmul_NT[v_i0, v_i1])
                    with T.init():
                        T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                    T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + x[v_i0, v_k] * B[v_i1, v_k]
        @T.prim_func(private=True)
        def dense1(lv2: T.Buffer((T.int64(1), T.int64(128)), "float32"), B: T.Buffer((T.int64(10), T.int64(128)), "float32"), T_matmul_NT: T.Buffer((T.int64(1), T.int64(10)), "float32")):
            T.func_attr({"layout_free_buffers": [1], "tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i0, i1, k in T.grid(T.int64(1), T.int64(10), T.int64(128)):
                with T.block("T_matmul_NT"):
                    v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                    T.reads(lv2[v_i0, v_k], B[v_i1, v_k])
                    T.writes(T_matmul_NT[v_i0, v_i1])
                    with T.init():
                        T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                    T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + lv2[v_i0, v_k] * B[v_i1, v_k]
        @T.prim_func(private=True)
        def te_relu(lv1: T.Buffer((T.int64(1), T.int64(128)), "float32"), relu: T.Buffer((T.int64(1), T.int64(128)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            # with T.block("root"):
            for i, j in T.grid(T.int64(1), T.int64(128)):
                with T.block("relu"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(lv1[v_i, v_j])
                    T.writes(relu[v_i, v_j])
                    relu[v_i, v_j] = T.max(lv1[v_i, v_j], T.float32(0.0))
        @R.function
        def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
            cls = Module
            with R.dataflow():
                lv = R.call_tir(cls.dense, (x, metadata["relax.expr.Constant"][0]), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                lv1 = R.call_tir(cls.add, (lv, metadata["relax.expr.Constant"][1]), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                lv2 = R.call_tir(cls.te_relu, (lv1,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
                lv3 = R.call_tir(cls.dense1, (lv2, metadata["relax.expr.Constant"][2]), out_sinfo=R.Tensor((1, 10), dtype="float32"))
                lv4 = R.call_tir(cls.add1, (lv3, metadata["relax.expr.Constant"][3]), out_sinfo=R.Tensor((1, 10), dtype="float32"))
                gv: R.Tensor((1, 10), dtype="float32") = lv4
                R.output(gv)
            return lv4

    # the kernels topi builds for the same model are the printed ones
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit_te(topi.nn.dense, x, relax.const(p["w0"]))
            bb.emit_output(bb.emit_te(topi.add, y, relax.const(p["b0"])))
        bb.emit_func_output(y)
    ours = bb.get()
    assert [list(ours.prim_funcs()), ours["dense"].params[2].name, ours["add"].params[2].name] == \
        [["dense", "add"], Module["dense"].params[2].name, Module["add"].params[2].name]
    x_np = np.random.default_rng(9).random((1, 784), dtype=np.float32)
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    expected = np.maximum(x_np @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(vm["main"](x_np).numpy(), expected, rtol=1e-4, atol=1e-4)
