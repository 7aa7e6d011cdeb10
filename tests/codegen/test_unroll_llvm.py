"""Unrolling by LLVM: loops the schedule unrolls reach LLVM as loops marked ``llvm.loop.unroll.full`` and are
unrolled there, giving the same results (and, for these kernels, the same machine code) as copying them in
the IR; loops whose constants matter to the vectorizer are still copied in the IR."""
from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np

from codegen_programs import loops, matmul_tiled, nodes, realize
from tunefarm.codegen import artifact_from_ir, lower, lower_and_emit
from tunefarm.codegen.llvm_codegen import emit_module
from tunefarm.codegen.llvm_compile import optimize
from tunefarm.codegen.loop_metadata import loops_left_to_unroll
from tunefarm.codegen.unroll import AUTO_UNROLL_KEY
from tunefarm.ir import Buffer, BufferStore, For, PrimFunc, const, wrap_root
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.runtime import Module, build
from tunefarm.schedule import Schedule
from tunefarm.target import Target

RNG = np.random.default_rng(11)
TARGET = Target()


def loop_kinds(stmt) -> dict:
    return {loop.loop_var.name: loop.kind for loop in nodes(stmt, S.For)}


def compute_function(ll: str, name: str) -> str:
    """The text of ``__tf_<name>_compute`` in (optimized) LLVM IR."""
    start = ll.index(f"@__tf_{name}_compute(")
    return ll[start:ll.index("\n}", start)]


def unoptimized(func) -> str:
    return str(lower_and_emit(func, TARGET).module)


def matmul_max_step(n: int, max_step: int) -> PrimFunc:
    """``C = A @ B`` (n x n, k = 8) with the reduction split 2 x 4 and ``pragma_auto_unroll_max_step`` on
    the outer loop, as the search's postprocessor writes it."""
    k = 8
    A, B, C = Buffer("A", (n, k)), Buffer("B", (k, n)), Buffer("C", (n, n))
    body = loops([("i", n, "serial"), ("j", n, "serial"), ("ko", 2, "serial"), ("ki", 4, "serial")],
                 lambda i, j, ko, ki: realize(
                     "C", [("S", n, i), ("S", n, j), ("R", k, ko * 4 + ki)],
                     lambda vi, vj, vk: BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
                     init=lambda vi, vj, vk: BufferStore(C, const(0.0), (vi, vj))))
    body = body.replace(annotations={AUTO_UNROLL_KEY: max_step})
    return PrimFunc([A, B, C], wrap_root(body), name="mm_step")


def test_max_step_kernel_is_correct_and_carries_unroll_metadata():
    f = matmul_max_step(6, 8)
    assert loop_kinds(lower(f).body) == {"i": "serial", "j": "serial", "ko": "serial", "ki": "unrolled"}
    ir = unoptimized(f)
    marks = re.findall(r"br label %\"?[\w.]+\"?, !llvm.loop (!\d+)", ir)
    assert len(marks) == 1  # the back edge of ki, and of no other loop
    node = marks[0]
    prop = re.search(rf"^{node} = distinct !{{ {node}, (!\d+) }}$", ir, re.M)
    assert prop is not None, ir[-400:]
    assert re.search(rf'^{prop.group(1)} = !{{ !"llvm.loop.unroll.full" }}$', ir, re.M)
    a = RNG.standard_normal((6, 8)).astype("float32")
    b = RNG.standard_normal((8, 6)).astype("float32")
    c = np.full((6, 6), np.nan, "float32")
    mod = build(f)
    mod["mm_step"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert loops_left_to_unroll(mod.get_source("ll")) == 0


def test_a_small_fully_unrolled_loop_leaves_no_loop_after_llvm():
    f = matmul_max_step(3, 64)  # 3 * 2 * 4 = 24 steps per row: j, ko and ki unroll, i (3 * 24 = 72) stays
    assert loop_kinds(lower(f).body) == {"i": "serial", "j": "unrolled", "ko": "unrolled", "ki": "unrolled"}
    ll = str(optimize(unoptimized(f), TARGET))
    body = compute_function(ll, "mm_step")
    assert loops_left_to_unroll(ll) == 0
    assert body.count(" phi ") <= 1  # i's induction variable at most (LLVM may unroll its 3 trips too)
    assert body.count("llvm.fmuladd") + body.count("fmul") >= 3 * 8  # a row's 24 products, straight-line
    whole = matmul_max_step(3, 512)  # everything unrolls: no loop at all
    assert " phi " not in compute_function(str(optimize(unoptimized(whole), TARGET)), "mm_step")


def test_local_accumulator_kernel_is_correct_and_lives_in_registers():
    f, ref = matmul_tiled(24, 32, 20, 4, 8, inner="unrolled", unroll_rows=True)  # 4 x 8 scalar accumulators
    lf = lower(f)
    assert sum(1 for kind in loop_kinds(lf.body).values() if kind == "unrolled") == 6
    mod = build(f)
    a = RNG.standard_normal((24, 20)).astype("float32")
    b = RNG.standard_normal((20, 32)).astype("float32")
    c = np.zeros((24, 32), "float32")
    mod["matmul_tiled"](a, b, c)
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-5, atol=1e-5)
    body = compute_function(mod.get_source("ll"), "matmul_tiled")
    assert "alloca" not in body  # SROA promoted the whole 4 x 8 tile once LLVM had unrolled it
    assert loops_left_to_unroll(mod.get_source("ll")) == 0


def test_explicit_unroll_from_a_schedule_goes_to_llvm():
    n = 16
    A, B = Buffer("A", (n, n)), Buffer("B", (n, n))
    body = loops([("i", n, "serial"), ("j", n, "serial")], lambda i, j: realize(
        "B", [("S", n, i), ("S", n, j)], lambda vi, vj: BufferStore(B, A[vi, vj] * 3.0 + 1.0, (vi, vj))))
    sch = Schedule(PrimFunc([A, B], wrap_root(body), {"global_symbol": "main"}, "main"))
    i, j = sch.get_loops(sch.get_block("B"))
    jo, ji = sch.split(j, [None, 4])
    sch.unroll(ji)
    func = sch.mod["main"]
    assert sorted(loop_kinds(lower(func).body).values()) == ["serial", "serial", "unrolled"]
    assert "llvm.loop.unroll.full" in unoptimized(func)
    a = RNG.standard_normal((n, n)).astype("float32")
    out = np.zeros((n, n), "float32")
    build(func)["main"](a, out)
    np.testing.assert_allclose(out, a * 3 + 1, rtol=1e-5, atol=1e-6)


def test_same_machine_code_as_unrolling_in_the_ir():
    """The forced unrolling runs before O2, so O2 sees what it saw when the IR was copied in Python."""
    programs = [matmul_tiled(32, 32, 16, 4, 16)[0],  # unrolled rows, vectorized columns, local tile
                matmul_tiled(24, 48, 16, 4, 6, inner="unrolled")[0],  # scalar tile
                matmul_max_step(8, 64)]
    for f in programs:
        objects = []
        for in_ir in (True, False):
            mir = emit_module([lower(f, unroll_in_ir=in_ir)], TARGET)
            objects.append(artifact_from_ir(mir, TARGET, keep_ll=False).object)
        assert objects[0] == objects[1], f.name


def conv1d_padded(n: int = 16, taps: int = 3, max_step: int = 64) -> PrimFunc:
    """``out[x] = sum_r (data[x + r - 1] if 1 <= x + r < n + 1 else 0) * w[r]`` with x vectorized and the
    tap loop under the max-step pragma: the clamp and the condition mix the tap with the lane."""
    data, w, out = Buffer("data", (n,)), Buffer("w", (taps,)), Buffer("out", (n,))
    r, x = E.Var("r"), E.Var("x")
    xv, rv = E.Var("xv"), E.Var("rv")
    pos = xv + rv - 1
    val = E.select(E.logical_and(pos >= 0, pos < n),
                   data[E.min_(E.max_(pos, 0), n - 1)], const(0.0)) * w[rv]
    blk = S.Block("out", [S.IterVar(xv, S.Range(0, n), "S"), S.IterVar(rv, S.Range(0, taps), "R")], [], [],
                  BufferStore(out, out[xv] + val, (xv,)), init=BufferStore(out, const(0.0), (xv,)))
    from tunefarm.ir.regions import infer_block_regions

    reads, writes = infer_block_regions(blk)
    blk = blk.replace(reads=reads, writes=writes)
    nest = For(r, 0, taps, "serial", For(x, 0, n, "vectorized", S.BlockRealize([x, r], S.TRUE, blk)),
               {AUTO_UNROLL_KEY: max_step})
    return PrimFunc([data, w, out], wrap_root(nest), name="conv1d")


def test_a_loop_mixing_with_the_vector_lane_is_copied_in_the_ir():
    f = conv1d_padded()
    lf = lower(f)
    assert set(loop_kinds(lf.body).values()) == {"vectorized"}  # r copied: each tap simplified on its own
    d = RNG.standard_normal(16).astype("float32")
    w = RNG.standard_normal(3).astype("float32")
    out = np.zeros(16, "float32")
    build(f)["conv1d"](d, w, out)
    padded = np.concatenate([[0], d, [0]]).astype("float32")
    np.testing.assert_allclose(out, [padded[x:x + 3] @ w for x in range(16)], rtol=1e-5, atol=1e-6)
    # the middle tap has no padding left: a plain vector load, no gather
    ir = unoptimized(f)
    assert re.search(r"load <16 x float>, ptr %[\"\w.]+, align 4", ir)


def test_loops_inside_a_vectorized_loop_are_copied_so_the_body_stays_vector_code():
    n, k = 8, 4
    A, B = Buffer("A", (n, k)), Buffer("B", (n,))
    i, r = E.Var("i"), E.Var("r")
    body = For(i, 0, n, "vectorized", For(r, 0, k, "unrolled", BufferStore(B, B[i] + A[i, r], (i,))))
    f = PrimFunc([A, B], wrap_root(body), name="rowsum")
    assert loop_kinds(lower(f).body) == {"i": "vectorized"}
    assert "<8 x float>" in unoptimized(f)
    a = RNG.standard_normal((n, k)).astype("float32")
    b = np.ones(n, "float32")
    build(f)["rowsum"](a, b)
    np.testing.assert_allclose(b, 1 + a.sum(axis=1), rtol=1e-5)


def test_llvm_unrolls_only_marked_loops():
    """The forced-unrolling pass has LLVM's heuristics switched off: a tiny unmarked loop stays a loop (a
    recurrence, so that the loop vectorizer leaves it alone too)."""
    n = 4
    A = Buffer("A", (n,))
    i = E.Var("i")

    def prefix(kind):
        return wrap_root(For(i, 0, n - 1, kind, BufferStore(A, A[i] * 2.0 + A[i + 1], (i + 1,))))

    plain, marked = PrimFunc([A], prefix("serial"), name="plain"), PrimFunc([A], prefix("unrolled"), name="marked")
    ll = str(optimize(str(lower_and_emit({"plain": plain, "marked": marked}, TARGET).module), TARGET))
    assert " phi " in compute_function(ll, "plain")
    assert " phi " not in compute_function(ll, "marked")
    art = artifact_from_ir(emit_module([lower(plain), lower(marked)], TARGET), TARGET)
    mod = Module.from_artifact(art)
    want = np.arange(n, dtype="float32")
    for k in range(n - 1):
        want[k + 1] += want[k] * 2
    for name in ("plain", "marked"):
        a = np.arange(n, dtype="float32")
        mod[name](a)
        np.testing.assert_array_equal(a, want)


def test_every_loop_gets_its_own_distinct_loop_id():
    f = matmul_max_step(4, 512)
    ir = unoptimized(f)
    ids = re.findall(r"!llvm.loop (!\d+)", ir)
    assert len(ids) == 4 and len(set(ids)) == 4  # i, j, ko, ki
    mod = llvm.parse_assembly(ir)
    mod.verify()
