"""Expressions and dtypes: construction, constant folding, type promotion and the identity semantics of nodes."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.ir import dtype as D
from tunefarm.ir import expr as E


def test_dtype_names_bits_and_checks():
    assert D.bits("bool") == 1 and D.bits("int8") == 8 and D.bits("float16") == 16 and D.bits("uint64") == 64
    assert D.nbytes("bool") == 1 and D.nbytes("int16") == 2 and D.nbytes("float64") == 8
    assert D.is_float("float16") and not D.is_float("int32") and not D.is_float("bool")
    assert D.is_int("int8") and D.is_int("uint32") and not D.is_int("float32") and not D.is_int("bool")
    assert D.check_dtype("float32") == "float32"
    with pytest.raises(TypeError, match="unsupported dtype 'float8'; supported: float16"):
        D.check_dtype("float8")
    with pytest.raises(TypeError, match="unsupported dtype 'complex64'"):
        D.bits("complex64")


@pytest.mark.parametrize("a, b, want", [
    ("int32", "int32", "int32"),
    ("int32", "int64", "int64"), ("int64", "int8", "int64"),
    ("int64", "float16", "float16"), ("float16", "float32", "float32"), ("float64", "float32", "float64"),
    ("bool", "int8", "int8"), ("uint8", "bool", "uint8"), ("bool", "float32", "float32"),
])
def test_result_dtype_floats_win_then_the_wider_integer(a, b, want):
    assert D.result_dtype(a, b) == want
    assert D.result_dtype(b, a) == want


def test_constants_take_the_default_or_the_given_type():
    assert (E.const(3).dtype, E.const(3).value) == ("int32", 3)
    assert E.const(2.5).dtype == "float32" and E.const(2.5, "float64").dtype == "float64"
    assert E.const(True).dtype == "bool" and E.const(True).value == 1
    three = E.const(3, "float16")  # an int literal of a float type is a FloatImm
    assert isinstance(three, E.FloatImm) and three.value == 3.0 and three.dtype == "float16"
    with pytest.raises(TypeError, match="float literal 2.5 given integer dtype int64"):
        E.const(2.5, "int64")
    with pytest.raises(TypeError, match="cannot make a constant of str"):
        E.const("3")


def test_as_expr_converts_numbers_and_numpy_scalars_with_a_hint():
    v = E.Var("v", "int64")
    assert E.as_expr(v) is v
    assert E.as_expr(np.int64(7)).value == 7 and E.as_expr(np.int64(7)).dtype == "int32"
    assert E.as_expr(np.float32(0.5), "float64").dtype == "float64"
    assert E.as_expr(4, "int64").dtype == "int64" and E.as_expr(True, "int32").dtype == "bool"
    assert E.as_expr(1.5, "int32").dtype == "float32"  # a float is never truncated to fit the hint
    with pytest.raises(TypeError, match="expected an expression or a number, got list"):
        E.as_expr([1])


def test_integer_arithmetic_folds_constants_and_identities():
    i = E.Var("i")
    assert E.add(i, 0) is i and E.add(0, i) is i and E.sub(i, 0) is i
    assert E.mul(i, 1) is i and E.mul(1, i) is i and E.floordiv(i, 1) is i
    zero = E.mul(i, 0)
    assert isinstance(zero, E.IntImm) and zero.value == 0 and zero.dtype == "int32"
    assert E.sub(i, i).value == 0 and E.floormod(i, 1).value == 0
    assert E.add(2, 3).value == 5 and E.sub(2, 3).value == -1 and E.mul(4, 5).value == 20
    assert E.min_(2, 7).value == 2 and E.max_(2, 7).value == 7


def test_floor_division_and_modulo_follow_python_not_c():
    assert E.floordiv(-7, 2).value == -4 and E.floormod(-7, 2).value == 1
    assert E.floordiv(7, -2).value == -4 and E.floormod(7, -2).value == -1
    assert E.floordiv(E.const(-7.0), E.const(2.0)).value == -4.0
    # true division folds floats only: on integers it would truncate like C, so it is kept symbolic
    assert E.div(7.0, 2.0).value == 3.5
    kept = E.div(E.const(7), E.const(2))
    assert isinstance(kept, E.Binary) and kept.op == "/"


def test_float_identities_are_not_folded():
    x = E.Var("x", "float32")
    # x + 0.0 is not x for x = -0.0, and x * 0.0 is not 0.0 for x = inf or nan
    for e, op in ((E.add(x, 0.0), "+"), (E.mul(x, 1.0), "*"), (E.mul(x, 0.0), "*"), (E.sub(x, x), "-")):
        assert isinstance(e, E.Binary) and e.op == op and e.dtype == "float32"


def test_literals_take_the_type_of_the_other_operand():
    k = E.Var("k", "int64")
    e = E.add(k, 2)
    assert e.dtype == "int64" and e.b.dtype == "int64"
    h = E.Var("h", "float16")
    assert E.mul(h, 3).dtype == "float16" and E.mul(h, 3).b.dtype == "float16"
    assert E.add(E.const(2), k).a.dtype == "int64"  # a typed int32 literal is retyped too
    i = E.Var("i")
    mixed = E.add(2.5, i)  # a float literal does not become an integer: the sum is float
    assert mixed.dtype == "float32" and isinstance(mixed.a, E.FloatImm)
    wide = E.add(E.Var("a", "int8"), E.Var("b", "int32"))
    assert wide.dtype == "int32"


def test_comparisons_and_logic_are_bool_and_fold():
    i = E.Var("i")
    for op in ("==", "!=", "<", "<=", ">", ">="):
        assert E.compare(op, i, 3).dtype == "bool"
    c = i < 4
    assert isinstance(c, E.Binary) and c.op == "<" and c.dtype == "bool"
    assert (i >= 2).op == ">=" and i.equal(5).op == "=="
    t, f = E.const(True), E.const(False)
    assert E.logical_and(t, c) is c and E.logical_and(c, t) is c
    assert E.logical_and(f, c) is f and E.logical_and(c, f) is f
    assert E.logical_or(t, c) is t and E.logical_or(f, c) is c and E.logical_or(c, f) is c
    assert E.logical_not(t).value == 0 and E.logical_not(f).value == 1
    n = E.logical_not(c)
    assert isinstance(n, E.Not) and n.a is c and n.dtype == "bool"
    both = E.logical_and(c, i > 0)
    assert both.op == "and" and both.dtype == "bool"


def test_select_cast_and_call():
    i = E.Var("i")
    x = E.Var("x", "float32")
    assert E.select(True, 1, 2).value == 1 and E.select(E.const(False), 1, 2).value == 2
    s = E.select(i < 3, x, 0.0)
    assert isinstance(s, E.Select) and s.dtype == "float32" and s.false_value.dtype == "float32"
    assert E.cast("int32", i) is i
    assert E.cast("float32", E.const(3)).value == 3.0 and isinstance(E.cast("float32", 3), E.FloatImm)
    assert E.cast("int64", E.const(3)).dtype == "int64"
    assert E.cast("float64", E.const(1.5)).dtype == "float64"
    c = E.cast("int64", i)
    assert isinstance(c, E.Cast) and c.value is i and i.astype("int64").dtype == "int64"
    e = E.call("exp", x)
    assert isinstance(e, E.Call) and e.op == "exp" and e.args == (x,) and e.dtype == "float32"
    assert E.Call("pow", (x, E.const(2.0)), "float64").dtype == "float64"
    with pytest.raises(ValueError, match="unknown intrinsic 'cube'"):
        E.call("cube", x)
    with pytest.raises(ValueError, match="unknown binary operator '\\*\\*'"):
        E.Binary("**", i, i)


def test_operator_sugar_builds_the_same_nodes_as_the_constructors():
    i = E.Var("i")
    assert (i + 1).op == "+" and (1 + i).a.value == 1 and (i - 1).op == "-" and (1 - i).b is i
    assert (i * 2).op == "*" and (2 * i).a.value == 2 and (i // 2).op == "//" and (i % 2).op == "%"
    assert (7 // i).a.value == 7 and (7 % i).op == "%" and (i / 2).op == "/" and (2 / i).b is i
    neg = -i
    assert neg.op == "-" and neg.a.value == 0 and neg.b is i
    assert i + 0 is i and i * 1 is i


def test_nodes_compare_by_identity_and_refuse_to_be_bools():
    a, b = E.Var("i"), E.Var("i")
    assert a is not b and not (a is b) and a.name == b.name
    assert {a: 1, b: 2}[a] == 1  # nodes key dicts by identity
    assert b.uid > a.uid  # creation order, for deterministic sorting
    c = a.copy_with_name("j")
    assert c is not a and c.name == "j" and c.dtype == a.dtype
    assert a.copy_with_name().name == "i"
    assert (a == b) is False and (a == a) is True  # Python's == stays identity; ``equal`` builds ==
    with pytest.raises(TypeError, match="cannot use a symbolic expression as a Python bool"):
        bool(a < 3)


def test_printed_form_of_expressions():
    i, j = E.Var("i"), E.Var("j")
    x = E.Var("x", "float32")
    assert repr(i * 4 + j) == "i * 4 + j"
    assert repr((i + j) * 4) == "(i + j) * 4"
    assert repr(E.floordiv(i, 4)) == "i // 4" and repr(E.floormod(i, 4)) == "i % 4"
    assert repr(E.min_(i, j)) == "T.min(i, j)"
    assert repr(E.const(2.5)) == "T.float32(2.5)" and repr(E.const(7, "int64")) == "T.int64(7)"
    assert repr(E.call("exp", x)) == "T.exp(x)"
    assert repr(E.select(i < j, x, x)) == "T.Select(i < j, x, x)"
