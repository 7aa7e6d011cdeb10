"""The MLC course's end-to-end modules (lesson 3), moved over to tunefarm line by line.

Only the imports changed (``from tunefarm.script import T, R, ir_module`` / ``import tunefarm``):
``MyModule`` (TensorIR kernels with symbolic dims called with ``call_dps_packed``),
``MyModuleWithExternCall`` (registered library functions), ``MyModuleMixture`` (both), ``BindParams``,
and the ``BlockBuilder`` + ``emit_te`` construction.

    python examples/course_modules.py [--params weights.npz]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tunefarm  # noqa: E402
from tunefarm import te  # noqa: E402
from tunefarm.graph import BlockBuilder, TensorStructInfo, Var, VirtualMachine, transform  # noqa: E402
from tunefarm.script import R, T, ir_module  # noqa: E402


@ir_module
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


@ir_module
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


@ir_module
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


# The course registers torch functions; numpy works the same way (destination passing: fill ``out``).
@tunefarm.register_func("env.linear", override=True)
def numpy_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray):
    np.matmul(x, w.T, out=out)
    np.add(out, b, out=out)


@tunefarm.register_func("env.relu", override=True)
def numpy_relu(x: np.ndarray, out: np.ndarray):
    np.maximum(x, 0, out=out)


def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def block_builder_module():
    """The course's ``BlockBuilder`` example: matmul + relu through ``emit_te``."""
    A = Var("A", TensorStructInfo((128, 128), "float32"))
    B = Var("B", TensorStructInfo((128, 128), "float32"))
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R_ = bb.emit_output(D)
        bb.emit_func_output(R_, params=[A, B])
    return bb.get()


def main(argv=None) -> int:
    from tunefarm.graph.params import find_mlp_params

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default=None, help="weights file (default: the course's, shipped with tunefarm)")
    args = p.parse_args(argv)
    mlp_params, source = find_mlp_params(args.params)
    print(f"weights: {source}")
    data = np.random.default_rng(0).random((1, 784), dtype=np.float32)  # stands in for a flattened image
    ref = np.maximum(data @ mlp_params["w0"].T + mlp_params["b0"], 0) @ mlp_params["w1"].T + mlp_params["b1"]
    weights = [mlp_params[k] for k in ("w0", "b0", "w1", "b1")]

    for name, mod in (("MyModule", MyModule), ("MyModuleWithExternCall", MyModuleWithExternCall),
                      ("MyModuleMixture", MyModuleMixture)):
        ex = tunefarm.compile(mod, target="llvm")
        vm = VirtualMachine(ex, "cpu")
        nd_res = vm["main"](data, *weights)
        print(f"{name:>24}: {ex.kind:6} executable, prediction {int(np.argmax(nd_res, axis=1)[0])}, "
              f"max |diff| to numpy {np.abs(nd_res - ref).max():.1e}")

    MyModuleWithParams = transform.BindParams("main", mlp_params)(MyModuleMixture)
    print("\nBindParams('main', params)(MyModuleMixture)['main']:")
    print(MyModuleWithParams["main"].script())
    ex = tunefarm.compile(MyModuleWithParams)
    print(f"with bound params: max |diff| to numpy {np.abs(ex(data) - ref).max():.1e}")

    mod = block_builder_module()
    print("\nBlockBuilder module:")
    print(mod.script())
    a, b = (np.random.default_rng(s).random((128, 128), dtype=np.float32) for s in (1, 2))
    out = tunefarm.compile(mod)(a, b)
    print(f"matmul + relu: max |diff| to numpy {np.abs(out - np.maximum(a @ b, 0)).max():.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
