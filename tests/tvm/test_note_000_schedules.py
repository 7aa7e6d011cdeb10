"""Course note 000 (MLC lesson 3), its last section: ``emit_te``, ``compute_inline`` and ``fuse``. Every code
block, imports changed only; ``b<N>`` is the N-th fenced block of the note. The note's printed functions are
parsed as written and compared with what the schedule produced."""
from __future__ import annotations

import numpy as np

from tunefarm import tvm
from tunefarm.tvm import relax, te
from tunefarm.tvm.script import tir as T
from tunefarm.ir.structural import assert_structural_equal

from tvm_note_helpers import IPython


def test_b23_emit_te_example_builds_a_module_with_a_relu_kernel():
    def relu(A):
        B = te.compute(shape=(128, 128), fcompute=lambda i, j: te.max(A[i, j], 0), name="B")
        return B

    def emit_te_example():
        bb = relax.BlockBuilder()
        shape = (128, 128)
        dtype = "float32"
        x_struct_info = relax.TensorStructInfo(shape, dtype)
        x = relax.Var("x", x_struct_info)
        with bb.function("main", [x]):
            with bb.dataflow():
                lv0 = bb.emit_te(relu, x)
                gv = bb.emit_output(lv0)
            bb.emit_func_output(gv)
        return bb.get()

    mod = emit_te_example()
    assert list(mod.prim_funcs()) == ["relu"]
    assert "R.call_tir(relu, (x,), out_sinfo=R.Tensor((128, 128), dtype=\"float32\"))" in mod.script()
    a = np.random.default_rng(2).standard_normal((128, 128)).astype("float32")
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.nd.array(a)).numpy(), np.maximum(a, 0))


# b24 ------------------------------------------------------------------------------------------------------
@T.prim_func
def before_inline(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (128, 128))
    B = T.alloc_buffer((128, 128))
    C = T.match_buffer(c, (128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


# b28 ------------------------------------------------------------------------------------------------------
@T.prim_func
def before_fuse(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, (128, 128))
    B = T.match_buffer(b, (128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


def run_2d(func, n_inputs: int = 1):
    rng = np.random.default_rng(5)
    args = [rng.standard_normal((128, 128)).astype("float32") for _ in range(n_inputs)] + [np.zeros((128, 128),
                                                                                               "float32")]
    tvm.build(func, target="llvm")["main"](*args)
    return args


def test_b24_to_b27_compute_inline_as_printed():
    # b24
    sch = tvm.tir.Schedule(before_inline)
    shown = IPython.display.Code(sch.mod["main"].script(), language="python")

    # b25, the note's print-out of the same function
    @T.prim_func
    def printed_before(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        # with T.block("root"):
        B = T.alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    assert_structural_equal(sch.mod["main"], printed_before)
    assert "def before_inline(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):" \
        in str(shown)
    # b26
    sch.compute_inline(sch.get_block("B"))
    shown = IPython.display.Code(sch.mod["main"].script(), language="python")

    # b27
    @T.prim_func
    def printed_after(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        # with T.block("root"):
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    assert_structural_equal(sch.mod["main"], printed_after)
    assert "alloc_buffer" not in str(shown)
    a, c = run_2d(sch.mod)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_b28_to_b31_fuse_as_printed():
    # b28
    sch = tvm.tir.Schedule(before_fuse)
    IPython.display.Code(sch.mod["main"].script(), language="python")

    # b29
    @T.prim_func
    def printed_before(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        # with T.block("root"):
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    assert_structural_equal(sch.mod["main"], printed_before)
    # b30
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    shown = IPython.display.Code(sch.mod["main"].script(), language="python")

    # b31
    @T.prim_func
    def printed_after(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        # with T.block("root"):
        for i_j_fused in range(16384):
            with T.block("B"):
                vi = T.axis.spatial(128, i_j_fused // 128)
                vj = T.axis.spatial(128, i_j_fused % 128)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    assert_structural_equal(sch.mod["main"], printed_after)
    assert "for i_j_fused in range(16384):" in str(shown)
    a, b = run_2d(sch.mod)
    np.testing.assert_allclose(b, a * 2, rtol=1e-6)
