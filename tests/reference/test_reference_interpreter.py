"""The reference executor on hand-built IR: semantics of blocks, loops, buffers, scalars, and its errors."""
from __future__ import annotations

import numpy as np
import pytest

from reference_ir_programs import loops, matmul, matmul_block, vector_add_split
from tunefarm.ir import (TRUE, Allocate, Block, BlockRealize, Buffer, BufferRegion, BufferStore, Call,
                         For, IfThenElse, IRModule, IterVar, PrimFunc, Range, SeqStmt, Var, cast, const,
                         floordiv, floormod, select, wrap_root)
from tunefarm.ir import expr as E
from tunefarm.reference import compile_reference, interpret

rng = np.random.default_rng(0)


def rand(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------- programs
@pytest.mark.parametrize("kind", ["serial", "parallel", "vectorized", "unrolled"])
def test_matmul_matches_numpy_for_every_loop_kind(kind):
    f = matmul(8, 12, 16, kind)
    a, b = rand(8, 16), rand(16, 12)
    c = np.full((8, 12), 7.0, "float32")  # garbage: init must overwrite it
    interpret(f, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_float32_arithmetic_stays_float32():
    # in float32, (1e8 + 1) - 1e8 == 0; in float64 it is 1
    A, B = Buffer("A", (3,)), Buffer("B", (1,))
    f = PrimFunc([A, B], wrap_root(BufferStore(B, A[0] + A[1] + A[2], (const(0),))))
    out = np.zeros(1, "float32")
    interpret(f, np.array([1e8, 1, -1e8], "float32"), out)
    assert out[0] == 0.0
    # and float64 programs keep float64 precision
    A64, B64 = Buffer("A", (3,), "float64"), Buffer("B", (1,), "float64")
    f64 = PrimFunc([A64, B64], wrap_root(BufferStore(B64, A64[0] + A64[1] + A64[2], (const(0),))))
    out64 = np.zeros(1, "float64")
    interpret(f64, np.array([1e8, 1, -1e8]), out64)
    assert out64[0] == 1.0


def test_split_loop_with_predicate():
    f = vector_add_split(10, 4, predicate=True)
    a, b, c = rand(10), rand(10), np.zeros(10, "float32")
    interpret(f, a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_binding_outside_block_domain_is_an_error():
    f = vector_add_split(10, 4, predicate=False)  # i0 * 4 + i1 reaches 11 without the predicate
    with pytest.raises(IndexError, match=r"block 'C'.*'v'.*10"):
        interpret(f, rand(10), rand(10), np.zeros(10, "float32"))


def test_out_of_bounds_store_names_the_buffer():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    i = Var("i")
    f = PrimFunc([A, B], wrap_root(For(i, 0, 8, "serial", BufferStore(B, A[i], (i + 1,)))))
    with pytest.raises(IndexError, match=r"buffer 'B'.*\[8\].*\(8\)"):
        interpret(f, rand(8), np.zeros(8, "float32"))


def test_negative_index_is_out_of_bounds_not_wrapped():
    A, B = Buffer("A", (4, 4)), Buffer("B", (4, 4))
    i, j = Var("i"), Var("j")
    f = PrimFunc([A, B], wrap_root(loops([(i, 4), (j, 4)], BufferStore(B, A[i, j - 1], (i, j)))))
    with pytest.raises(IndexError, match=r"buffer 'A'.*\[0, -1\]"):
        interpret(f, rand(4, 4), np.zeros((4, 4), "float32"))


def test_init_runs_when_reduction_vars_are_at_their_minimum():
    # reduction split and reordered: k0 outermost, so init must fire once per i when k0 == k1 == 0,
    # and never again (an init on every k0 would drop the partial sums of earlier k0 iterations)
    n, kext = 6, 8
    A, C = Buffer("A", (n, kext)), Buffer("C", (n,))
    k0, i, k1 = Var("k0"), Var("i"), Var("k1")
    vi, vk = Var("vi"), Var("vk")
    blk = Block("sum", [IterVar(vi, Range(0, n), "S"), IterVar(vk, Range(0, kext), "R")],
                [BufferRegion.point(A, (vi, vk))], [BufferRegion.point(C, (vi,))],
                BufferStore(C, C[vi] + A[vi, vk], (vi,)), BufferStore(C, const(0.0), (vi,)))
    body = loops([(k0, 2), (i, n), (k1, 4)], BlockRealize((i, k0 * 4 + k1), TRUE, blk))
    f = PrimFunc([A, C], wrap_root(body))
    a, c = rand(n, kext), np.full(n, 100.0, "float32")
    interpret(f, a, c)
    np.testing.assert_allclose(c, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_init_uses_the_domain_minimum_not_zero():
    # reduce over vk in [2, 6): init fires when vk == 2
    A, C = Buffer("A", (8,)), Buffer("C", (1,))
    k, vk = Var("k"), Var("vk")
    blk = Block("s", [IterVar(vk, Range(2, 4), "R")], [BufferRegion.point(A, (vk,))],
                [BufferRegion.point(C, (const(0),))],
                BufferStore(C, C[0] + A[vk], (const(0),)), BufferStore(C, const(0.0), (const(0),)))
    f = PrimFunc([A, C], wrap_root(For(k, 2, 4, "serial", BlockRealize((k,), TRUE, blk))))
    a, c = rand(8), np.full(1, 5.0, "float32")
    interpret(f, a, c)
    np.testing.assert_allclose(c[0], a[2:6].sum(), rtol=1e-6)


def test_local_accumulator_in_root_alloc_buffers():
    # cache_write style: accumulate in a "local" buffer, then copy to the output
    n = 6
    A, B, C = Buffer("A", (n, n)), Buffer("B", (n, n)), Buffer("C", (n, n))
    L = Buffer("C_local", (n, n), scope="local")
    i, j, k, vi, vj, vk = (Var(x) for x in ("i", "j", "k", "vi", "vj", "vk"))
    comp = BlockRealize((i, j, k), TRUE, matmul_block(A, B, L, vi, vj, vk, n, n, n, "C_local"))
    i2, j2, wi, wj = Var("i"), Var("j"), Var("vi"), Var("vj")
    copy = Block("C", [IterVar(wi, Range(0, n), "S"), IterVar(wj, Range(0, n), "S")],
                 [BufferRegion.point(L, (wi, wj))], [BufferRegion.point(C, (wi, wj))],
                 BufferStore(C, L[wi, wj], (wi, wj)))
    body = SeqStmt([loops([(i, n), (j, n), (k, n)], comp), loops([(i2, n), (j2, n)], BlockRealize((i2, j2), TRUE, copy))])
    f = PrimFunc([A, B, C], wrap_root(body, [L]))
    a, b, c = rand(n, n), rand(n, n), np.zeros((n, n), "float32")
    interpret(f, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_nested_blocks_with_per_instance_local_buffer():
    # outer block per row allocates a local row buffer, an inner block fills it, another copies it doubled
    n, m = 3, 5
    A, C = Buffer("A", (n, m)), Buffer("C", (n, m))
    row = Buffer("row", (m,), scope="local")
    i, vi = Var("i"), Var("vi")
    j1, vj1, j2, vj2 = Var("j"), Var("vj"), Var("j"), Var("vj")
    fill = Block("fill", [IterVar(vj1, Range(0, m), "S")], [], [], BufferStore(row, A[vi, vj1], (vj1,)))
    out = Block("out", [IterVar(vj2, Range(0, m), "S")], [], [], BufferStore(C, row[vj2] * const(2.0), (vi, vj2)))
    outer = Block("outer", [IterVar(vi, Range(0, n), "S")], [], [],
                  SeqStmt([For(j1, 0, m, "serial", BlockRealize((j1,), TRUE, fill)),
                           For(j2, 0, m, "serial", BlockRealize((j2,), TRUE, out))]),
                  alloc_buffers=[row])
    f = PrimFunc([A, C], wrap_root(For(i, 0, n, "serial", BlockRealize((i,), TRUE, outer))))
    a, c = rand(n, m), np.zeros((n, m), "float32")
    interpret(f, a, c)
    np.testing.assert_array_equal(c, a * np.float32(2))


def test_reading_memory_nobody_wrote_gives_nan():
    A, B = Buffer("A", (4,)), Buffer("B", (4,))
    T = Buffer("tmp", (4,))
    i = Var("i")
    f = PrimFunc([A, B], wrap_root(For(i, 0, 4, "serial", BufferStore(B, A[i] + T[i], (i,))), [T]))
    b = np.zeros(4, "float32")
    interpret(f, rand(4), b)
    assert np.isnan(b).all()


def test_allocate_if_then_else_select_and_lowered_form():
    # lowered form (no blocks): Allocate + loops; clamp negatives with IfThenElse, double with a Select
    n = 7
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    tmp = Buffer("tmp", (n,))
    i, j = Var("i"), Var("j")
    first = For(i, 0, n, "serial", IfThenElse(A[i] < const(0.0), BufferStore(tmp, const(0.0), (i,)),
                                              BufferStore(tmp, A[i], (i,))))
    second = For(j, 0, n, "serial", BufferStore(B, select(floormod(j, 2).equal(0),
                                                          tmp[j] * const(2.0), tmp[j]), (j,)))
    f = PrimFunc([A, B], Allocate(tmp, SeqStmt([first, second])))
    a, b = rand(n), np.zeros(n, "float32")
    interpret(f, a, b)
    want = np.maximum(a, 0)
    want[::2] *= 2
    np.testing.assert_array_equal(b, want)


def test_select_evaluates_only_the_taken_side():
    # A[i - 1] would be out of bounds at i == 0, but the condition guards it
    n = 5
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i = Var("i")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "serial",
                                      BufferStore(B, select(i > 0, A[i - 1], const(0.0)), (i,)))))
    a, b = rand(n), np.zeros(n, "float32")
    interpret(f, a, b)
    np.testing.assert_array_equal(b, np.concatenate([[0], a[:-1]]))


def test_integer_division_semantics():
    # "/" truncates like C, "//" and "%" floor
    ins = Buffer("x", (4,), "int32")
    outs = [Buffer(n, (4,), "int32") for n in ("q", "fq", "fm")]
    i = Var("i")
    body = SeqStmt([BufferStore(outs[0], E.div(ins[i], const(3)), (i,)),
                    BufferStore(outs[1], floordiv(ins[i], const(3)), (i,)),
                    BufferStore(outs[2], floormod(ins[i], const(3)), (i,))])
    f = PrimFunc([ins] + outs, wrap_root(For(i, 0, 4, "serial", body)))
    x = np.array([-7, -1, 5, 7], "int32")
    q, fq, fm = (np.zeros(4, "int32") for _ in range(3))
    interpret(f, x, q, fq, fm)
    np.testing.assert_array_equal(q, [-2, 0, 1, 2])
    np.testing.assert_array_equal(fq, x // 3)
    np.testing.assert_array_equal(fm, x % 3)


def test_casts_follow_c_and_numpy():
    X = Buffer("x", (4,))
    I, F = Buffer("i", (4,), "int32"), Buffer("f", (4,), "float64")
    i = Var("i")
    body = SeqStmt([BufferStore(I, cast("int32", X[i]), (i,)),
                    BufferStore(F, cast("float64", cast("int32", X[i])) + cast("float64", i), (i,))])
    f = PrimFunc([X, I, F], wrap_root(For(i, 0, 4, "serial", body)))
    x = np.array([-2.7, -0.5, 0.5, 3.9], "float32")
    oi, of = np.zeros(4, "int32"), np.zeros(4, "float64")
    interpret(f, x, oi, of)
    np.testing.assert_array_equal(oi, [-2, 0, 0, 3])  # truncation toward zero
    np.testing.assert_array_equal(of, [-2.0, 1.0, 2.0, 6.0])


@pytest.mark.parametrize("op,ref", [("exp", np.exp), ("sqrt", lambda v: np.sqrt(np.abs(v))),
                                    ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
                                    ("fabs", np.abs), ("floor", np.floor), ("round", np.rint)])
def test_intrinsics_match_numpy_in_float32(op, ref):
    X, Y = Buffer("x", (16,)), Buffer("y", (16,))
    i = Var("i")
    arg = Call("fabs", (X[i],)) if op == "sqrt" else X[i]
    f = PrimFunc([X, Y], wrap_root(For(i, 0, 16, "serial", BufferStore(Y, Call(op, (arg,)), (i,)))))
    x, y = rand(16) * 3, np.zeros(16, "float32")
    interpret(f, x, y)
    np.testing.assert_allclose(y, ref(x).astype("float32"), rtol=2e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------- symbolic
def _sym_add():
    n = Var("n", "int64")
    A, B, C = Buffer("A", (n, 4)), Buffer("B", (4,)), Buffer("C", (n, 4))
    i, j, vi, vj = Var("i", "int64"), Var("j", "int64"), Var("vi", "int64"), Var("vj", "int64")
    blk = Block("C", [IterVar(vi, Range(const(0, "int64"), n), "S"), IterVar(vj, Range(const(0, "int64"), 4), "S")],
                [], [], BufferStore(C, A[vi, vj] + B[vj], (vi, vj)))
    body = For(i, 0, n, "serial", For(j, 0, 4, "serial", BlockRealize((i, j), TRUE, blk)))
    return PrimFunc([A, B, C], wrap_root(body))


@pytest.mark.parametrize("rows", [1, 3, 5])
def test_symbolic_dims_bound_from_array_shapes(rows):
    f = _sym_add()
    a, b, c = rand(rows, 4), rand(4), np.zeros((rows, 4), "float32")
    interpret(f, a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_inconsistent_symbolic_dims_name_the_parameter():
    with pytest.raises(ValueError, match=r"parameter 'C'.*n = 3"):
        interpret(_sym_add(), rand(3, 4), rand(4), np.zeros((5, 4), "float32"))


def test_symbolic_alloc_buffer_uses_bound_size():
    n = Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    T = Buffer("T", (n * 2,))
    i, j = Var("i"), Var("j")
    body = SeqStmt([For(i, 0, n * 2, "serial", BufferStore(T, A[floordiv(i, 2)], (i,))),
                    For(j, 0, n, "serial", BufferStore(B, T[j * 2] + T[j * 2 + 1], (j,)))])
    f = PrimFunc([A, B], wrap_root(body, [T]))
    a, b = rand(6), np.zeros(6, "float32")
    interpret(f, a, b)
    np.testing.assert_allclose(b, 2 * a, rtol=1e-6)


# ---------------------------------------------------------------------------------------------- errors
def test_argument_errors_name_the_parameter():
    f = matmul(4, 4, 4)
    a, b, c = rand(4, 4), rand(4, 4), np.zeros((4, 4), "float32")
    with pytest.raises(TypeError, match=r"takes 3 arrays \(A, B, C\), got 2"):
        interpret(f, a, b)
    with pytest.raises(TypeError, match=r"parameter 'B'.*float32.*float64"):
        interpret(f, a, b.astype("float64"), c)
    with pytest.raises(ValueError, match=r"parameter 'C'.*dimension 1 must be 4, got 5"):
        interpret(f, a, b, np.zeros((4, 5), "float32"))
    with pytest.raises(ValueError, match=r"parameter 'A'.*2 dimensions"):
        interpret(f, rand(16), b, c)
    with pytest.raises(TypeError, match=r"parameter 'A'.*numpy array.*list"):
        interpret(f, a.tolist(), b, c)


def test_unbound_variable_and_unknown_buffer_rejected_before_running():
    A, B = Buffer("A", (4,)), Buffer("B", (4,))
    i, stray = Var("i"), Var("stray")
    f = PrimFunc([A, B], wrap_root(For(i, 0, 4, "serial", BufferStore(B, A[stray], (i,)))))
    with pytest.raises(ValueError, match="variable 'stray'"):
        interpret(f, rand(4), np.zeros(4, "float32"))
    ghost = Buffer("ghost", (4,))
    g = PrimFunc([A, B], wrap_root(For(i, 0, 4, "serial", BufferStore(B, ghost[i], (i,)))))
    with pytest.raises(ValueError, match="buffer 'ghost'"):
        interpret(g, rand(4), np.zeros(4, "float32"))


def test_module_input_and_compile_cache():
    f = matmul(4, 4, 4)
    assert compile_reference(f) is compile_reference(f)
    a, b, c = rand(4, 4), rand(4, 4), np.zeros((4, 4), "float32")
    interpret(IRModule({"main": f}), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="PrimFunc"):
        interpret("main", a, b, c)


def test_bare_root_block_without_realize_and_empty_body():
    A = Buffer("A", (2,))
    f = PrimFunc([A], Block("root", body=SeqStmt(())))
    a = rand(2)
    before = a.copy()
    interpret(f, a)
    np.testing.assert_array_equal(a, before)


# ---------------------------------------------------------------------------------------------- static proofs
# The executor skips run-time checks it can prove unnecessary; these programs sit just outside each proof.
def test_loop_var_bound_as_is_but_loop_longer_than_domain():
    A, B = Buffer("A", (12,)), Buffer("B", (12,))
    i, v = Var("i"), Var("v")
    blk = Block("B", [IterVar(v, Range(0, 10), "S")], [], [], BufferStore(B, A[v], (v,)))
    f = PrimFunc([A, B], wrap_root(For(i, 0, 12, "serial", BlockRealize((i,), TRUE, blk))))
    with pytest.raises(IndexError, match=r"block 'B'.*'v' bound to 10"):
        interpret(f, rand(12), np.zeros(12, "float32"))


def test_symbolic_loop_over_other_symbolic_extent_is_checked():
    n, m = Var("n"), Var("m")
    A, B = Buffer("A", (n,)), Buffer("B", (m,))
    i, v = Var("i"), Var("v")
    blk = Block("B", [IterVar(v, Range(0, n), "S")], [], [], BufferStore(B, A[v], (v,)))
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "serial", BlockRealize((i,), TRUE, blk))))
    a = rand(5)
    b = np.zeros(5, "float32")
    interpret(f, a, b)  # n == m: fine
    np.testing.assert_array_equal(b, a)
    with pytest.raises(IndexError, match=r"buffer 'B'.*\[3\].*\(3\)"):
        interpret(f, rand(5), np.zeros(3, "float32"))


def test_symbolic_loop_longer_than_symbolic_domain_is_checked():
    n = Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i, v = Var("i"), Var("v")
    blk = Block("B", [IterVar(v, Range(0, n), "S")], [], [], BufferStore(B, A[v], (v,)))
    f = PrimFunc([A, B], wrap_root(For(i, 0, n + 1, "serial", BlockRealize((i,), TRUE, blk))))
    with pytest.raises(IndexError, match=r"block 'B'.*'v' bound to 4, outside its domain \[0, 4\)"):
        interpret(f, rand(4), np.zeros(4, "float32"))


def test_symbolic_reduction_init_and_alias():
    # a reduction over a symbolic extent: iteration variables alias the loops, init fires at k == 0
    n, k = Var("n"), Var("k")
    A, C = Buffer("A", (n, k)), Buffer("C", (n,))
    i, r, vi, vr = Var("i"), Var("r"), Var("vi"), Var("vr")
    blk = Block("sum", [IterVar(vi, Range(0, n), "S"), IterVar(vr, Range(0, k), "R")], [], [],
                BufferStore(C, C[vi] + A[vi, vr], (vi,)), BufferStore(C, const(0.0), (vi,)))
    f = PrimFunc([A, C], wrap_root(For(i, 0, n, "serial", For(r, 0, k, "serial", BlockRealize((i, r), TRUE, blk)))))
    a, c = rand(3, 7), np.full(3, 9.0, "float32")
    interpret(f, a, c)
    np.testing.assert_allclose(c, a.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_shape_expressions_of_symbolic_dims_are_checked():
    n = Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n * 2,))
    i = Var("i")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n * 2, "serial", BufferStore(B, A[floordiv(i, 2)], (i,)))))
    a, b = rand(3), np.zeros(6, "float32")
    interpret(f, a, b)
    np.testing.assert_array_equal(b, np.repeat(a, 2))
    with pytest.raises(ValueError, match=r"parameter 'B': dimension 0 must be .* = 6, got 5"):
        interpret(f, a, np.zeros(5, "float32"))
    only_expr = PrimFunc([B], wrap_root(SeqStmt(())))
    with pytest.raises(ValueError, match=r"parameter 'B'.*\['n'\].*cannot be read"):
        compile_reference(only_expr)
