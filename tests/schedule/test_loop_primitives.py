"""split / fuse / reorder / parallel / vectorize / unroll / annotate: structure, numerics and legality."""
from __future__ import annotations

import numpy as np
import pytest

import programs as P
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.reference import interpret
from tunefarm.schedule import Schedule, ScheduleError


def loop_nest(func: PrimFunc, block: str) -> list[tuple[str, int | None, str]]:
    """``[(loop name, constant extent, kind)]`` above a block, outermost first."""
    sch = Schedule(func)
    return [(sch.get(lp).loop_var.name, sch.get(lp).const_extent(), sch.get(lp).kind)
            for lp in sch.get_loops(sch.get_block(block))]


def realize_of(func: PrimFunc, block: str) -> S.BlockRealize:
    from tunefarm.schedule.tree import find_block

    return find_block(func, block)[-1]


# ---------------------------------------------------------------------------------------------------- split
def test_split_divisible_rewrites_binding_and_keeps_results():
    sch = Schedule(P.matmul(16, 16, 16))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    f = sch.mod["main"]
    assert loop_nest(f, "C") == [("i", 16, "serial"), ("j_0", 4, "serial"), ("j_1", 4, "serial"), ("k", 16, "serial")]
    r = realize_of(f, "C")
    assert repr(r.iter_values[1]) == "j_0 * 4 + j_1"
    assert isinstance(r.predicate, E.IntImm) and r.predicate.value == 1  # divisible: no predicate
    P.check_numerics(f, "matmul")


def test_split_non_divisible_is_predicated():
    sch = Schedule(P.matmul(10, 10, 10))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[3, None])
    f = sch.mod["main"]
    assert [x[1] for x in loop_nest(f, "C")] == [3, 4, 10, 10]
    assert repr(realize_of(f, "C").predicate) == "i_0 * 4 + i_1 < 10"
    P.check_numerics(f, "matmul")


def test_split_three_factors_with_expr_rv_factors_and_int_factors():
    sch = Schedule(P.matmul(24, 8, 8))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    tiles = sch.sample_perfect_tile(i, n=3, max_innermost_factor=4, decision=[2, 3, 4])
    a, b, c = sch.split(i, factors=tiles)
    assert [sch.get(x).const_extent() for x in (a, b, c)] == [2, 3, 4]
    assert repr(realize_of(sch.mod["main"], "C").iter_values[0]) == "i_0 * 12 + i_1 * 4 + i_2"
    P.check_numerics(sch.mod, "matmul")


def test_split_refusals():
    sch = Schedule(P.matmul(16, 16, 16))
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="does not cover the extent 16"):
        sch.split(i, factors=[3, 5])
    with pytest.raises(ScheduleError, match="at most one factor may be None"):
        sch.split(i, factors=[None, None])
    with pytest.raises(ScheduleError, match="positive integers"):
        sch.split(i, factors=[0, 16])
    with pytest.raises(ScheduleError, match="disable_predication"):
        sch.split(i, factors=[5, 4], disable_predication=True)
    # nothing was changed or recorded by the failed calls
    assert len(sch.trace) == 2
    sch.split(i, factors=[4, 4], disable_predication=True)  # divisible: fine


def test_split_without_preserving_unit_iters_drops_them_from_bindings():
    sch = Schedule(P.matmul(16, 16, 16))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[1, 16, 1], preserve_unit_iters=False)
    assert repr(realize_of(sch.mod["main"], "C").iter_values[0]) == "i_1"
    P.check_numerics(sch.mod, "matmul")


def test_split_symbolic_extent_needs_a_none_factor_and_runs():
    n = E.Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    f = PrimFunc([A, B], wrap_root(P.nest("B", [("i", n, "S")],
                                           lambda vi: S.BufferStore(B, A[vi] * E.const(2.0), (vi,)))))
    sch = Schedule(f)
    (i,) = sch.get_loops("B")
    with pytest.raises(ScheduleError, match="symbolic extent"):
        sch.split(i, factors=[2, 4])
    sch.split(i, factors=[None, 4])
    x = np.arange(10, dtype="float32")
    y = np.zeros(10, "float32")
    interpret(sch.mod["main"], x, y)
    np.testing.assert_array_equal(y, x * 2)


# ---------------------------------------------------------------------------------------------------- fuse
def test_fuse_course_example():
    sch = Schedule(P.before_fuse())
    i, j = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j)
    f = sch.mod["main"]
    assert loop_nest(f, "B") == [("i_j_fused", 16384, "serial")]
    assert sch.get(fused).loop_var.name == "i_j_fused"
    assert [repr(v) for v in realize_of(f, "B").iter_values] == ["i_j_fused // 128", "i_j_fused % 128"]
    P.check_numerics(f, "before_fuse")


def test_fuse_three_loops_and_single_loop():
    sch = Schedule(P.conv2d())
    loops = sch.get_loops(sch.get_block("conv"))
    f = sch.fuse(*loops[1:4])
    assert sch.get(f).const_extent() == 3 * 6 * 6
    g = sch.fuse(loops[6])
    assert sch.get(g).loop_var.name == "rx_fused"
    P.check_numerics(sch.mod, "conv2d")


def test_fuse_refusals():
    sch = Schedule(P.mm_relu(8))
    i, j, k = sch.get_loops(sch.get_block("Y"))
    ci, cj = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="not adjacent"):
        sch.fuse(i, k)
    with pytest.raises(ScheduleError, match="not adjacent"):
        sch.fuse(j, i)
    with pytest.raises(ScheduleError, match="given twice"):
        sch.fuse(i, i)
    with pytest.raises(ScheduleError, match="not adjacent"):
        sch.fuse(j, ci)


# ---------------------------------------------------------------------------------------------------- reorder
def test_reorder_keeps_unlisted_loops_in_place():
    sch = Schedule(P.conv2d())
    n, f, y, x, rc, ry, rx = sch.get_loops(sch.get_block("conv"))
    sch.reorder(rx, f, rc)  # positions of f, rc, rx (1, 4, 6) receive rx, f, rc
    names = [t[0] for t in loop_nest(sch.mod["main"], "conv")]
    assert names == ["n", "rx", "y", "x", "f", "ry", "rc"]
    P.check_numerics(sch.mod, "conv2d")


def test_reorder_refusals():
    sch = Schedule(P.mm_relu(8))
    i, j, k = sch.get_loops(sch.get_block("Y"))
    ci, cj = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="not in one loop nest"):
        sch.reorder(k, cj)
    with pytest.raises(ScheduleError, match="given twice"):
        sch.reorder(k, k)
    fused = sch.fuse(j, k)  # binds both a spatial and the reduction variable of Y
    with pytest.raises(ScheduleError, match="both spatial and reduction"):
        sch.reorder(fused, i)


def _two_blocks_under_one_loop() -> PrimFunc:
    """for i: (for j: B[i, j] = A[i, j] + 1) ; (for j: C[i, j] = B[i, j] * 2)"""
    A, B, C = Buffer("A", (4, 6)), Buffer("B", (4, 6)), Buffer("C", (4, 6))
    i = E.Var("i")

    def inner(name, out, value_fn):
        j, vi, vj = E.Var("j"), E.Var("vi"), E.Var("vj")
        blk = S.Block(name, [S.IterVar(vi, S.Range.from_extent(4), "S"), S.IterVar(vj, S.Range.from_extent(6), "S")],
                      [], [S.BufferRegion.point(out, (vi, vj))], S.BufferStore(out, value_fn(vi, vj), (vi, vj)))
        return S.For(j, 0, 6, "serial", S.BlockRealize([i, j], S.TRUE, blk))

    body = S.For(i, 0, 4, "serial", S.seq(inner("B", B, lambda a, b: A[a, b] + E.const(1.0)),
                                          inner("C", C, lambda a, b: B[a, b] * E.const(2.0))))
    return PrimFunc([A, C], wrap_root(body, [B]))


def test_reorder_refuses_loops_with_siblings():
    sch = Schedule(_two_blocks_under_one_loop())
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="other statements beside"):
        sch.reorder(j, i)
    with pytest.raises(ScheduleError, match="not adjacent"):
        sch.fuse(i, j)
    _, cj = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="not in one loop nest"):
        sch.reorder(cj, j)
    sch.split(i, [2, 2])  # splitting the shared loop rewrites both blocks
    a = np.arange(24, dtype="float32").reshape(4, 6)
    c = np.zeros((4, 6), "float32")
    interpret(sch.mod["main"], a, c)
    np.testing.assert_array_equal(c, (a + 1) * 2)


def test_loop_rv_of_a_removed_loop_is_an_error():
    sch = Schedule(P.matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(i, [4, 4])
    with pytest.raises(ScheduleError, match="no longer exists"):
        sch.reorder(j, i)
    with pytest.raises(ScheduleError, match="no longer exists"):
        sch.get(i)


# ---------------------------------------------------------------------------------------------------- kinds
def test_course_add_example_split_parallel_unroll_vectorize():
    sch = Schedule(P.add4x4())
    block = sch.get_block("C", func_name="main")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[2, 2])
    sch.parallel(i0)
    sch.unroll(i1)
    sch.vectorize(j)
    f = sch.mod["main"]
    assert loop_nest(f, "C") == [("i_0", 2, "parallel"), ("i_1", 2, "unrolled"), ("j", 4, "vectorized")]
    text = sch.mod.script()
    assert "for i_0 in T.parallel(2):" in text and "for i_1 in T.unroll(2):" in text
    assert "for j in T.vectorized(4):" in text
    P.check_numerics(f, "add4x4")


def test_parallel_and_vectorize_refuse_reduction_loops():
    sch = Schedule(P.matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    for prim in (sch.parallel, sch.vectorize):
        with pytest.raises(ScheduleError, match="reduction iteration variable of block 'C'"):
            prim(k)
    sch.unroll(k)  # unrolling a reduction loop is fine
    sch.parallel(i)
    sch.vectorize(j)
    P.check_numerics(sch.mod, "matmul")


def test_parallel_refuses_a_loop_a_reduction_does_not_bind_spatially():
    sch = Schedule(P.row_sum())
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reorder(j, i)
    with pytest.raises(ScheduleError, match="reduction iteration variable"):
        sch.parallel(j)
    sch.parallel(i)  # distinct rows are independent
    P.check_numerics(sch.mod, "row_sum")


def test_a_loop_of_one_iteration_is_data_parallel_fused_or_not():
    """Fusing two unit loops binds the fused loop nowhere (``i = 0``); it was refused as sharing an accumulator
    while the unit loop it replaced was accepted. One iteration never runs beside another."""
    for fuse in (False, True):
        sch = Schedule(P.matmul(1, 1, 8))
        i, j, k = sch.get_loops(sch.get_block("C"))
        unit = sch.fuse(i, j) if fuse else i
        sch.parallel(unit)
        sch.vectorize(unit)
        assert sch.get(unit).kind == "vectorized" and sch.get(unit).extent.value == 1
        P.check_numerics(sch.mod, "matmul")
    sch = Schedule(P.matmul(2, 1, 8))  # two iterations: still checked
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)
    with pytest.raises(ScheduleError, match="reduction iteration variable"):
        sch.parallel(k)


# ---------------------------------------------------------------------------------------------------- annotate
def test_annotate_and_unannotate_loops_and_blocks():
    sch = Schedule(P.matmul())
    b = sch.get_block("C")
    i, _, _ = sch.get_loops(b)
    v = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.2, 0.3, 0.5], decision=2)
    sch.annotate(b, ann_key="meta_schedule.tiling_structure", ann_val="SSRSRS")
    sch.annotate(b, ann_key="meta_schedule.unroll_explicit", ann_val=v)
    sch.annotate(i, ann_key="pragma_auto_unroll_max_step", ann_val=16)
    assert sch.get(b).annotations == {"meta_schedule.tiling_structure": "SSRSRS", "meta_schedule.unroll_explicit": 64}
    assert sch.get(i).annotations == {"pragma_auto_unroll_max_step": 16}
    sch.unannotate(b, "meta_schedule.tiling_structure")
    sch.unannotate(i, "pragma_auto_unroll_max_step")
    sch.unannotate(i, "never_set")  # as TVM: removing a missing key is not an error
    assert sch.get(b).annotations == {"meta_schedule.unroll_explicit": 64}
    assert sch.get(i).annotations == {}
    with pytest.raises(ScheduleError, match="annotate"):
        sch.annotate(b, ann_key="bad", ann_val=[1, 2])
    with pytest.raises(ScheduleError, match="must be finite"):
        sch.annotate(b, ann_key="bad", ann_val=float("inf"))
    lines = sch.trace.as_python()
    assert 'sch.annotate(block_or_loop=b0, ann_key="meta_schedule.unroll_explicit", ann_val=v4)' in lines
    assert 'sch.annotate(block_or_loop=l1, ann_key="pragma_auto_unroll_max_step", ann_val=16)' in lines


def test_symbolic_int64_loops_split_fuse_parallel_vectorize():
    import course_programs as cp

    sch = Schedule(cp.MLPModule)
    b = sch.get_block("Y", func_name="linear0")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, [None, 4])
    fused = sch.fuse(i, j0)
    sch.parallel(fused)
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(k0, j1)
    sch.vectorize(j1)
    f = sch.mod["linear0"]
    assert repr(realize_of(f, "Y").iter_values[0]) == "0"  # the unit loop i binds its minimum
    rng = np.random.default_rng(0)
    x, w, b = rng.random((1, 21), "float32"), rng.random((10, 21), "float32"), rng.random(10, "float32")
    z = np.zeros((1, 10), "float32")
    interpret(f, x, w, b, z)
    np.testing.assert_allclose(z, x @ w.T + b, rtol=1e-5)
    assert sch.mod["relu0"] is cp.MLPModule["relu0"]
