"""Structural equality (alpha-equivalence), structural hash and workload keys."""
from __future__ import annotations

import keyword

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course_programs as cp
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.module import IRModule
from tunefarm.ir.structural import (assert_structural_equal, canonical_text, structural_equal, structural_hash,
                                    workload_key)
from tunefarm.script import from_source

MATMUL = """
@T.prim_func
def {name}({a}: T.Buffer(({n}, {n}), "{dtype}"), {b}: T.Buffer(({n}, {n}), "{dtype}"),
         {c}: T.Buffer(({n}, {n}), "{dtype}")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for {i}, {j}, {k} in T.grid({n}, {n}, {ext}):
        with T.block("C"):
            {vi}, {vj}, {vk} = T.axis.remap("SSR", [{i}, {j}, {k}])
            with T.init():
                {c}[{vi}, {vj}] = T.{dtype}(0)
            {c}[{vi}, {vj}] = {c}[{vi}, {vj}] + {a}[{vi}, {vk}] * {b}[{vk}, {vj}]
"""
BASE = dict(name="main", a="A", b="B", c="C", n=128, ext=128, dtype="float32", i="i", j="j", k="k", vi="vi",
            vj="vj", vk="vk")


def matmul(**changes):
    return from_source(MATMUL.format(**{**BASE, **changes}))


def test_course_matmul_equals_its_template():
    assert_structural_equal(matmul(), cp.matmul)


def test_renaming_everything_keeps_equality_hash_and_workload_key():
    f = matmul()
    g = matmul(a="X", b="Y", c="Z", i="p", j="q", k="r", vi="a0", vj="a1", vk="a2")
    assert structural_equal(f, g) and structural_equal(g, f)
    assert structural_hash(f) == structural_hash(g)
    assert workload_key(f) == workload_key(g)
    # renaming the function changes its global_symbol attribute: a different function, the same workload
    h = matmul(name="renamed", a="X", b="Y", c="Z", i="p", j="q", k="r", vi="a0", vj="a1", vk="a2")
    assert not structural_equal(f, h) and structural_hash(f) != structural_hash(h)
    assert workload_key(f) == workload_key(h)
    # the PrimFunc's own name is not part of its structure
    assert structural_equal(f, PrimFunc(f.params, f.body, f.attrs, name="other"))


@pytest.mark.parametrize("change", [dict(n=64, ext=64), dict(ext=64), dict(dtype="float64"),
                                    dict(dtype="float16")])
def test_shape_dtype_or_extent_changes_the_key(change):
    f, g = matmul(), matmul(**change)
    assert not structural_equal(f, g)
    assert workload_key(f) != workload_key(g)
    assert structural_hash(f) != structural_hash(g)


def test_loop_kind_block_name_annotation_and_scope_are_compared():
    base = cp.vector_add
    text = base.script()
    variants = [text.replace("T.parallel(128)", "T.vectorized(128)"),
                text.replace('T.block("C")', 'T.block("D")'),
                text.replace("T.parallel(128)", 'T.parallel(128, annotations={"pragma_unroll_explicit": 1})')]
    keys = {workload_key(base)}
    for v in variants:
        g = from_source(v)
        assert not structural_equal(base, g)
        keys.add(workload_key(g))
    assert len(keys) == 4
    A = Buffer("A", (4,))
    L = Buffer("A", (4,), "float32", "local")
    assert not structural_equal(A, L) and structural_equal(A, Buffer("B", (4,)))


def test_variables_are_matched_by_definition_position_not_just_shape():
    # C[vi, vj] vs C[vj, vi]: same names and same "shape", different programs
    f = matmul()
    g = from_source(MATMUL.format(**BASE).replace("{c}[{vi}, {vj}] = {c}", "x").replace(
        "C[vi, vj] = C[vi, vj] +", "C[vj, vi] = C[vj, vi] +"))
    assert not structural_equal(f, g)
    with pytest.raises(AssertionError, match="structurally different at"):
        assert_structural_equal(f, g)


def test_free_variables_mapped_or_not():
    x, y = E.Var("x"), E.Var("y")
    assert structural_equal(x + 1, y + 1)
    assert not structural_equal(x + 1, y + 1, map_free_vars=False)
    assert structural_equal(x + 1, x + 1, map_free_vars=False)
    assert not structural_equal(x + x, x + y)  # consistent mapping
    assert not structural_equal(E.Var("x", "int64") + 1, x + 1)  # dtype of the variable matters
    with pytest.raises(AssertionError, match="free variables"):
        assert_structural_equal(x + 1, y + 1, map_free_vars=False)


def test_nested_sequences_are_normalized_but_order_matters():
    A = Buffer("A", (2,))
    s1 = S.BufferStore(A, E.FloatImm(1.0), (E.IntImm(0),))
    s2 = S.BufferStore(A, E.FloatImm(2.0), (E.IntImm(1),))
    assert structural_equal(S.SeqStmt((S.SeqStmt((s1,)), s2)), S.SeqStmt((s1, s2)))
    assert not structural_equal(S.SeqStmt((s1, s2)), S.SeqStmt((s2, s1)))


def test_reused_loop_variable_equals_distinct_variables():
    A = Buffer("A", (4, 4))
    i = E.Var("i")
    shared = S.seq(S.For(i, 0, 4, "serial", S.BufferStore(A, E.FloatImm(0.0), (i, i))),
                   S.For(i, 0, 4, "serial", S.BufferStore(A, E.FloatImm(1.0), (i, i))))
    j, k = E.Var("j"), E.Var("k")
    distinct = S.seq(S.For(j, 0, 4, "serial", S.BufferStore(A, E.FloatImm(0.0), (j, j))),
                     S.For(k, 0, 4, "serial", S.BufferStore(A, E.FloatImm(1.0), (k, k))))
    assert structural_equal(PrimFunc([A], wrap_root(shared)), PrimFunc([A], wrap_root(distinct)))


def test_modules_compare_by_function_name():
    m1 = IRModule({"a": cp.relu0, "b": cp.linear0})
    m2 = IRModule({"b": cp.linear0, "a": cp.relu0})
    assert structural_equal(m1, m2)
    assert not structural_equal(m1, IRModule({"a": cp.linear0, "b": cp.relu0}))


def test_float_literals_compare_exactly():
    assert not structural_equal(E.FloatImm(0.0), E.FloatImm(-0.0))
    assert structural_equal(E.FloatImm(float("nan")), E.FloatImm(float("nan")))
    assert not structural_equal(E.FloatImm(1.0), E.FloatImm(1.0 + 2 ** -40))
    assert not structural_equal(E.IntImm(1), E.IntImm(1, "int64"))


def test_assert_structural_equal_message_points_at_the_difference():
    f = matmul()
    g = matmul(ext=64)
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(f, g)
    text = str(info.value)
    assert "extent" in text and "128" in text and "64" in text
    assert "for i / for j / for k / extent" in text
    assert "for k in range(128):" in text and "for k in range(64):" in text


def test_workload_key_is_a_hex_sha256_and_known_value_is_stable():
    key = workload_key(cp.matmul)
    assert len(key) == 64 and int(key, 16) >= 0
    # canonical text only holds plain data; no names, no ids
    text = canonical_text(cp.matmul, drop_global_symbol=True)
    for name in ('"A"', '"vi"', '"main"', "global_symbol"):
        assert name not in text


NAMES = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6).filter(
    lambda s: not keyword.iskeyword(s) and s != "range")


@settings(max_examples=40, deadline=None)
@given(st.lists(NAMES, min_size=9, max_size=9, unique=True))
def test_any_renaming_keeps_the_workload_key(names):
    a, b, c, i, j, k, vi, vj, vk = names
    g = matmul(a=a, b=b, c=c, i=i, j=j, k=k, vi=vi, vj=vj, vk=vk, name="f_" + a)
    assert workload_key(g) == workload_key(cp.matmul)
    assert structural_hash(PrimFunc(g.params, g.body, g.attrs, name="x")) == structural_hash(g)
