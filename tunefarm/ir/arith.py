"""Integer arithmetic for index expressions: bounds, and simplification to a canonical affine form.

Schedules compose splits and fuses (``(i0 * 4 + i1) // 32``); lowering, legality checks and the feature
extractor need those back in simple form. ``simplify`` rewrites integer expressions into a sum of terms
with constant coefficients, folding ``//`` and ``%`` when variable bounds prove them trivial.
"""
from __future__ import annotations

from . import expr as E
from .dtype import is_float

Bounds = dict  # Var -> (lo, hi) inclusive ints


class _Affine:
    """``sum(coef * term) + const`` where terms are Vars or opaque non-affine expressions."""

    __slots__ = ("terms", "const", "dtype")

    def __init__(self, terms: dict, const: int, dtype: str):
        self.terms = terms  # key -> (term_expr, coef); key is id-stable for Vars, structural for others
        self.const = const
        self.dtype = dtype

    def scaled(self, k: int) -> "_Affine":
        return _Affine({key: (t, c * k) for key, (t, c) in self.terms.items()}, self.const * k, self.dtype)

    def plus(self, other: "_Affine", sign: int = 1) -> "_Affine":
        terms = dict(self.terms)
        for key, (t, c) in other.terms.items():
            if key in terms:
                nc = terms[key][1] + sign * c
                if nc == 0:
                    del terms[key]
                else:
                    terms[key] = (t, nc)
            else:
                terms[key] = (t, sign * c)
        return _Affine(terms, self.const + sign * other.const, self.dtype)

    def to_expr(self) -> E.PrimExpr:
        pos = []
        neg = []
        for t, c in self.terms.values():
            if c > 0:
                pos.append(t if c == 1 else E.mul(t, E.const(c, self.dtype)))
            else:
                neg.append(t if c == -1 else E.mul(t, E.const(-c, self.dtype)))
        out = None
        for p in pos:
            out = p if out is None else E.Binary("+", out, p)
        for n in neg:
            out = E.Binary("-", out if out is not None else E.const(0, self.dtype), n)
        if out is None:
            return E.const(self.const, self.dtype)
        if self.const > 0:
            out = E.Binary("+", out, E.const(self.const, self.dtype))
        elif self.const < 0:
            out = E.Binary("-", out, E.const(-self.const, self.dtype))
        return out


def _key(e: E.PrimExpr):
    if isinstance(e, E.Var):
        return ("v", id(e))
    return ("x", _struct_key(e))


def _struct_key(e):
    if isinstance(e, E.Var):
        return ("v", id(e))
    if isinstance(e, E.IntImm):
        return ("i", e.value)
    if isinstance(e, E.FloatImm):
        return ("f", e.value)
    if isinstance(e, E.Binary):
        return (e.op, _struct_key(e.a), _struct_key(e.b))
    if isinstance(e, E.BufferLoad):
        return ("load", id(e.buffer), tuple(_struct_key(i) for i in e.indices))
    if isinstance(e, E.Cast):
        return ("cast", e.dtype, _struct_key(e.value))
    if isinstance(e, E.Select):
        return ("sel", _struct_key(e.cond), _struct_key(e.true_value), _struct_key(e.false_value))
    if isinstance(e, E.Call):
        return ("call", e.op, tuple(_struct_key(a) for a in e.args))
    if isinstance(e, E.Not):
        return ("not", _struct_key(e.a))
    return ("id", id(e))


def _atom(e: E.PrimExpr) -> _Affine:
    return _Affine({_key(e): (e, 1)}, 0, e.dtype)


def _affine(e: E.PrimExpr, bounds: Bounds) -> _Affine:
    if isinstance(e, E.IntImm):
        return _Affine({}, e.value, e.dtype)
    if isinstance(e, E.Binary):
        if e.op in ("+", "-"):
            a, b = _affine(e.a, bounds), _affine(e.b, bounds)
            return a.plus(b, 1 if e.op == "+" else -1)
        if e.op == "*":
            a, b = _affine(e.a, bounds), _affine(e.b, bounds)
            if not b.terms:
                return a.scaled(b.const)
            if not a.terms:
                return b.scaled(a.const)
            return _atom(E.Binary("*", a.to_expr(), b.to_expr()))
        if e.op in ("//", "%"):
            return _divmod(e.op, _affine(e.a, bounds), simplify(e.b, bounds), bounds)
        if e.op in ("min", "max"):
            a, b = simplify(e.a, bounds), simplify(e.b, bounds)
            ba, bb = const_bound(a, bounds), const_bound(b, bounds)
            if ba is not None and bb is not None:
                if e.op == "min":
                    if ba[1] <= bb[0]:
                        return _affine(a, bounds)
                    if bb[1] <= ba[0]:
                        return _affine(b, bounds)
                else:
                    if ba[0] >= bb[1]:
                        return _affine(a, bounds)
                    if bb[0] >= ba[1]:
                        return _affine(b, bounds)
            folded = E.min_(a, b) if e.op == "min" else E.max_(a, b)
            return _affine(folded, bounds) if isinstance(folded, E.IntImm) else _atom(folded)
    return _atom(e)


def _divmod(op: str, a: _Affine, b: E.PrimExpr, bounds: Bounds) -> _Affine:
    if not isinstance(b, E.IntImm) or b.value <= 0:
        return _atom(E.Binary(op, a.to_expr(), b))
    c = b.value
    if c == 1:
        return a if op == "//" else _Affine({}, 0, a.dtype)
    # split off terms whose coefficient is a multiple of c
    keep = {k: (t, co) for k, (t, co) in a.terms.items() if co % c != 0}
    moved = {k: (t, co) for k, (t, co) in a.terms.items() if co % c == 0}
    rest = _Affine(keep, a.const % c, a.dtype)
    q_const = a.const // c
    quot = _Affine({k: (t, co // c) for k, (t, co) in moved.items()}, q_const, a.dtype)
    rb = const_bound(rest.to_expr(), bounds)
    if rb is not None:
        lo, hi = rb
        if lo // c == hi // c:  # the remainder part never crosses a multiple of c
            if op == "//":
                return quot.plus(_Affine({}, lo // c, a.dtype))
            return rest.plus(_Affine({}, -(lo // c) * c, a.dtype))
    if op == "//":
        return quot.plus(_atom(E.Binary("//", rest.to_expr(), b)))
    return _atom(E.Binary("%", rest.to_expr(), b))


def simplify(e: E.PrimExpr, bounds: Bounds | None = None) -> E.PrimExpr:
    """Canonical simplified form of an expression; integer parts become affine where possible.

    ``bounds`` maps Vars to inclusive ``(lo, hi)`` ranges and enables folding of ``//``, ``%``, min/max and
    comparisons.
    """
    bounds = bounds or {}
    if isinstance(e, (E.Var, E.IntImm, E.FloatImm)):
        return e
    if is_float(e.dtype) or e.dtype == "bool":
        return _simplify_other(e, bounds)
    if isinstance(e, E.Binary) and e.op in ("+", "-", "*", "//", "%", "min", "max"):
        return _affine(e, bounds).to_expr()
    return _simplify_other(e, bounds)


def _simplify_other(e: E.PrimExpr, bounds: Bounds) -> E.PrimExpr:
    from .functor import IRMutator, binary

    if isinstance(e, E.Binary) and e.op in E.COMPARE_OPS and not is_float(e.a.dtype):
        diff = simplify(E.sub(e.a, e.b), bounds)
        bd = const_bound(diff, bounds)
        if bd is not None:
            lo, hi = bd
            verdict = {"<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0),
                       ">=": (lo >= 0, hi < 0), "==": (lo == hi == 0, lo > 0 or hi < 0),
                       "!=": (lo > 0 or hi < 0, lo == hi == 0)}[e.op]
            if verdict[0]:
                return E.const(True, "bool")
            if verdict[1]:
                return E.const(False, "bool")
        return binary(e.op, simplify(e.a, bounds), simplify(e.b, bounds))

    class _M(IRMutator):
        def visit(self, n):
            if n is e:
                return super().visit(n)
            if isinstance(n, E.PrimExpr):
                return simplify(n, bounds)
            return super().visit(n)

    return _M().visit(e)


def const_bound(e: E.PrimExpr, bounds: Bounds | None = None) -> tuple[int, int] | None:
    """Inclusive integer bounds of ``e`` given variable bounds, or None when unknown/unbounded."""
    bounds = bounds or {}
    if isinstance(e, E.IntImm):
        return (e.value, e.value)
    if isinstance(e, E.Var):
        return bounds.get(e)
    if isinstance(e, E.Cast) and not is_float(e.dtype):
        return const_bound(e.value, bounds)
    if not isinstance(e, E.Binary):
        return None
    a = const_bound(e.a, bounds)
    b = const_bound(e.b, bounds)
    op = e.op
    if op == "%" and b is not None and b[0] == b[1] and b[0] > 0:
        c = b[0]
        if a is not None and a[0] // c == a[1] // c:
            return (a[0] % c, a[1] % c)
        return (0, c - 1)
    if a is None or b is None:
        return None
    if op == "+":
        return (a[0] + b[0], a[1] + b[1])
    if op == "-":
        return (a[0] - b[1], a[1] - b[0])
    if op == "*":
        cands = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return (min(cands), max(cands))
    if op == "//" and b[0] == b[1] and b[0] > 0:
        return (a[0] // b[0], a[1] // b[0])
    if op == "min":
        return (min(a[0], b[0]), min(a[1], b[1]))
    if op == "max":
        return (max(a[0], b[0]), max(a[1], b[1]))
    return None


def is_const_int(e, value: int | None = None) -> bool:
    return isinstance(e, E.IntImm) and (value is None or e.value == value)


def as_const_int(e) -> int | None:
    return e.value if isinstance(e, E.IntImm) else None


def affine_coefficients(e: E.PrimExpr, variables, bounds: Bounds | None = None) -> tuple[dict, E.PrimExpr] | None:
    """Write ``e`` as ``sum(coef[v] * v) + rest`` with integer coefs for the given vars.

    Returns None when a variable appears non-linearly (inside ``//``, ``%``, a product, ...).
    """
    aff = _affine(e, bounds or {})
    coefs = {}
    rest_terms = {}
    var_keys = {("v", id(v)): v for v in variables}
    from .functor import uses_var

    vset = set(variables)
    for k, (t, c) in aff.terms.items():
        if k in var_keys:
            coefs[var_keys[k]] = c
        else:
            if uses_var(t, vset):
                return None
            rest_terms[k] = (t, c)
    return coefs, _Affine(rest_terms, aff.const, aff.dtype).to_expr()
