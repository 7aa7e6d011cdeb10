"""Index arithmetic: ``simplify`` and the bounds it reasons with must never change an expression's value.

The properties run random integer expressions over three variables with known ranges and compare values at
every point of those ranges, evaluated here independently of the project's interpreters.
"""
from __future__ import annotations

import itertools
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunefarm.ir import expr as E
from tunefarm.ir.arith import (add_int, affine_coefficients, as_const_int, const_bound, is_const_int, mul_int,
                               simplified_bound, simplified_int, simplify, sub_int)
from tunefarm.ir.functor import uses_var
from tunefarm.ir.structural import structural_equal

I, J, K = E.Var("i"), E.Var("j"), E.Var("k")
BOUNDS = {I: (0, 5), J: (-3, 3), K: (1, 4)}
POINTS = [dict(zip((I, J, K), p)) for p in itertools.product(*(range(lo, hi + 1) for lo, hi in BOUNDS.values()))]

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
        "min": min, "max": max, "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "and": lambda a, b: a and b, "or": lambda a, b: a or b}


def value(e, env: dict) -> int:
    """The value of an integer/bool expression at ``env`` (Python's floor semantics, as the IR defines)."""
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    if isinstance(e, E.Binary):
        return int(_OPS[e.op](value(e.a, env), value(e.b, env)))
    if isinstance(e, E.Select):
        return value(e.true_value, env) if value(e.cond, env) else value(e.false_value, env)
    if isinstance(e, E.Not):
        return int(not value(e.a, env))
    if isinstance(e, E.Cast):
        return value(e.value, env)
    raise TypeError(type(e).__name__)


def int_exprs():
    leaves = st.one_of(st.sampled_from([I, J, K]), st.integers(-6, 8).map(E.const))

    def grow(sub):
        arith = st.tuples(st.sampled_from(["+", "-", "*", "min", "max"]), sub, sub).map(
            lambda t: E.Binary(t[0], E.as_expr(t[1]), E.as_expr(t[2])))
        divmod_ = st.tuples(st.sampled_from(["//", "%"]), sub, st.one_of(st.integers(1, 6).map(E.const), st.just(K)))
        return st.one_of(arith, divmod_.map(lambda t: E.Binary(t[0], t[1], t[2])))

    return st.recursive(leaves, grow, max_leaves=8)


@settings(max_examples=300, deadline=None, database=None)
@given(int_exprs())
def test_simplify_keeps_the_value_everywhere_in_the_bounds(e):
    with_bounds, without = simplify(e, BOUNDS), simplify(e)
    for env in POINTS:
        want = value(e, env)
        assert value(with_bounds, env) == want, (e, with_bounds, env)
        assert value(without, env) == want, (e, without, env)


@settings(max_examples=300, deadline=None, database=None)
@given(int_exprs())
def test_bounds_contain_every_value(e):
    values = {value(e, env) for env in POINTS}
    for b in (const_bound(e, BOUNDS), simplified_bound(e, BOUNDS)):
        if b is not None:
            assert b[0] <= min(values) and max(values) <= b[1], (e, b)
    c = simplified_int(e, BOUNDS)
    if c is not None:
        assert values == {c}, (e, c)


@settings(max_examples=200, deadline=None, database=None)
@given(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), int_exprs(), int_exprs())
def test_simplified_comparisons_keep_their_truth(op, a, b):
    e = E.compare(op, a, b)
    s = simplify(e, BOUNDS)
    assert s.dtype == "bool"
    for env in POINTS:
        assert bool(value(s, env)) == bool(value(e, env)), (e, s, env)


@settings(max_examples=200, deadline=None, database=None)
@given(int_exprs())
def test_affine_coefficients_rebuild_the_expression(e):
    got = affine_coefficients(e, [I, J], BOUNDS)
    if got is None:
        return
    coefs, rest = got
    assert set(coefs) <= {I, J} and not uses_var(rest, {I, J})
    for env in POINTS:
        assert sum(c * env[v] for v, c in coefs.items()) + value(rest, env) == value(e, env), (e, coefs, rest)


def _index_operands():
    base = [I, J, E.const(0), E.const(1), E.const(3), E.const(-2), I * 4 + J, E.floordiv(I, 2)]
    return st.sampled_from(base)


@settings(max_examples=200, deadline=None, database=None)
@given(_index_operands(), _index_operands())
def test_integer_fast_paths_build_what_the_general_constructors_build(a, b):
    for fast, general in ((add_int, E.add), (sub_int, E.sub), (mul_int, E.mul)):
        x, y = fast(a, b), general(a, b)
        assert type(x) is type(y) and x.dtype == y.dtype and structural_equal(x, y), (fast.__name__, a, b)
        for operand in (a, b):  # the same operand comes back unchanged when the general one returns it
            assert (x is operand) == (y is operand)


def test_split_and_fuse_index_arithmetic_folds_back():
    i0, i1 = E.Var("i0"), E.Var("i1")
    b = {i0: (0, 31), i1: (0, 3)}
    fused = i0 * 4 + i1
    assert simplify(E.floordiv(fused, 4), b) is i0
    assert simplify(E.floormod(fused, 4), b) is i1
    assert repr(simplify(E.floordiv(fused, 2), b)) == "i0 * 2 + i1 // 2"  # i1 // 2 is not constant
    assert repr(simplify(E.floordiv(fused + 8, 4), b)) == "i0 + 2"
    assert simplify(E.floordiv(i1, 4), b).value == 0 and simplify(E.floormod(i1, 4), b) is i1
    # without bounds nothing is known about i1, so the division stays
    assert repr(simplify(E.floordiv(fused, 4))) == "i0 + i1 // 4"


def test_simplify_gathers_like_terms_and_constants():
    i, j = E.Var("i"), E.Var("j")
    assert repr(simplify(i + i)) == "i * 2"
    assert simplify(i - i + 3 - 3).value == 0
    assert repr(simplify((i + 3) * 2 - i)) == "i + 6"
    assert repr(simplify(j * 3 - (j + j) * 2 + i)) == "i - j"
    assert simplify(E.const(5)).value == 5 and simplify(i) is i


def test_bounds_decide_min_max_and_comparisons():
    i, j = E.Var("i"), E.Var("j")
    b = {i: (0, 3), j: (4, 9)}
    assert simplify(E.min_(i, j), b) is i and simplify(E.max_(i, j), b) is j
    assert repr(simplify(E.min_(i, j))) == "T.min(i, j)"
    assert simplify(E.compare("<", i, 4), b).value == 1 and simplify(E.compare(">=", i, 4), b).value == 0
    assert simplify(E.compare("<", i, j), b).value == 1 and simplify(E.compare("==", i, j), b).value == 0
    undecided = simplify(E.compare("<", i, 3), b)
    assert isinstance(undecided, E.Binary) and undecided.op == "<"


def test_float_expressions_are_simplified_only_inside():
    x = E.Var("x", "float32")
    i = E.Var("i")
    e = E.Binary("+", x, E.cast("float32", E.Binary("+", i, i)))
    s = simplify(e)
    assert isinstance(s, E.Binary) and s.a is x and repr(s.b) == 'T.Cast("float32", i * 2)'
    assert simplify(E.add(x, 0.0)).op == "+"  # x + 0.0 is not folded for floats


def test_const_bound_of_each_operator():
    i, j = E.Var("i"), E.Var("j")
    b = {i: (-2, 5), j: (1, 3)}
    assert const_bound(i + j, b) == (-1, 8) and const_bound(i - j, b) == (-5, 4)
    assert const_bound(i * j, b) == (-6, 15)
    assert const_bound(E.floordiv(i, 2), b) == (-1, 2) and const_bound(E.floormod(i, 4), b) == (0, 3)
    assert const_bound(E.floormod(j, 4), b) == (1, 3)  # the range does not wrap: exact
    assert const_bound(E.min_(i, j), b) == (-2, 3) and const_bound(E.max_(i, j), b) == (1, 5)
    assert const_bound(E.cast("int64", i), b) == (-2, 5)
    assert const_bound(E.Var("free"), b) is None and const_bound(E.floordiv(i, j), b) is None
    assert const_bound(E.floormod(E.Var("free"), 8), b) == (0, 7)  # a modulus bounds even the unknown


def test_constant_helpers():
    assert is_const_int(E.const(3)) and is_const_int(E.const(3), 3) and not is_const_int(E.const(3), 4)
    assert not is_const_int(E.const(3.0)) and not is_const_int(E.Var("i"))
    assert as_const_int(E.const(-4)) == -4 and as_const_int(E.Var("i")) is None


@pytest.mark.parametrize("e, expected", [
    (lambda i, j: i * j, None),          # a product of two of the variables
    (lambda i, j: E.floordiv(i, 2), None),
    (lambda i, j: i * 3 + j * 2 + 5, ({"i": 3, "j": 2}, "5")),
    (lambda i, j: (i - j) * 4 - 1, ({"i": 4, "j": -4}, "-1")),
])
def test_affine_coefficients_examples(e, expected):
    i, j = E.Var("i"), E.Var("j")
    got = affine_coefficients(e(i, j), [i, j])
    if expected is None:
        assert got is None
    else:
        coefs, rest = got
        assert {v.name: c for v, c in coefs.items()} == expected[0] and repr(rest) == expected[1]
