"""print(f) -> from_source -> structurally equal f: for the course programs and for generated IR."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course_programs as cp
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.dtype import FLOAT_TYPES, INT_TYPES
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.module import IRModule
from tunefarm.ir.regions import infer_block_regions
from tunefarm.ir.structural import assert_structural_equal, structural_equal
from tunefarm.script import from_source


def round_trip(node):
    text = node.script()
    again = from_source(text)
    assert_structural_equal(node, again)
    assert again.script() == text  # printing is a fixed point
    return again


@pytest.mark.parametrize("name", sorted(cp.PRIM_FUNCS))
def test_course_functions_round_trip(name):
    round_trip(cp.PRIM_FUNCS[name])


@pytest.mark.parametrize("name", sorted(cp.MODULES))
def test_course_modules_round_trip(name):
    again = round_trip(cp.MODULES[name])
    assert isinstance(again, IRModule) and list(again) == list(cp.MODULES[name])


def test_print_matches_tvm_style_for_mm_relu():
    text = cp.mm_relu.script()
    expected_lines = [
        '@T.prim_func',
        'def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), '
        'C: T.Buffer((128, 128), "float32")):',
        '    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})',
        '    Y = T.alloc_buffer((128, 128), "float32")',
        '    for i, j, k in T.grid(128, 128, 128):',
        '        with T.block("Y"):',
        '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
        '            T.reads(A[vi, vk], B[vk, vj])',
        '            T.writes(Y[vi, vj])',
        '            with T.init():',
        '                Y[vi, vj] = T.float32(0)',
        '            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]',
        '    for i, j in T.grid(128, 128):',
        '        with T.block("C"):',
        '            vi, vj = T.axis.remap("SS", [i, j])',
    ]
    lines = text.splitlines()
    start = lines.index("@T.prim_func")
    assert lines[start:start + len(expected_lines)] == expected_lines


def test_names_are_unique_where_visible_and_reused_where_not():
    i = E.Var("i")
    i2 = E.Var("i")
    A = Buffer("A", (4, 4), "float32")
    inner = S.For(i2, 0, 4, "serial", S.BufferStore(A, E.FloatImm(0.0), (i, i2)))
    nested = S.For(i, 0, 4, "serial", inner, {"k": 1})
    sibling_i = E.Var("i")
    sibling = S.For(sibling_i, 0, 4, "serial", S.BufferStore(A, E.FloatImm(1.0), (sibling_i, sibling_i)))
    f = PrimFunc([A], wrap_root(S.seq(nested, sibling)))
    text = f.script()
    assert "for i_1 in range(4):" in text and "A[i, i_1]" in text
    assert "A[i, i] = T.float32(1)" in text
    round_trip(f)


def test_reserved_and_keyword_names_are_renamed():
    v = E.Var("lambda")
    r = E.Var("range")
    A = Buffer("T", (4,), "float32")
    body = S.For(v, 0, 2, "serial", S.For(r, 0, 2, "serial", S.BufferStore(A, E.FloatImm(0.0), (v * 2 + r,))))
    f = PrimFunc([A], wrap_root(body))
    text = f.script()
    assert "lambda" not in text and "for range " not in text
    round_trip(f)


def test_hand_built_ir_with_every_statement_kind_round_trips():
    n = E.Var("n", "int64")
    A = Buffer("A", (n, 8), "float32")
    B = Buffer("B", (n,), "float32")
    acc = Buffer("acc", (1,), "float32", "local")
    i = E.Var("i", "int64")
    k = E.Var("k")
    vi = E.Var("vi", "int64")
    tmp = Buffer("tmp", (8,), "float32", "local")
    store = S.BufferStore(acc, E.Binary("+", E.BufferLoad(acc, (E.IntImm(0),)),
                                        E.BufferLoad(A, (vi, k))), (E.IntImm(0),))
    body = S.seq(
        S.BufferStore(acc, E.FloatImm(0.0), (E.IntImm(0),)),
        S.For(k, E.IntImm(1), E.IntImm(7), "unrolled", S.IfThenElse(E.Binary("<", k, E.IntImm(4)), store, None)),
        S.IfThenElse(E.Not(E.Binary("==", vi, E.IntImm(0, "int64"))),
                     S.BufferStore(B, E.BufferLoad(acc, (E.IntImm(0),)), (vi,)),
                     S.BufferStore(B, E.FloatImm(float("-inf")), (vi,))),
        S.Evaluate(E.IntImm(0)),
    )
    blk = S.Block("row", [S.IterVar(vi, S.Range(E.IntImm(0, "int64"), n), "S")], (), (), body, None, [acc],
                  {"note": "x", "weights": [1, 2.5, True, None], "nested": {"a": (1, 2)}})
    reads, writes = infer_block_regions(blk)
    blk = blk.replace(reads=reads, writes=writes)
    realize = S.BlockRealize([i], E.Binary("<", i, n), blk)
    loop = S.For(i, E.IntImm(0, "int64"), n, "parallel", realize, {"pragma_auto_unroll_max_step": 16})
    lowered = S.Allocate(tmp, S.For(E.Var("j"), 0, 8, "vectorized", S.BufferStore(tmp, E.FloatImm(1.5),
                                                                                   (E.IntImm(0),))))
    f = PrimFunc([A, B], wrap_root(S.seq(loop, lowered)), {"global_symbol": "rows", "tir.noalias": True})
    round_trip(f)


def test_loops_with_offsets_dtypes_and_symbolic_bounds_round_trip():
    n = E.Var("n", "int64")
    m = E.Var("m")
    A = Buffer("A", (n, m), "float32")
    i = E.Var("i", "int64")
    j = E.Var("j")
    jj = E.Var("jj", "int64")  # loop var dtype differs from its extent's
    body = S.For(jj, E.IntImm(0, "int64"), E.IntImm(2), "serial",
                 S.BufferStore(A, E.FloatImm(0.0), (i, E.Binary("+", j, E.IntImm(0)))))
    nest = S.For(i, E.IntImm(2, "int64"), E.Binary("-", n, E.IntImm(2, "int64")), "serial",
                 S.For(j, m, E.Binary("+", m, E.IntImm(3)), "parallel", body))
    zero_plus = S.For(E.Var("z"), E.IntImm(0), E.Binary("+", E.IntImm(0), m), "serial",
                      S.BufferStore(A, E.FloatImm(1.0), (E.IntImm(0, "int64"), E.IntImm(0))))
    f = PrimFunc([A], wrap_root(S.seq(nest, zero_plus)))
    round_trip(f)


def test_blocks_bound_to_expressions_with_offset_domains_round_trip():
    A = Buffer("A", (64,), "float32")
    C = Buffer("C", (64,), "float32")
    i0, i1 = E.Var("i0"), E.Var("i1")
    v = E.Var("v")
    w = E.Var("w", "int64")
    binding = E.Binary("+", E.Binary("*", i0, E.IntImm(8)), i1)
    blk = S.Block("C", [S.IterVar(v, S.Range(E.IntImm(4), E.IntImm(60)), "S"),
                        S.IterVar(w, S.Range(E.IntImm(0), E.IntImm(8)), "R")],
                  (S.BufferRegion(A, (S.Range(E.IntImm(0), E.IntImm(64)),)),),
                  (S.BufferRegion(C, (S.Range(v, E.IntImm(1, "int32")),)),),
                  S.BufferStore(C, E.BufferLoad(A, (v,)), (v,)))
    realize = S.BlockRealize([binding, i1], E.Binary(">=", binding, E.IntImm(4)), blk)
    f = PrimFunc([A, C], wrap_root(S.For(i0, 0, 8, "serial", S.For(i1, 0, 8, "serial", realize))))
    round_trip(f)


def test_root_with_annotations_is_printed_explicitly():
    A = Buffer("A", (4,), "float32")
    i = E.Var("i")
    root = wrap_root(S.For(i, 0, 4, "serial", S.BufferStore(A, E.FloatImm(0.0), (i,))))
    root = root.replace(block=root.block.replace(annotations={"meta_schedule.vectorize": 64}))
    f = PrimFunc([A], root)
    assert 'with T.block("root"):' in f.script()
    round_trip(f)


def test_empty_bodies_round_trip():
    A = Buffer("A", (4,), "float32")
    f = PrimFunc([A], wrap_root(S.SeqStmt(())))
    assert "pass" in f.script()
    round_trip(f)


# -----------------------------------------------------------------------------------------------------------
# generated expressions
# -----------------------------------------------------------------------------------------------------------
I32 = E.Var("i")
N64 = E.Var("n", "int64")
BUF_F = Buffer("A", (16,), "float32")
BUF_I = Buffer("I", (16,), "int32")
BUF_L = Buffer("L", (16,), "int64")

int_dtypes = st.sampled_from(INT_TYPES)
float_dtypes = st.sampled_from(FLOAT_TYPES)


@st.composite
def int_literals(draw):
    dt = draw(int_dtypes)
    lo, hi = (0, 2 ** 16) if dt.startswith("u") else (-2 ** 15, 2 ** 15)
    return E.IntImm(draw(st.integers(lo, hi)), dt)


@st.composite
def float_literals(draw):
    v = draw(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32),
                       st.sampled_from([0.0, -0.0, 0.5, 1e-30, 3.0])))
    return E.FloatImm(v, draw(float_dtypes))


def leaves():
    return st.one_of(
        st.just(I32), st.just(N64), int_literals(), float_literals(),
        st.booleans().map(lambda b: E.IntImm(int(b), "bool")),
        st.sampled_from([BUF_F, BUF_I, BUF_L]).map(lambda b: E.BufferLoad(b, (I32,))),
    )


def extend(children):
    return st.one_of(
        st.tuples(st.sampled_from(E.BINARY_OPS), children, children).map(lambda t: E.Binary(*t)),
        children.map(E.Not),
        st.tuples(children, children, children).map(lambda t: E.Select(*t)),
        st.tuples(st.sampled_from(["float32", "int64", "int8", "float64", "bool"]), children).map(
            lambda t: E.Cast(*t)),
        st.tuples(st.sampled_from(sorted(E.INTRINSICS)), children).map(lambda t: E.Call(t[0], (t[1],))),
        st.tuples(children, children).map(lambda t: E.Call("pow", t)),
        st.tuples(int_index(children), st.sampled_from([BUF_F, BUF_I])).map(
            lambda t: E.BufferLoad(t[1], (t[0],))),
    )


def int_index(children):
    return children.filter(lambda e: e.dtype in INT_TYPES)


exprs = st.recursive(leaves(), extend, max_leaves=12)


def function_storing(e) -> PrimFunc:
    out = Buffer("O", (16,), e.dtype)
    body = S.For(I32, 0, 16, "serial", S.BufferStore(out, e, (I32,)))
    return PrimFunc([BUF_F, BUF_I, BUF_L, out], wrap_root(body))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs)
def test_generated_expressions_round_trip(e):
    f = function_storing(e)
    again = from_source(f.script())
    assert_structural_equal(f, again)


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), float_dtypes)
def test_float_literals_keep_their_exact_value(v, dtype):
    f = function_storing(E.FloatImm(v, dtype))
    lit = from_source(f.script()).root_block.body.body.value
    assert lit.dtype == dtype
    assert (math.isnan(lit.value) and math.isnan(v)) or (lit.value == v and math.copysign(1, lit.value) ==
                                                          math.copysign(1, v))


# -----------------------------------------------------------------------------------------------------------
# generated loop nests and blocks
# -----------------------------------------------------------------------------------------------------------
@st.composite
def loop_nests(draw):
    n = E.Var("n", "int64")
    A = Buffer("A", (n, 64), "float32")
    B = Buffer("B", (64,), "float32")
    depth = draw(st.integers(1, 3))
    loop_vars = []
    specs = []
    for d in range(depth):
        dtype = draw(st.sampled_from(["int32", "int64"]))
        v = E.Var(draw(st.sampled_from(["i", "j", "k", "ax0"])), dtype)
        lo = draw(st.sampled_from([0, 0, 1, 3]))
        ext = draw(st.integers(1, 8))
        lo_e = E.IntImm(lo, dtype)
        ext_e = E.IntImm(ext, dtype) if draw(st.booleans()) or dtype != "int64" else E.Binary("+", n, E.IntImm(ext, "int64"))
        kind = draw(st.sampled_from(S.FOR_KINDS))
        ann = draw(st.sampled_from([{}, {}, {"pragma_unroll_explicit": 1}]))
        specs.append((v, lo_e, ext_e, kind, ann))
        loop_vars.append(v)
    use_block = draw(st.booleans())
    idx = loop_vars[-1] if loop_vars[-1].dtype == "int32" else E.Cast("int32", loop_vars[-1])
    if use_block:
        ivs, values = [], []
        for v, lo_e, ext_e, kind, ann in specs:
            iv = E.Var("v" + v.name, v.dtype)
            remap_like = draw(st.booleans())
            dom = S.Range(lo_e, ext_e) if remap_like else S.Range(E.IntImm(0, v.dtype), E.IntImm(100, v.dtype))
            ivs.append(S.IterVar(iv, dom, draw(st.sampled_from(["S", "R"]))))
            values.append(v if remap_like else E.Binary("+", v, E.IntImm(1, v.dtype)))
        last = ivs[-1].var
        bidx = last if last.dtype == "int32" else E.Cast("int32", last)
        store = S.BufferStore(B, E.Binary("*", E.BufferLoad(A, (E.IntImm(0, "int64"), bidx)), E.FloatImm(2.0)),
                              (bidx,))
        init = S.BufferStore(B, E.FloatImm(0.0), (bidx,)) if draw(st.booleans()) else None
        blk = S.Block(draw(st.sampled_from(["B", "compute", "root_like"])), ivs, (), (), store, init)
        reads, writes = infer_block_regions(blk)
        pred = E.Binary("<", specs[0][0], E.IntImm(100, specs[0][0].dtype)) if draw(st.booleans()) else S.TRUE
        body = S.BlockRealize(values, pred, blk.replace(reads=reads, writes=writes))
    else:
        body = S.BufferStore(B, E.FloatImm(1.0), (idx,))
    for v, lo_e, ext_e, kind, ann in reversed(specs):
        body = S.For(v, lo_e, ext_e, kind, body, ann)
    return PrimFunc([A, B], wrap_root(body))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_nests())
def test_generated_loop_nests_round_trip(f):
    again = from_source(f.script())
    assert_structural_equal(f, again)
    assert structural_equal(again, f)
