"""Course note 001 (TVM overview: an nn.Module MLP, TensorIR basics, parallel / unroll / vectorize): every code
block, imports changed only. ``b<N>`` is the N-th fenced block of the note."""
from __future__ import annotations

import numpy as np

from tunefarm import tvm
from tunefarm.tvm import relax
from tunefarm.tvm.relax.frontend import nn
from tunefarm.tvm.script import ir as I
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tvm_note_helpers import IPython


# b1 -------------------------------------------------------------------------------------------------------
class MLPModel(nn.Module):
    def __init__(self):
        super(MLPModel, self).__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


def reference(data, w1, b1, w2, b2):
    return np.maximum(data @ w1.T + b1, 0) @ w2.T + b2


def test_b2_export_tvm_gives_the_module_and_its_parameter_spec(capsys):
    mod, param_spec = MLPModel().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}
    )
    mod.show()

    shown = capsys.readouterr().out
    assert "def forward(x: R.Tensor((1, 784), dtype=\"float32\"), fc1_weight: R.Tensor((256, 784), " \
           "dtype=\"float32\"), fc1_bias: R.Tensor((256,), dtype=\"float32\"), fc2_weight: R.Tensor((10, 256), " \
           "dtype=\"float32\"), fc2_bias: R.Tensor((10,), dtype=\"float32\")) -> R.Tensor((1, 10), " \
           "dtype=\"float32\"):" in shown
    assert "R.func_attr({'num_input': 1})" in shown
    assert [name for name, _ in param_spec] == ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert [param.shape for _, param in param_spec] == [(256, 784), (256,), (10, 256), (10,)]


def test_b3_the_printed_module_parses_and_runs():
    @I.ir_module
    class Module:
        @R.function
        def forward(x: R.Tensor((1, 784), dtype="float32"), fc1_weight: R.Tensor((256, 784), dtype="float32"), fc1_bias: R.Tensor((256,), dtype="float32"), fc2_weight: R.Tensor((10, 256), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
            R.func_attr({"num_input": 1})
            with R.dataflow():
                permute_dims: R.Tensor((784, 256), dtype="float32") = R.permute_dims(fc1_weight, axes=None)
                matmul: R.Tensor((1, 256), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
                add: R.Tensor((1, 256), dtype="float32") = R.add(matmul, fc1_bias)
                relu: R.Tensor((1, 256), dtype="float32") = R.nn.relu(add)
                permute_dims1: R.Tensor((256, 10), dtype="float32") = R.permute_dims(fc2_weight, axes=None)
                matmul1: R.Tensor((1, 10), dtype="float32") = R.matmul(relu, permute_dims1, out_dtype="void")
                gv: R.Tensor((1, 10), dtype="float32") = matmul1
                R.output(gv)
            return gv

    rng = np.random.default_rng(0)
    x, w1, b1, w2 = (rng.standard_normal(s).astype("float32") for s in [(1, 784), (256, 784), (256,), (10, 256)])
    vm = relax.VirtualMachine(tvm.compile(Module, "llvm"), tvm.cpu())
    got = vm["forward"](x, w1, b1, w2).numpy()
    np.testing.assert_allclose(got, np.maximum(x @ w1.T + b1, 0) @ w2.T, rtol=1e-4, atol=1e-3)


def test_b4_compile_and_run_with_random_parameters(capsys):
    mod, param_spec = MLPModel().export_tvm(spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    # b4
    import numpy as np

    target = tvm.target.Target("llvm")
    ex = tvm.compile(mod, target)
    device = tvm.cpu()
    vm = relax.VirtualMachine(ex, device)
    data = np.random.rand(1, 784).astype("float32")
    tvm_data = tvm.nd.array(data, device=device)
    params = [np.random.rand(*param.shape).astype("float32") for _, param in param_spec]
    params = [tvm.nd.array(param, device=device) for param in params]
    print(vm["forward"](tvm_data, *params).numpy())

    expected = reference(data, *params)
    printed = np.array(capsys.readouterr().out.replace("[", " ").replace("]", " ").split(), dtype="float32")
    np.testing.assert_allclose(printed, expected.ravel(), rtol=1e-4)
    np.testing.assert_allclose(vm["forward"](tvm_data, *params).numpy(), expected, rtol=1e-5)


def test_b5_vector_add_with_a_parallel_loop():
    @T.prim_func
    def vector_add(A: T.Buffer[128, "float32"],
                   B: T.Buffer[128, "float32"],
                   C: T.Buffer[128, "float32"]):
        # 并行执行元素级加法
        for i in T.parallel(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi] + B[vi]

    assert "for i in T.parallel(128):" in vector_add.script()
    a, b = np.random.default_rng(1).standard_normal((2, 128)).astype("float32")
    c = tvm.nd.empty((128,), "float32")
    tvm.build(vector_add, target="llvm")["vector_add"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), a + b)


def test_b6_b7_grid_and_axis_remap_inside_a_function():
    # the two fragments, completed into the matmul they come from
    @T.prim_func
    def mm(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
           Y: T.Buffer((128, 128), "float32")):
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

    a, b = np.random.default_rng(2).standard_normal((2, 128, 128)).astype("float32")
    y = np.zeros((128, 128), "float32")
    tvm.build(mm, target="llvm")["mm"](a, b, y)
    np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-4)


def test_b8_split_parallel_unroll_vectorize(capsys):
    @tvm.script.ir_module
    class MyAdd:
        @T.prim_func
        def add(A: T.Buffer((4, 4), "int64"),
                B: T.Buffer((4, 4), "int64"),
                C: T.Buffer((4, 4), "int64")):
            T.func_attr({"global_symbol": "add", "tir.noalias": True})
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.spatial(4, j)
                    C[vi, vj] = A[vi, vj] + B[vi, vj]

    sch = tvm.tir.Schedule(MyAdd)
    block = sch.get_block("C", func_name="add")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[2, 2])
    sch.parallel(i0)
    sch.unroll(i1)
    sch.vectorize(j)
    print(IPython.display.Code(sch.mod.script(), language="python"))

    shown = capsys.readouterr().out
    assert "for i_0 in T.parallel(2):" in shown and "for i_1 in T.unroll(2):" in shown
    assert "for j in T.vectorized(4):" in shown
    a = np.arange(16, dtype="int64").reshape(4, 4)
    b = a * 10
    c = np.zeros((4, 4), "int64")
    tvm.build(sch.mod, target="llvm")["add"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
