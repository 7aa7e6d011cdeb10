"""Course note 004 (an MLC summary: IRModule, schedules, MetaSchedule's trace, FuseOps / FuseTIR, extern
calls): every code block, imports changed only. ``b<N>`` is the N-th fenced block of the note.

The note prints modules the way an older TVM did (``T.Buffer[...]``, ``Tensor(...)`` without ``R.``,
``meta[relay.Constant][i]``); hence ``from __future__ import annotations`` (as the course's chapter 5 has),
which lets such annotations stand in a Python file. Where the note elides bodies (``...``) the tests fill
them in and say so.
"""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm import tvm
from tunefarm.ir.structural import assert_structural_equal
from tunefarm.tvm import relax
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T

from tvm_note_helpers import mlp_weights


# b3
@tvm.script.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], C: T.Buffer[(128, 128), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        # body
        # with T.block("root")
        Y = T.alloc_buffer([128, 128], dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


MyModule = Module  # the note's code calls the module above ``MyModule``


# the 128^3 matmul MetaSchedule tuned for b10 (block "C" of "main")
@tvm.script.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def mm_relu_check(mod, name="mm_relu"):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 128, 128)).astype("float32")
    c = np.zeros((128, 128), "float32")
    tvm.build(mod, target="llvm")[name](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_b2_build_in_a_pass_context():
    # the note's placeholders filled: a module with a "main", the target, the input arrays
    ir_module = Matmul
    target = "llvm"
    a, b = np.random.default_rng(1).standard_normal((2, 128, 128)).astype("float32")
    c = tvm.nd.empty((128, 128), "float32")

    with tvm.transform.PassContext(opt_level=3):
        rt_mod = tvm.build(ir_module, target)
    output = rt_mod['main'](a, b, c)

    assert output is None  # destination passing: the result is in c
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def printed_after_split():
    """b5"""
    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def mm_relu(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], C: T.Buffer[(128, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            Y = T.alloc_buffer([128, 128], dtype="float32")
            for i, j_0, j_1, k in T.grid(128, 32, 4, 128):
                with T.block("Y"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1)
                    vk = T.axis.reduce(128, k)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(Y[vi, vj])
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(Y[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    return Module


def printed_after_reorder():
    """b7"""
    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def mm_relu(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], C: T.Buffer[(128, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            Y = T.alloc_buffer([128, 128], dtype="float32")
            for i, j_0, k, j_1 in T.grid(128, 32, 128, 4):
                with T.block("Y"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1)
                    vk = T.axis.reduce(128, k)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(Y[vi, vj])
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(Y[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    return Module


def printed_after_reverse_compute_at():
    """b9"""
    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def mm_relu(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"], C: T.Buffer[(128, 128), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
            # body
            # with T.block("root")
            Y = T.alloc_buffer([128, 128], dtype="float32")
            for i, j_0 in T.grid(128, 32):
                for k, j_1 in T.grid(128, 4):
                    with T.block("Y"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        vk = T.axis.reduce(128, k)
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(Y[vi, vj])
                        with T.init():
                            Y[vi, vj] = T.float32(0)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0 in T.serial(4):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + ax0)
                        T.reads(Y[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    return Module


def test_b3_to_b9_split_reorder_reverse_compute_at_as_printed():
    mm_relu_check(MyModule)
    # b4
    sch = tvm.tir.Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    assert_structural_equal(sch.mod, printed_after_split())
    # b6
    sch.reorder(j0, k, j1)
    assert_structural_equal(sch.mod, printed_after_reorder())
    # b8
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    assert_structural_equal(sch.mod, printed_after_reverse_compute_at())
    mm_relu_check(sch.mod)


def test_b10_metaschedule_trace_replayed_on_the_matmul():
    sch = tvm.tir.Schedule(Matmul)
    # b10
    b0 = sch.get_block(name="C", func_name="main")
    b1 = sch.get_block(name="root", func_name="main")
    sch.annotate(block_or_loop=b0, ann_key="meta_schedule.tiling_structure", ann_val="SSRSRS")
    l2, l3, l4 = sch.get_loops(block=b0)
    v5, v6, v7, v8 = sch.sample_perfect_tile(loop=l2, n=4, max_innermost_factor=64, decision=[4, 1, 32, 1])
    l9, l10, l11, l12 = sch.split(loop=l2, factors=[v5, v6, v7, v8], preserve_unit_iters=True)
    v13, v14, v15, v16 = sch.sample_perfect_tile(loop=l3, n=4, max_innermost_factor=64, decision=[4, 1, 8, 4])
    l17, l18, l19, l20 = sch.split(loop=l3, factors=[v13, v14, v15, v16], preserve_unit_iters=True)
    v21, v22 = sch.sample_perfect_tile(loop=l4, n=2, max_innermost_factor=64, decision=[64, 2])
    l23, l24 = sch.split(loop=l4, factors=[v21, v22], preserve_unit_iters=True)
    sch.reorder(l9, l17, l10, l18, l23, l11, l19, l24, l12, l20)
    b25 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="global")
    sch.reverse_compute_at(block=b25, loop=l18, preserve_unit_loops=True)
    sch.annotate(block_or_loop=b1, ann_key="meta_schedule.parallel", ann_val=16)
    sch.annotate(block_or_loop=b1, ann_key="meta_schedule.vectorize", ann_val=64)
    v26 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=1)
    sch.annotate(block_or_loop=b1, ann_key="meta_schedule.unroll_explicit", ann_val=v26)
    sch.enter_postproc()
    b27 = sch.get_block(name="root", func_name="main")
    sch.unannotate(block_or_loop=b27, ann_key="meta_schedule.parallel")
    sch.unannotate(block_or_loop=b27, ann_key="meta_schedule.vectorize")
    sch.unannotate(block_or_loop=b27, ann_key="meta_schedule.unroll_explicit")
    b28, b29 = sch.get_child_blocks(b27)
    l30, l31, l32, l33, l34, l35, l36, l37, l38, l39 = sch.get_loops(block=b28)
    l40 = sch.fuse(l30, l31, l32, l33, preserve_unit_iters=True)
    sch.parallel(loop=l40)
    l41 = sch.fuse(l39, preserve_unit_iters=True)
    sch.vectorize(loop=l41)
    sch.annotate(block_or_loop=l40, ann_key="pragma_auto_unroll_max_step", ann_val=16)
    sch.annotate(block_or_loop=l40, ann_key="pragma_unroll_explicit", ann_val=1)
    l42, l43, l44 = sch.get_loops(block=b29)
    l45 = sch.fuse(l44, preserve_unit_iters=True)
    sch.vectorize(loop=l45)
    sch.annotate(block_or_loop=l42, ann_key="pragma_auto_unroll_max_step", ann_val=16)
    sch.annotate(block_or_loop=l42, ann_key="pragma_unroll_explicit", ann_val=1)
    b46 = sch.get_block(name="C", func_name="main")
    l47, l48, l49, l50, l51, l52, l53 = sch.get_loops(block=b46)
    b54 = sch.decompose_reduction(block=b46, loop=l48)

    assert sch.trace.get_decision(4) == [4, 1, 32, 1] and len(sch.trace) == 38
    a, b = np.random.default_rng(2).standard_normal((2, 128, 128)).astype("float32")
    c = np.zeros((128, 128), "float32")
    tvm.build(sch.mod, target="llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert b54 is not None
    # the trace replayed as TVM users do: on a schedule they made, with or without the postprocessing
    again, sketch = tvm.tir.Schedule(Matmul), tvm.tir.Schedule(Matmul)
    sch.trace.apply_to_schedule(again, remove_postproc=False)
    sch.trace.apply_to_schedule(sketch, remove_postproc=True)
    assert_structural_equal(again.mod, sch.mod)
    assert len(sketch.trace) == 17 and not tvm.ir.structural_equal(sketch.mod, sch.mod)
    c[:] = 0
    tvm.build(sketch.mod, target="llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


# b11, with the kernels' elided bodies (``...``) written out
@tvm.script.ir_module
class MLPModel:
    @T.prim_func
    def relu0(X: T.Buffer[(1, 128), "float32"],
              Y: T.Buffer[(1, 128), "float32"]):
        for i, j in T.grid(1, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def dense0(X: T.Buffer[(1, 784), "float32"],
               W: T.Buffer[(128, 784), "float32"],
               Z: T.Buffer[(1, 128), "float32"]):
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = T.float32(0)
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def add0(X: T.Buffer[(1, 128), "float32"],
             B: T.Buffer[(128,), "float32"],
             Z: T.Buffer[(1, 128), "float32"]):
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = X[vi, vj] + B[vj]


    @T.prim_func
    def dense1(X: T.Buffer[(1, 128), "float32"],
               W: T.Buffer[(10, 128), "float32"],
               Z: T.Buffer[(1, 10), "float32"]):
        for i, j, k in T.grid(1, 10, 128):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = T.float32(0)
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def add1(X: T.Buffer[(1, 10), "float32"],
             B: T.Buffer[(10,), "float32"],
             Z: T.Buffer[(1, 10), "float32"]):
        for i, j in T.grid(1, 10):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = X[vi, vj] + B[vj]

    @R.function
    def main(x: Tensor((1, 784), "float32"),
             w0: Tensor((128, 784), "float32"),
             b0: Tensor((128,), "float32"),
             w1: Tensor((10, 128), "float32"),
             b1: Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(dense0, (x, w0), (1, 128), dtype="float32")
            lv1 = R.call_tir(add0, (lv0, b0), (1, 128), dtype="float32")
            lv2 = R.call_tir(relu0, (lv1,), (1, 128), dtype="float32")
            lv3 = R.call_tir(dense1, (lv2, w1), (1, 10), dtype="float32")
            out = R.call_tir(add1, (lv3, b1), (1, 10), dtype="float32")
            R.output(out)
        return out


def mlp_reference(x, p):
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]


def test_b11_the_model_of_five_kernels_runs(img):
    p = mlp_weights()
    x = img.reshape(1, 784)
    vm = relax.VirtualMachine(relax.build(MLPModel, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x, p["w0"], p["b0"], p["w1"], p["b1"]).numpy(), mlp_reference(x, p),
                               rtol=1e-4, atol=1e-4)


def test_b12_b13_fuse_ops_prints_its_groups_and_fuse_tir_drops_what_it_fused(img):
    from tunefarm.script.relax_parser import from_source

    p = mlp_weights()
    bound = relax.transform.BindParams("main", p)(MLPModel)
    MLPModelTIR = relax.transform.FuseOps()(bound)
    text = MLPModelTIR.script()
    assert "R.func_attr({'Primitive': True})" in text
    assert 'lv2: R.Tensor((1, 128), dtype="float32") = fused_dense0_add0_relu0(x, ' \
           'metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])' in text
    again = from_source(text, metadata=MLPModelTIR["main"].metadata())
    assert again.script() == text
    # b13
    MLPModelFinal = relax.transform.FuseTIR()(MLPModelTIR)

    assert list(MLPModelFinal) == ["main", "fused_dense0_add0_relu0", "fused_dense1_add1"]
    x = img.reshape(1, 784)
    for mod in (MLPModelTIR, again, MLPModelFinal):
        vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
        np.testing.assert_allclose(vm["main"](x).numpy(), mlp_reference(x, p), rtol=1e-4, atol=1e-4)


def test_b12_the_printed_fuse_ops_module_with_its_bodies_written_out(img):
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @tvm.script.ir_module
    class Module:
        @R.function
        def fused_dense_add1(x: Tensor((1, 128), "float32"), w: Tensor((10, 128), "float32"), b: Tensor((10,), "float32")) -> Tensor(None, "float32", ndim = 2):
            with R.dataflow():
                lv = R.call_tir(dense1, (x, w), (1, 10), dtype="float32")
                gv = R.call_tir(add1, (lv, b), (1, 10), dtype="float32")
                R.output(gv)
            return gv

        @T.prim_func
        def relu(rxplaceholder: T.Buffer[(1, T.int64(128)), "float32"], compute: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
            for i0, i1 in T.grid(1, T.int64(128)):
                with T.block("compute"):
                    i0_1 = T.axis.spatial(1, i0)
                    i1_1 = T.axis.spatial(T.int64(128), i1)
                    compute[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

        @T.prim_func
        def dense1(rxplaceholder: T.Buffer[(1, T.int64(128)), "float32"], rxplaceholder_1: T.Buffer[(T.int64(10), T.int64(128)), "float32"], T_matmul_NT: T.Buffer[(1, T.int64(10)), "float32"]) -> None:
            for i0, i1, i2 in T.grid(1, T.int64(10), T.int64(128)):
                with T.block("T_matmul_NT"):
                    i = T.axis.spatial(1, i0)
                    j = T.axis.spatial(T.int64(10), i1)
                    k = T.axis.reduce(T.int64(128), i2)
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + rxplaceholder[i, k] * rxplaceholder_1[j, k]

        @T.prim_func
        def add1(rxplaceholder: T.Buffer[(1, T.int64(10)), "float32"], rxplaceholder_1: T.Buffer[T.int64(10), "float32"], T_add: T.Buffer[(1, T.int64(10)), "float32"]) -> None:
            for i0, i1 in T.grid(1, T.int64(10)):
                with T.block("T_add"):
                    ax0 = T.axis.spatial(1, i0)
                    ax1 = T.axis.spatial(T.int64(10), i1)
                    T_add[ax0, ax1] = rxplaceholder[ax0, ax1] + rxplaceholder_1[ax1]

        @T.prim_func
        def dense(rxplaceholder: T.Buffer[(1, 784), "float32"], rxplaceholder_1: T.Buffer[(T.int64(128), T.int64(784)), "float32"], T_matmul_NT: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
            for i0, i1, i2 in T.grid(1, T.int64(128), 784):
                with T.block("T_matmul_NT"):
                    i = T.axis.spatial(1, i0)
                    j = T.axis.spatial(T.int64(128), i1)
                    k = T.axis.reduce(784, i2)
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + rxplaceholder[i, k] * rxplaceholder_1[j, k]

        @T.prim_func
        def add(rxplaceholder: T.Buffer[(1, T.int64(128)), "float32"], rxplaceholder_1: T.Buffer[T.int64(128), "float32"], T_add: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
            for i0, i1 in T.grid(1, T.int64(128)):
                with T.block("T_add"):
                    ax0 = T.axis.spatial(1, i0)
                    ax1 = T.axis.spatial(T.int64(128), i1)
                    T_add[ax0, ax1] = rxplaceholder[ax0, ax1] + rxplaceholder_1[ax1]

        @R.function
        def fused_dense_add0(x1: Tensor((1, 784), "float32"), w1: Tensor((128, 784), "float32"), b1: Tensor((128,), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv1 = R.call_tir(dense, (x1, w1), (1, 128), dtype="float32")
                gv1 = R.call_tir(add, (lv1, b1), (1, 128), dtype="float32")
                R.output(gv1)
            return gv1

        @R.function
        def main(x2: Tensor((1, 784), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv11: Tensor((1, 128), "float32") = fused_dense_add0(x2, meta[relay.Constant][0], meta[relay.Constant][1])
                lv2 = R.call_tir(relu, (lv11,), (1, 128), dtype="float32")
                lv4: Tensor((1, 10), "float32") = fused_dense_add1(lv2, meta[relay.Constant][2], meta[relay.Constant][3])
                gv2: Tensor((1, 10), "float32") = lv4
                R.output(gv2)
            return gv2

    fused = relax.transform.FuseTIR()(Module)
    assert sorted(fused) == ["fused_dense_add0", "fused_dense_add1", "main", "relu"]
    x = img.reshape(1, 784)
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), mlp_reference(x, p), rtol=1e-4, atol=1e-4)


def test_b14_the_printed_fuse_tir_module(img):
    p = mlp_weights()
    metadata = {"relax.expr.Constant": [p["w0"], p["b0"], p["w1"], p["b1"]]}

    @tvm.script.ir_module
    class Module:
        @T.prim_func
        def fused_dense_add0(x: T.Buffer[(1, 784), "float32"], w: T.Buffer[(T.int64(128), T.int64(784)), "float32"], b: T.Buffer[T.int64(128), "float32"], T_add: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
            # function attr dict
            T.func_attr({"tir.noalias": True, "global_symbol": "fused_dense_add0"})
            # body
            # with T.block("root")
            T_matmul_NT = T.alloc_buffer([1, T.int64(128)], dtype="float32")
            for i0, i1, i2 in T.grid(1, T.int64(128), 784):
                with T.block("T_matmul_NT"):
                    i = T.axis.spatial(1, i0)
                    j = T.axis.spatial(T.int64(128), i1)
                    k = T.axis.reduce(784, i2)
                    T.reads(x[i, k], w[j, k])
                    T.writes(T_matmul_NT[i, j])
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + x[i, k] * w[j, k]
            for i0, i1 in T.grid(1, T.int64(128)):
                with T.block("T_add"):
                    ax0 = T.axis.spatial(1, i0)
                    ax1 = T.axis.spatial(T.int64(128), i1)
                    T.reads(T_matmul_NT[ax0, ax1], b[ax1])
                    T.writes(T_add[ax0, ax1])
                    T_add[ax0, ax1] = T_matmul_NT[ax0, ax1] + b[ax1]

        @T.prim_func
        def relu(rxplaceholder: T.Buffer[(1, T.int64(128)), "float32"], compute: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
            # function attr dict
            T.func_attr({"global_symbol": "relu", "tir.noalias": True})
            # body
            # with T.block("root")
            for i0, i1 in T.grid(1, T.int64(128)):
                with T.block("compute"):
                    i0_1 = T.axis.spatial(1, i0)
                    i1_1 = T.axis.spatial(T.int64(128), i1)
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(compute[i0_1, i1_1])
                    compute[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

        @T.prim_func
        def fused_dense_add1(x: T.Buffer[(1, T.int64(128)), "float32"], w: T.Buffer[(T.int64(10), T.int64(128)), "float32"], b: T.Buffer[T.int64(10), "float32"], T_add: T.Buffer[(1, T.int64(10)), "float32"]) -> None:
            # function attr dict
            T.func_attr({"tir.noalias": True, "global_symbol": "fused_dense_add1"})
            # body
            # with T.block("root")
            T_matmul_NT = T.alloc_buffer([1, T.int64(10)], dtype="float32")
            for i0, i1, i2 in T.grid(1, T.int64(10), T.int64(128)):
                with T.block("T_matmul_NT"):
                    i = T.axis.spatial(1, i0)
                    j = T.axis.spatial(T.int64(10), i1)
                    k = T.axis.reduce(T.int64(128), i2)
                    T.reads(x[i, k], w[j, k])
                    T.writes(T_matmul_NT[i, j])
                    with T.init():
                        T_matmul_NT[i, j] = T.float32(0)
                    T_matmul_NT[i, j] = T_matmul_NT[i, j] + x[i, k] * w[j, k]
            for i0, i1 in T.grid(1, T.int64(10)):
                with T.block("T_add"):
                    ax0 = T.axis.spatial(1, i0)
                    ax1 = T.axis.spatial(T.int64(10), i1)
                    T.reads(T_matmul_NT[ax0, ax1], b[ax1])
                    T.writes(T_add[ax0, ax1])
                    T_add[ax0, ax1] = T_matmul_NT[ax0, ax1] + b[ax1]

        @R.function
        def main(x: Tensor((1, 784), "float32")) -> Tensor(None, "float32", ndim = 2):
            # block 0
            with R.dataflow():
                lv1 = R.call_tir(fused_dense_add0, (x, meta[relay.Constant][0], meta[relay.Constant][1]), (1, 128), dtype="float32")
                lv2 = R.call_tir(relu, (lv1,), (1, 128), dtype="float32")
                lv4 = R.call_tir(fused_dense_add1, (lv2, meta[relay.Constant][2], meta[relay.Constant][3]), (1, 10), dtype="float32")
                gv: Tensor((1, 10), "float32") = lv4
                R.output(gv)
            return gv

    x = img.reshape(1, 784)
    vm = relax.VirtualMachine(relax.build(Module, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), mlp_reference(x, p), rtol=1e-4, atol=1e-4)


@pytest.mark.torch
def test_b15_b16_torch_functions_called_with_the_older_call_tir(img):
    import torch

    # b15
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

    # b16
    @tvm.script.ir_module
    class MyModuleWithExternCall:
        @R.function
        def main(x: Tensor((1, 784), "float32"),
                 w0: Tensor((128, 784), "float32"),
                 b0: Tensor((128,), "float32"),
                 w1: Tensor((10, 128), "float32"),
                 b1: Tensor((10,), "float32")):
            # block 0
            with R.dataflow():
                lv0 = R.call_tir("env.linear", (x, w0, b0), (1, 128), dtype="float32")
                lv1 = R.call_tir("env.relu", (lv0,), (1, 128), dtype="float32")
                out = R.call_tir("env.linear", (lv1, w1, b1), (1, 10), dtype="float32")
                R.output(out)
            return out

    p = mlp_weights()
    x = img.reshape(1, 784)
    vm = relax.VirtualMachine(relax.build(MyModuleWithExternCall, target="llvm"), tvm.cpu())
    got = vm["main"](x, p["w0"], p["b0"], p["w1"], p["b1"]).numpy()
    np.testing.assert_allclose(got, mlp_reference(x, p), rtol=1e-4, atol=1e-4)
