"""The MLC course's schedule examples, applied to the course's programs (``course_programs``) as in the course
notes, checked against the printed results the notes show (parsed with ``tunefarm.script``) and against numpy
(via the reference executor)."""
from __future__ import annotations

import numpy as np

import course_programs as cp
import programs as P
from tunefarm.ir.structural import assert_structural_equal
from tunefarm.reference import interpret
from tunefarm.schedule import Schedule
from tunefarm.script import from_source


def same_program(actual, expected_text: str) -> None:
    """``actual`` is the course's expected program: structurally equal, and printed with the same names."""
    expected = from_source(expected_text)
    if hasattr(expected, "prim_funcs"):
        expected = next(iter(expected.prim_funcs().values()))
    assert_structural_equal(actual, expected)
    assert actual.script().split("\n", 2)[2] == expected.script().split("\n", 2)[2]


def run(func, *arrays):
    interpret(func, *arrays)
    return arrays[-1]


# ------------------------------------------------------------------------------------------------------------
# mm_relu: split / reorder / reverse_compute_at (notes 004)
# ------------------------------------------------------------------------------------------------------------
# the notes' printouts of mm_relu: as written, then after split, reorder and reverse_compute_at
_, AFTER_SPLIT, AFTER_REORDER, AFTER_REVERSE_COMPUTE_AT = [s for s in cp.course_scripts("004") if "def mm_relu" in s]


def test_mm_relu_split_reorder_reverse_compute_at():
    sch = Schedule(cp.MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    same_program(sch.mod["mm_relu"], AFTER_SPLIT)
    sch.reorder(j0, k, j1)
    same_program(sch.mod["mm_relu"], AFTER_REORDER)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    same_program(sch.mod["mm_relu"], AFTER_REVERSE_COMPUTE_AT)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 128, 128)).astype("float32")
    c = run(sch.mod["mm_relu"], a, b, np.zeros((128, 128), "float32"))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    assert sch.trace.as_python() == [
        'b0 = sch.get_block(name="Y", func_name="mm_relu")',
        "l1, l2, l3 = sch.get_loops(block=b0)",
        "l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)",
        "sch.reorder(l4, l3, l5)",
        'b6 = sch.get_block(name="C", func_name="mm_relu")',
        "sch.reverse_compute_at(block=b6, loop=l4, preserve_unit_loops=False)",
    ]


# ------------------------------------------------------------------------------------------------------------
# compute_inline and fuse (notes 000)
# ------------------------------------------------------------------------------------------------------------
# the notes' printouts after compute_inline and after fuse
AFTER_INLINE = cp.course_script("000", "def before_inline(A: T.Buffer", "A[vi, vj] * T.float32(2) + T.float32(1)")
AFTER_FUSE = cp.course_script("000", "for i_j_fused in range(16384):")


def test_compute_inline():
    sch = Schedule(cp.before_inline)
    sch.compute_inline(sch.get_block("B"))
    same_program(sch.mod["main"], AFTER_INLINE)
    a = np.random.default_rng(1).standard_normal((128, 128)).astype("float32")
    np.testing.assert_allclose(run(sch.mod["main"], a, np.zeros_like(a)), a * 2 + 1, rtol=1e-6)


def test_fuse():
    sch = Schedule(cp.before_fuse)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    same_program(sch.mod["main"], AFTER_FUSE)
    a = np.random.default_rng(2).standard_normal((128, 128)).astype("float32")
    np.testing.assert_allclose(run(sch.mod["main"], a, np.zeros_like(a)), a * 2, rtol=1e-6)


# ------------------------------------------------------------------------------------------------------------
# vector_add with T.parallel, MyAdd with split + parallel + unroll + vectorize (notes 001)
# ------------------------------------------------------------------------------------------------------------
def test_vector_add_parallel_loop_is_kept_and_checked():
    sch = Schedule(cp.vector_add)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert sch.get(i).kind == "parallel"
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.parallel(i0)
    sch.vectorize(i1)
    assert [sch.get(x).kind for x in (i0, i1)] == ["parallel", "vectorized"]
    a, b = np.random.default_rng(3).standard_normal((2, 128)).astype("float32")
    np.testing.assert_allclose(run(sch.mod["main"], a, b, np.zeros(128, "float32")), a + b)



AFTER_ADD = '''
@T.prim_func
def add(A: T.Buffer((4, 4), "int64"), B: T.Buffer((4, 4), "int64"), C: T.Buffer((4, 4), "int64")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i_0 in T.parallel(2):
        for i_1 in T.unroll(2):
            for j in T.vectorized(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i_0 * 2 + i_1)
                    vj = T.axis.spatial(4, j)
                    T.reads(A[vi, vj], B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = A[vi, vj] + B[vi, vj]
'''


def test_my_add_split_parallel_unroll_vectorize():
    sch = Schedule(cp.MyAdd)
    block = sch.get_block("C", func_name="add")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[2, 2])
    sch.parallel(i0)
    sch.unroll(i1)
    sch.vectorize(j)
    same_program(sch.mod["add"], AFTER_ADD)
    a = np.arange(16, dtype="int64").reshape(4, 4)
    b = a * 10
    np.testing.assert_array_equal(run(sch.mod["add"], a, b, np.zeros((4, 4), "int64")), a + b)


# ------------------------------------------------------------------------------------------------------------
# stochastic_schedule_mm (notes 002)
# ------------------------------------------------------------------------------------------------------------
def stochastic_schedule_mm(sch: Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def test_stochastic_schedule_mm_trace_carries_its_decision():
    func = cp.MatmulModule
    seen = set()
    for seed in range(6):
        sch = stochastic_schedule_mm(Schedule(func, seed=seed))
        decision = sch.trace.decisions[2]
        assert decision[0] * decision[1] == 128 and decision[1] <= 16
        seen.add(tuple(decision))
        assert sch.trace.as_python() == [
            'b0 = sch.get_block(name="C", func_name="main")',
            "l1, l2, l3 = sch.get_loops(block=b0)",
            f"v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision={decision})",
            "l6, l7 = sch.split(loop=l2, factors=[v4, v5], preserve_unit_iters=True, disable_predication=False)",
            "sch.reorder(l1, l6, l3, l7)",
            "b8 = sch.decompose_reduction(block=b0, loop=l3)",
        ]
        names = [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C"))]
        assert names == ["i", "j_0", "k", "j_1"]
        assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C_init"))] == ["i", "j_0", "j_1_init"]
    assert len(seen) > 1  # the decision is random
    small = stochastic_schedule_mm(Schedule(P.matmul(32, 32, 32), seed=0))
    P.check_numerics(small.mod, "matmul")
