"""Integer arithmetic for index expressions: bounds, and simplification to a canonical affine form.

Schedules compose splits and fuses (``(i0 * 4 + i1) // 32``); lowering, legality checks and the feature
extractor need those back in simple form. ``simplify`` rewrites integer expressions into a sum of terms
with constant coefficients, folding ``//`` and ``%`` when variable bounds prove them trivial.
"""
from __future__ import annotations

from . import expr as E
from .dtype import is_float, result_dtype
from .functor import IRMutator, binary, uses_var

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

    def add_term(self, var: E.Var, coef: int) -> "_Affine":
        """``add_in_place`` of ``coef * var`` (a single-term affine form), without building it."""
        terms = self.terms
        key = ("v", id(var))
        old = terms.get(key)
        if old is None:
            terms[key] = (var, coef)
        elif old[1] + coef == 0:
            del terms[key]
        else:
            terms[key] = (old[0], old[1] + coef)
        return self

    def scale_in_place(self, k: int) -> "_Affine":
        terms = self.terms
        for key, (t, c) in terms.items():
            terms[key] = (t, c * k)
        self.const *= k
        return self

    def add_in_place(self, other: "_Affine", sign: int = 1) -> "_Affine":
        """Add ``sign * other`` to ``self`` in place (for partial results nobody else holds)."""
        terms = self.terms
        for key, (t, c) in other.terms.items():
            if key in terms:
                nc = terms[key][1] + sign * c
                if nc == 0:
                    del terms[key]
                else:
                    terms[key] = (t, nc)
            else:
                terms[key] = (t, sign * c)
        self.const += sign * other.const
        return self

    def to_expr(self) -> E.PrimExpr:
        dtype = self.dtype
        exact = not is_float(dtype)  # literals of ``dtype`` are IntImm
        pos = []
        neg = []
        for t, c in self.terms.values():
            if c > 0:
                if c == 1:
                    pos.append(t)
                elif exact and t.dtype == dtype and not isinstance(t, (E.IntImm, E.FloatImm)):
                    pos.append(_bin("*", t, _int(c, dtype)))  # what ``_scaled_term`` builds
                else:
                    pos.append(_scaled_term(t, c, dtype))
            else:
                neg.append(t if c == -1 else _scaled_term(t, -c, dtype))
        out = None
        for p in pos:
            out = p if out is None else _bin("+", out, p)
        for n in neg:
            out = _bin("-", out if out is not None else _literal(0, dtype), n)
        if out is None:
            return _literal(self.const, dtype)
        if self.const > 0:
            out = _bin("+", out, _int(self.const, dtype) if exact else _literal(self.const, dtype))
        elif self.const < 0:
            out = _bin("-", out, _int(-self.const, dtype) if exact else _literal(-self.const, dtype))
        return out

    def bound(self, bounds: Bounds) -> tuple[int, int] | None:
        """``const_bound(self.to_expr(), bounds)``, computed from the terms without building the expression."""
        if is_float(self.dtype):
            return const_bound(self.to_expr(), bounds)
        lo = hi = 0
        for t, c in self.terms.values():
            if c == 0 or is_float(t.dtype) or isinstance(t, (E.IntImm, E.FloatImm)):
                return const_bound(self.to_expr(), bounds)  # to_expr folds these: let it decide
            b = const_bound(t, bounds)
            if b is None:
                return None
            if c == 1:
                lo += b[0]
                hi += b[1]
            elif c == -1:
                lo -= b[1]
                hi -= b[0]
            else:
                m = c if c > 0 else -c
                x, y = b[0] * m, b[1] * m
                tlo, thi = (x, y) if x <= y else (y, x)
                if c > 0:
                    lo += tlo
                    hi += thi
                else:
                    lo -= thi
                    hi -= tlo
        return (lo + self.const, hi + self.const)


_NEW = object.__new__


def _bin(op: str, a: E.PrimExpr, b: E.PrimExpr) -> E.Binary:
    """``E.Binary(op, a, b)`` for an arithmetic ``op`` (``+ - * // %``), without the constructor's checks."""
    n = _NEW(E.Binary)
    n.op = op
    n.a = a
    n.b = b
    da, db = a.dtype, b.dtype
    n.dtype = da if da == db else result_dtype(da, db)
    return n


def _int(value: int, dtype: str) -> E.IntImm:
    """``E.IntImm(value, dtype)`` for a Python int ``value``."""
    n = _NEW(E.IntImm)
    n.value = value
    n.dtype = dtype
    return n


# ``E.add`` / ``E.sub`` / ``E.mul`` for index expressions. Interval analysis builds many sums of one integer
# dtype; for those the constructors' general conversion and folding rules reduce to the few cases spelled
# out here (same results, including which operand is returned unchanged); anything else goes to them.
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def add_int(a, b) -> E.PrimExpr:
    """``E.add(a, b)``."""
    ta, tb = type(a), type(b)
    if (ta is E.Var or ta is E.Binary or ta is E.IntImm) and (tb is E.Var or tb is E.Binary or tb is E.IntImm) \
            and a.dtype == b.dtype and a.dtype in _INT_DTYPES:
        if tb is E.IntImm:
            if ta is E.IntImm:
                return _int(a.value + b.value, a.dtype)
            if b.value == 0:
                return a
        elif ta is E.IntImm and a.value == 0:
            return b
        return _bin("+", a, b)
    return E.add(a, b)


def sub_int(a, b) -> E.PrimExpr:
    """``E.sub(a, b)``."""
    ta, tb = type(a), type(b)
    if (ta is E.Var or ta is E.Binary or ta is E.IntImm) and (tb is E.Var or tb is E.Binary or tb is E.IntImm) \
            and a.dtype == b.dtype and a.dtype in _INT_DTYPES:
        if tb is E.IntImm:
            if ta is E.IntImm:
                return _int(a.value - b.value, a.dtype)
            if b.value == 0:
                return a
        if a is b:
            return _int(0, a.dtype)
        return _bin("-", a, b)
    return E.sub(a, b)


def mul_int(a, b) -> E.PrimExpr:
    """``E.mul(a, b)``."""
    ta, tb = type(a), type(b)
    if (ta is E.Var or ta is E.Binary or ta is E.IntImm) and (tb is E.Var or tb is E.Binary or tb is E.IntImm) \
            and a.dtype == b.dtype and a.dtype in _INT_DTYPES:
        if tb is E.IntImm:
            if ta is E.IntImm:
                return _int(a.value * b.value, a.dtype)
            if b.value == 1:
                return a
            if b.value == 0:
                return _int(0, a.dtype)
        elif ta is E.IntImm:
            if a.value == 1:
                return b
            if a.value == 0:
                return _int(0, a.dtype)
        return _bin("*", a, b)
    return E.mul(a, b)


def _literal(value: int, dtype: str) -> E.PrimExpr:
    """``E.const(value, dtype)`` for an int ``value`` (the constructor's type dispatch, inlined)."""
    return E.FloatImm(float(value), dtype) if is_float(dtype) else E.IntImm(value, dtype)


def _scaled_term(t: E.PrimExpr, c: int, dtype: str) -> E.PrimExpr:
    """``E.mul(t, E.const(c, dtype))``; the common case (same integer dtype, ``c`` not 0 or 1, ``t`` not a
    literal) builds the product directly, everything else goes through ``E.mul``'s folding."""
    if c != 0 and c != 1 and t.dtype == dtype and not is_float(dtype) and not isinstance(t, (E.IntImm, E.FloatImm)):
        return E.Binary("*", t, E.IntImm(c, dtype))
    return E.mul(t, E.const(c, dtype))


def _key(e: E.PrimExpr):
    if isinstance(e, E.Var):
        return ("v", id(e))
    return ("x", expr_key(e))


def expr_key(e):
    """A hashable structural key for index expressions (variables and buffers by identity)."""
    if isinstance(e, E.Var):
        return ("v", id(e))
    if isinstance(e, E.IntImm):
        return ("i", e.value, e.dtype)
    if isinstance(e, E.FloatImm):
        return ("f", repr(e.value), e.dtype)
    if isinstance(e, E.Binary):
        return (e.op, expr_key(e.a), expr_key(e.b))
    if isinstance(e, E.BufferLoad):
        return ("load", id(e.buffer), tuple(expr_key(i) for i in e.indices))
    if isinstance(e, E.Cast):
        return ("cast", e.dtype, expr_key(e.value))
    if isinstance(e, E.Select):
        return ("sel", expr_key(e.cond), expr_key(e.true_value), expr_key(e.false_value))
    if isinstance(e, E.Call):
        return ("call", e.op, e.dtype, tuple(expr_key(a) for a in e.args))
    if isinstance(e, E.Not):
        return ("not", expr_key(e.a))
    return ("id", id(e))


def _atom(e: E.PrimExpr) -> _Affine:
    return _Affine({_key(e): (e, 1)}, 0, e.dtype)


def _affine(e: E.PrimExpr, bounds: Bounds) -> _Affine:
    """The affine form of ``e``; always a fresh object that the caller owns (and may update in place)."""
    t = type(e)
    if t is E.IntImm or (t is not E.Binary and isinstance(e, E.IntImm)):
        return _Affine({}, e.value, e.dtype)
    if t is E.Binary or isinstance(e, E.Binary):
        op = e.op
        if op == "+" or op == "-":
            # a chain ``((x + y) - z) + ...``: walk down its left spine instead of recursing, then add the
            # right operands innermost first (the order the recursion would use)
            chain = [e]
            left = e.a
            while type(left) is E.Binary and (left.op == "+" or left.op == "-"):
                chain.append(left)
                left = left.a
            a = _affine(left, bounds)
            for node in reversed(chain):
                sign = 1 if node.op == "+" else -1
                b = node.b
                tb = type(b)
                if tb is E.IntImm:  # a literal: only the constant moves
                    a.const += sign * b.value
                elif tb is E.Var:  # one term, coefficient 1 (what ``_atom(b)`` holds)
                    a.add_term(b, sign)
                elif tb is E.Binary and b.op == "*" and type(b.b) is E.IntImm and type(b.a) is E.Var:
                    a.add_term(b.a, sign * b.b.value)  # var * literal
                else:
                    a.add_in_place(_affine(b, bounds), sign)
            return a
        if op == "*":
            b = e.b
            if type(b) is E.IntImm:  # what the general case below does when the right side is a literal
                a = e.a
                if type(a) is E.Var:
                    return _Affine({("v", id(a)): (a, b.value)}, 0, a.dtype)
                return _affine(a, bounds).scale_in_place(b.value)
            a, b = _affine(e.a, bounds), _affine(e.b, bounds)
            if not b.terms:
                return a.scale_in_place(b.const)
            if not a.terms:
                return b.scale_in_place(a.const)
            return _atom(E.Binary("*", a.to_expr(), b.to_expr()))
        if op == "//" or op == "%":
            return _divmod(op, _affine(e.a, bounds), simplify(e.b, bounds), bounds)
        if op == "min" or op == "max":
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
    rb = rest.bound(bounds)
    if rb is not None:
        lo, hi = rb
        if lo // c == hi // c:  # the remainder part never crosses a multiple of c
            if op == "//":
                quot.const += lo // c
                return quot
            rest.const += -(lo // c) * c
            return rest
    if op == "//":
        return quot.add_in_place(_atom(E.Binary("//", rest.to_expr(), b)))
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


_AFFINE_OPS = frozenset({"+", "-", "*", "//", "%", "min", "max"})


def _affine_case(e) -> bool:
    """Whether ``simplify(e)`` is ``_affine(e).to_expr()`` (an integer sum, product, division...)."""
    return type(e) is E.Binary and e.op in _AFFINE_OPS and not is_float(e.dtype) and e.dtype != "bool"


def simplified_bound(e: E.PrimExpr, bounds: Bounds | None = None) -> tuple[int, int] | None:
    """``const_bound(simplify(e, bounds), bounds)``, read off the affine form instead of building the
    simplified expression (what dependency and range checks ask most)."""
    bounds = bounds or {}
    if _affine_case(e):
        return _affine(e, bounds).bound(bounds)
    return const_bound(simplify(e, bounds), bounds)


def simplified_int(e: E.PrimExpr, bounds: Bounds | None = None) -> int | None:
    """The value of ``simplify(e, bounds)`` when that is an integer literal, else None (without building it)."""
    bounds = bounds or {}
    if _affine_case(e):
        a = _affine(e, bounds)
        return None if a.terms else a.const
    s = simplify(e, bounds)
    return s.value if isinstance(s, E.IntImm) else None


def _simplify_other(e: E.PrimExpr, bounds: Bounds) -> E.PrimExpr:
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

    return _simplifying_mutator()(e, bounds).visit(e)


_SIMPLIFYING_MUTATOR = None


def _simplifying_mutator():
    """One class for "simplify every child expression" (built once: defining it per call was a hot spot)."""
    global _SIMPLIFYING_MUTATOR
    if _SIMPLIFYING_MUTATOR is None:
        class _M(IRMutator):
            def __init__(self, root, bounds):
                self.root = root
                self.bounds = bounds

            def visit(self, n):
                if n is self.root:
                    return super().visit(n)
                if isinstance(n, E.PrimExpr):
                    return simplify(n, self.bounds)
                return super().visit(n)

        _SIMPLIFYING_MUTATOR = _M
    return _SIMPLIFYING_MUTATOR


def const_bound(e: E.PrimExpr, bounds: Bounds | None = None) -> tuple[int, int] | None:
    """Inclusive integer bounds of ``e`` given variable bounds, or None when unknown/unbounded."""
    bounds = bounds or {}
    t = type(e)
    if t is E.IntImm:
        return (e.value, e.value)
    if t is E.Var:
        return bounds.get(e)
    if t is E.Binary:
        return _binary_bound(e, bounds)
    if isinstance(e, E.IntImm):
        return (e.value, e.value)
    if isinstance(e, E.Var):
        return bounds.get(e)
    if isinstance(e, E.Cast) and not is_float(e.dtype):
        return const_bound(e.value, bounds)
    if not isinstance(e, E.Binary):
        return None
    return _binary_bound(e, bounds)


def _binary_bound(e: E.Binary, bounds: Bounds) -> tuple[int, int] | None:
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
    vset = set(variables)
    for k, (t, c) in aff.terms.items():
        if k in var_keys:
            coefs[var_keys[k]] = c
        else:
            if uses_var(t, vset):
                return None
            rest_terms[k] = (t, c)
    return coefs, _Affine(rest_terms, aff.const, aff.dtype).to_expr()
