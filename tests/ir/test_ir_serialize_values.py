"""Serialization of values: every expression form and literal survives exactly, shared variables stay shared,
the canonical form forgets names and sequence nesting, and bad values are refused by name."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.serialize import Encoder, dumps, from_json, loads, to_json
from tunefarm.ir.structural import canonical_text, structural_equal

I, J = E.Var("i"), E.Var("j", "int64")
X = E.Var("x", "float32")
A = Buffer("A", (8, E.Var("n")), "float32")


def exprs():
    ints = st.one_of(st.sampled_from([I]), st.integers(-2**31, 2**31 - 1).map(E.const))
    floats = st.one_of(st.sampled_from([X]), st.floats(allow_nan=True, width=32).map(lambda v: E.const(float(v))))

    def grow_int(sub):
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "//", "%", "min", "max"]), sub, sub).map(
                lambda t: E.Binary(*t)),
            sub.map(lambda e: E.cast("int64", e)))

    int_e = st.recursive(ints, grow_int, max_leaves=6)

    def grow_float(sub):
        cond = st.tuples(st.sampled_from(["<", "==", ">="]), int_e, int_e).map(lambda t: E.Binary(*t))
        return st.one_of(
            st.tuples(st.sampled_from(["+", "*", "/", "max"]), sub, sub).map(lambda t: E.Binary(*t)),
            st.tuples(cond, sub, sub).map(lambda t: E.Select(*t)),
            st.tuples(st.sampled_from(["exp", "sqrt", "tanh"]), sub).map(lambda t: E.Call(t[0], (t[1],))),
            st.tuples(int_e, int_e).map(lambda t: E.BufferLoad(A, t)),
            cond.map(lambda c: E.cast("float32", E.Not(c))))

    return st.recursive(floats, grow_float, max_leaves=8)


@settings(max_examples=150, deadline=None, database=None)
@given(exprs())
def test_any_expression_round_trips_to_the_same_text(e):
    text = dumps(e)
    back = loads(text)
    assert dumps(back) == text and structural_equal(back, e)
    json.loads(text)  # strict JSON: no NaN or Infinity tokens
    assert "NaN" not in text and "Infinity" not in text


def test_literals_keep_type_sign_and_magnitude():
    for lit in (E.FloatImm(-0.0, "float64"), E.FloatImm(float("-inf")), E.FloatImm(float("nan"), "float16"),
                E.IntImm(2**40, "int64"), E.IntImm(1, "bool"), E.IntImm(255, "uint8"), E.FloatImm(1e-45)):
        back = loads(dumps(lit))
        assert type(back) is type(lit) and back.dtype == lit.dtype
        if isinstance(lit, E.FloatImm):
            assert math.copysign(1.0, back.value) == math.copysign(1.0, lit.value)
            assert (math.isnan(back.value) and math.isnan(lit.value)) or back.value == lit.value
        else:
            assert back.value == lit.value
    assert to_json(E.FloatImm(float("inf")))["root"]["value"] == ["float", "inf", "float32"]


def test_one_variable_is_one_variable_after_loading():
    e = I * 2 + I
    doc = to_json(e)
    assert doc["vars"] == [{"name": "i", "dtype": "int32"}]
    back = from_json(doc)
    assert back.a.a is back.b and back.b is not I and back.b.name == "i"
    loop = S.For(I, 0, 4, "serial", S.BufferStore(A, X, (I, I)))
    again = from_json(to_json(loop))
    assert again.body.indices[0] is again.loop_var is again.body.indices[1]
    assert again.body.buffer.shape[1].name == "n"


def test_canonical_form_forgets_names_and_nesting_but_not_order():
    s = [S.BufferStore(A, E.const(float(k)), (I, I)) for k in range(3)]
    flat = S.SeqStmt(tuple(s))
    nested = S.SeqStmt((S.SeqStmt((s[0], s[1])), s[2]))
    assert canonical_text(flat) == canonical_text(nested) and dumps(flat) != dumps(nested)
    assert canonical_text(S.SeqStmt((s[1], s[0], s[2]))) != canonical_text(flat)
    assert canonical_text(S.SeqStmt((s[0],))) == canonical_text(s[0])
    renamed = S.For(E.Var("other"), 0, 4, "serial", S.Evaluate(E.const(0)))
    assert canonical_text(S.For(E.Var("i"), 0, 4, "serial", S.Evaluate(E.const(0)))) == canonical_text(renamed)
    doc = Encoder(canonical=True).document(renamed)
    assert "other" not in json.dumps(doc)


def test_encoder_marks_where_each_piece_came_from():
    loop = S.For(I, 0, 4, "serial", S.BufferStore(A, X + 1.0, (I, I)))
    enc = Encoder(track=True)
    doc = enc.document(loop)
    body = doc["root"]["body"]
    assert enc.origin[id(doc["root"])] is loop and enc.origin[id(body)] is loop.body
    assert enc.origin[id(body["value"])] is loop.body.value


def test_values_that_have_no_json_form_are_refused_by_name():
    class Fancy(E.PrimExpr):
        __slots__ = ()

    with pytest.raises(TypeError, match="cannot serialize expression of type Fancy"):
        to_json(S.Evaluate(Fancy()))

    class Barrier(S.Stmt):
        __slots__ = ()

    with pytest.raises(TypeError, match="cannot serialize statement of type Barrier"):
        to_json(S.SeqStmt((Barrier(),)))
    with pytest.raises(TypeError, match="attribute keys must be strings, got 3"):
        to_json(S.For(I, 0, 4, "serial", S.SeqStmt(()), {3: 1}))
    with pytest.raises(TypeError, match="cannot serialize attribute value of type set"):
        to_json(S.For(I, 0, 4, "serial", S.SeqStmt(()), {"k": {1}}))


def test_loose_nodes_round_trip():
    for node in (A, S.Range(1, I), S.IterVar(I, S.Range.from_extent(4), "R"), S.BufferRegion.point(A, [I, J])):
        back = from_json(to_json(node))
        assert type(back) is type(node) and canonical_text(back) == canonical_text(node)
    with pytest.raises(ValueError, match=r"\$.root.iter_type: unknown iteration type 'Q'"):
        doc = to_json(S.IterVar(I, S.Range.from_extent(4), "R"))
        doc["root"]["iter_type"] = "Q"
        from_json(doc)
