"""Index expressions compiled as one closure: ``sum(c_k * v_k) + c``.

Schedules turn ``vi`` into ``i0 * 32 + i1 * 4 + i2``; evaluated as a tree that is five closure calls per
index per iteration, which dominated the run time of scheduled programs. Integer ``+``, ``-`` and
multiplication by literals are folded at compile time into coefficients over variable slots.
"""
from __future__ import annotations

from operator import itemgetter, mul

from ..ir import expr as E
from ..ir.dtype import is_int


def _collect(e, var_slot, scale: int, terms: dict, const: list) -> bool:
    if isinstance(e, E.IntImm):
        const[0] += scale * e.value
        return True
    if isinstance(e, E.Var):
        k = var_slot(e)
        terms[k] = terms.get(k, 0) + scale
        return True
    if isinstance(e, E.Binary) and is_int(e.dtype):
        if e.op == "+":
            return _collect(e.a, var_slot, scale, terms, const) and _collect(e.b, var_slot, scale, terms, const)
        if e.op == "-":
            return _collect(e.a, var_slot, scale, terms, const) and _collect(e.b, var_slot, -scale, terms, const)
        if e.op == "*":
            if isinstance(e.b, E.IntImm):
                return _collect(e.a, var_slot, scale * e.b.value, terms, const)
            if isinstance(e.a, E.IntImm):
                return _collect(e.b, var_slot, scale * e.a.value, terms, const)
    return False


def compile_affine(e, var_slot):
    """A closure evaluating integer expression ``e`` if it is affine in variables, else None."""
    if not (isinstance(e, E.Binary) and e.op in ("+", "-", "*") and is_int(e.dtype)):
        return None
    terms: dict = {}
    const = [0]
    if not _collect(e, var_slot, 1, terms, const):
        return None
    items = [(k, c) for k, c in terms.items() if c]
    k0 = const[0]
    if not items:
        return lambda env: k0
    if len(items) == 1:
        ((s, c),) = items
        if c == 1:
            return lambda env: env[s] + k0
        return lambda env: env[s] * c + k0
    if len(items) == 2:
        (s1, c1), (s2, c2) = items
        if c2 == 1:
            return lambda env: env[s1] * c1 + env[s2] + k0
        return lambda env: env[s1] * c1 + env[s2] * c2 + k0
    if len(items) == 3:
        (s1, c1), (s2, c2), (s3, c3) = items
        return lambda env: env[s1] * c1 + env[s2] * c2 + env[s3] * c3 + k0
    get = itemgetter(*(s for s, _ in items))
    coefs = tuple(c for _, c in items)
    return lambda env: sum(map(mul, get(env), coefs)) + k0
