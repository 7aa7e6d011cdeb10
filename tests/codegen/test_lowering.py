"""Lowering structure: what the code generator receives after blocks, allocation placement, unrolling and
flattening (asserted on the lowered IR itself, independent of LLVM)."""
from __future__ import annotations

import numpy as np
import pytest

from codegen_programs import loops, matmul_naive, matmul_tiled, nodes, realize
from tunefarm.codegen import LoweringError, lower
from tunefarm.codegen.alloc_plan import plan_allocations
from tunefarm.codegen.unroll import AUTO_UNROLL_KEY, auto_unroll, unroll_loops
from tunefarm.ir import (Buffer, BufferStore, For, IfThenElse, PrimFunc, Var, const, seq, wrap_root)
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.runtime import build


def test_init_becomes_guarded_statement_and_vars_are_int64():
    f, _ = matmul_naive(8, 8, 8)
    lf = lower(f)
    ifs = nodes(lf.body, IfThenElse)
    assert len(ifs) == 1
    cond = ifs[0].condition
    assert isinstance(cond, E.Binary) and cond.op == "=="
    assert all(fl.loop_var.dtype == "int64" for fl in nodes(lf.body, For))
    stores = nodes(lf.body, BufferStore)
    assert all(len(s.indices) == 1 for s in stores)  # flattened


def test_flattened_indices_are_simplified_affine():
    f, _ = matmul_tiled(16, 32, 8, 4, 16)
    lf = lower(f)
    # the local accumulator is indexed with the unrolled row and the vector lane only (no tile offsets)
    local_stores = [s for s in nodes(lf.body, BufferStore) if s.buffer.name == "C_local"]
    assert len(local_stores) == 2  # init and update; their 4 rows stay ``unrolled`` loops for LLVM
    assert sorted(repr(s.indices[0]) for s in local_stores) == ["ii * 16 + ji", "ii0 * 16 + ji0"]
    rows = [fl for fl in nodes(lf.body, For) if fl.kind == "unrolled"]
    assert sorted(fl.loop_var.name for fl in rows) == ["ax0", "ii", "ii0"]
    assert all(fl.const_extent() == 4 for fl in rows)
    # copied in the IR (the old pipeline), the rows fold to constant offsets
    copied = [s for s in nodes(lower(f, unroll_in_ir=True).body, BufferStore) if s.buffer.name == "C_local"]
    assert len(copied) == 2 * 4
    for s in copied:
        txt = repr(s.indices[0])
        assert txt in ("ji0", "ji") or txt.endswith(("+ 16", "+ 32", "+ 48")), txt
        assert "//" not in txt and "%" not in txt and "io" not in txt and "jo" not in txt, txt


def test_local_allocation_is_placed_inside_the_tile_loops():
    f, _ = matmul_tiled(16, 32, 8, 4, 16)
    lf = lower(f)
    allocs = nodes(lf.body, S.Allocate)
    assert len(allocs) == 1 and allocs[0].buffer.name == "C_local"
    assert isinstance(lf.body, For) and not isinstance(lf.body.body, S.Allocate)  # under io and jo
    assert isinstance(lf.body.body.body, S.Allocate)
    assert allocs[0].buffer.shape[0].value == 64


def test_plan_allocations_uses_lowest_common_ancestor_and_drops_unused():
    A = Buffer("A", (4,))
    T1, T2 = Buffer("T1", (4,)), Buffer("T2", (4,))
    i, j = Var("i", "int64"), Var("j", "int64")
    body = For(i, 0, 4, "serial", seq(
        For(j, 0, 4, "serial", BufferStore(T1, const(1.0), (j,))),
        BufferStore(A, T1[i], (i,))))
    out = plan_allocations(body, [T1, T2])
    assert isinstance(out, For) and isinstance(out.body, S.Allocate) and out.body.buffer is T1
    assert len(nodes(out, S.Allocate)) == 1


def test_unrolled_loops_stay_loops_for_llvm_or_expand_with_constant_indices():
    A = Buffer("A", (4, 8))
    i, j = Var("i", "int64"), Var("j", "int64")
    body = For(i, 0, 4, "unrolled", For(j, 0, 8, "serial", BufferStore(A, const(1.0), (i, j))))
    kept = unroll_loops(body)
    assert isinstance(kept, For) and kept.kind == "unrolled" and kept.loop_var is i
    out = unroll_loops(body, in_ir=True)
    assert isinstance(out, S.SeqStmt) and len(out.seq) == 4
    assert [repr(x.body.indices[0]) for x in out.seq] == ["T.int64(0)", "T.int64(1)", "T.int64(2)", "T.int64(3)"]
    n = Var("n", "int64")  # an ``unrolled`` loop without a constant range runs serially
    assert unroll_loops(For(i, 0, n, "unrolled", BufferStore(A, const(1.0), (i, 0)))).kind == "serial"


def test_auto_unroll_max_step_follows_tvm_rule():
    A = Buffer("A", (4, 8))
    i, j = Var("i", "int64"), Var("j", "int64")
    inner = For(j, 0, 4, "serial", BufferStore(A, const(1.0), (i, j)))
    nest = For(i, 0, 4, "serial", inner, {AUTO_UNROLL_KEY: 8})
    out = unroll_loops(nest)
    # the inner loop (4 steps) unrolls; the outer one would be 16 > 8 steps and stays a loop
    assert isinstance(out, For) and out.loop_var is i and out.kind == "serial"
    assert isinstance(out.body, For) and out.body.loop_var is j and out.body.kind == "unrolled"
    copied = unroll_loops(nest, in_ir=True)
    assert isinstance(copied, For) and isinstance(copied.body, S.SeqStmt) and len(copied.body.seq) == 4
    everything = auto_unroll(nest, 16)
    assert [fl.kind for fl in nodes(everything, For)] == ["unrolled", "unrolled"]
    copied_all = unroll_loops(everything, in_ir=True)
    assert isinstance(copied_all, S.SeqStmt) and len(copied_all.seq) == 16 and not nodes(copied_all, For)
    # a loop around a loop that stays rolled is never unrolled, whatever the step limit
    rolled = For(i, 0, 2, "serial", For(j, 0, 4, "parallel", BufferStore(A, const(1.0), (i, j))))
    assert [fl.kind for fl in nodes(auto_unroll(rolled, 512), For)] == ["serial", "parallel"]


def test_auto_unroll_annotation_on_block_and_bad_value_ignored():
    n = 4
    A, B = Buffer("A", (n, n)), Buffer("B", (n, n))
    body = loops([("i", n, "serial"), ("j", n, "serial")], lambda i, j: realize(
        "B", [("S", n, i), ("S", n, j)], lambda vi, vj: BufferStore(B, A[vi, vj] * 2.0, (vi, vj))))
    root = wrap_root(body)
    blk = root.block.replace(annotations={AUTO_UNROLL_KEY: 64})
    f = PrimFunc([A, B], root.replace(block=blk), name="scale")
    assert [fl.kind for fl in nodes(lower(f).body, For)] == ["unrolled", "unrolled"]
    assert not nodes(lower(f, unroll_in_ir=True).body, For)
    blk_bad = root.block.replace(annotations={AUTO_UNROLL_KEY: "SSRSRS"})
    f_bad = PrimFunc([A, B], root.replace(block=blk_bad), name="scale")
    assert [fl.kind for fl in nodes(lower(f_bad).body, For)] == ["serial", "serial"]
    a = np.arange(16, dtype="float32").reshape(4, 4)
    for func in (f, f_bad):
        b = np.zeros_like(a)
        build(func)(a, b)
        np.testing.assert_array_equal(b, a * 2)


def test_predicate_becomes_if_and_divisible_one_disappears():
    n = 10
    A, B = Buffer("A", (n,)), Buffer("B", (n,))

    def split_prog(extent, factor):
        return loops([("io", (extent + factor - 1) // factor, "serial"), ("ii", factor, "serial")],
                     lambda io, ii: realize("B", [("S", n, io * factor + ii)],
                                            lambda v: BufferStore(B, A[v] + 1.0, (v,)),
                                            predicate=(io * factor + ii) < extent))

    f = PrimFunc([A, B], wrap_root(split_prog(10, 4)), name="p")
    assert len(nodes(lower(f).body, IfThenElse)) == 1
    g = PrimFunc([A, B], wrap_root(split_prog(10, 5)), name="p")
    assert not nodes(lower(g).body, IfThenElse)  # 2 * 5 covers 10 exactly: the predicate is provably true
    a = np.arange(n, dtype="float32")
    for func in (f, g):
        b = np.zeros_like(a)
        build(func)(a, b)
        np.testing.assert_array_equal(b, a + 1)


def test_symbolic_dims_are_bound_from_parameters():
    n, m = Var("n", "int64"), Var("m", "int64")
    A, B = Buffer("A", (n, m)), Buffer("B", (n, m))
    body = loops([("i", n, "serial"), ("j", m, "serial")], lambda i, j: realize(
        "B", [("S", n, i), ("S", m, j)], lambda vi, vj: BufferStore(B, A[vi, vj] + 1.0, (vi, vj))))
    lf = lower(PrimFunc([A, B], wrap_root(body), name="inc"))
    assert [(b.name, b.param, b.dim) for b in lf.sym_vars] == [("n", 0, 0), ("m", 0, 1)]
    (store,) = nodes(lf.body, BufferStore)
    assert "m" in repr(store.indices[0])


def test_unbound_variable_is_a_clear_error():
    A = Buffer("A", (4,))
    stray = Var("stray")
    i = Var("i")
    f = PrimFunc([A], wrap_root(For(i, 0, 4, "serial", BufferStore(A, E.cast("float32", stray), (i,)))),
                 name="bad")
    with pytest.raises(LoweringError, match="stray"):
        lower(f)


def test_symbolic_dim_only_inside_expression_is_rejected():
    n = Var("n", "int64")
    A = Buffer("A", (n * 2,))
    i = Var("i", "int64")
    f = PrimFunc([A], wrap_root(For(i, 0, n * 2, "serial", BufferStore(A, const(0.0), (i,)))), name="bad")
    with pytest.raises(LoweringError, match="symbolic dimension 'n'"):
        lower(f)


def test_compaction_from_the_schedule_layer_is_used():
    # a full-size local accumulator (as cache_write leaves it) shrinks to the 4 x 16 tile
    from search_spaces.handwritten import tiled_matmul
    from tunefarm.schedule import Schedule

    f, _ = matmul_naive(32, 32, 32)
    sch = tiled_matmul(Schedule(f.with_name("main")), 4, 16)
    assert sch.mod["main"].root_block.alloc_buffers[0].shape[0].value == 32  # full size before lowering
    lf = lower(sch.mod["main"])
    sizes = sorted(a.buffer.shape[0].value for a in nodes(lf.body, S.Allocate))
    assert sizes == [64]
