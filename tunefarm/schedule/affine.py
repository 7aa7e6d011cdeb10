"""Whether a block's bindings are quasi-affine maps of its loops (TVM's ``IsAffineBinding``).

TVM decides it with ``DetectIterMap`` at its "surjective" level; this is the same rule on the forms
TensorIR schedules make. Each binding is rewritten into *pieces* of loop variables: ``scale * ((v // lower)
% extent)``, the digit range ``[lower, lower * extent)`` of ``v`` (sums, products by constants, and floor
division / modulo by constants of a mixed-radix sum, which is what split and fuse produce). The bindings are
affine when

- every binding is a constant plus one mixed-radix number of unit stride: its pieces, sorted by scale, have
  scales ``1, e0, e0*e1, ...`` (``l * 16`` or ``i + j`` are not; reorder alone admits overlap, see
  ``is_affine_binding``);
- no two pieces, across all bindings, share digits of one loop variable (``v0 * v0 + v1``, or ``i`` bound
  twice, are not);
- every conjunct of the predicate that ties several pieces together (``i * 16384 + j * 128 + k < 100``) is
  a bound on a run of consecutive pieces of one binding (the guard of a non-divisible split is; a bound on
  a fusion of four separate bindings is not). Other conjuncts bound single iterators and are allowed.

Loops outside the given ones (and symbolic parameters) are constants. A loop of one iteration is its
minimum. Anything else (a load, ``min``, a product of two loop variables) is not affine.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.functor import uses_var

_Piece = tuple  # (var, lower, extent, scale)


class _NotAffine(Exception):
    pass


class _Sum:
    """``sum(scale * ((var // lower) % extent)) + base``; ``base`` is an int or a loop-free expression."""

    __slots__ = ("pieces", "base")

    def __init__(self, pieces: list, base):
        self.pieces = pieces
        self.base = base


_SYMBOLIC = "symbolic"  # a loop-free offset that is not a literal: only its presence matters


def _base_add(a, b, sign: int):
    if isinstance(a, int) and isinstance(b, int):
        return a + sign * b
    return _SYMBOLIC


def _rewrite(e, dom: dict) -> _Sum:
    if isinstance(e, E.IntImm):
        return _Sum([], e.value)
    if isinstance(e, E.Var):
        if e not in dom:
            return _Sum([], _SYMBOLIC)
        lo, ext = dom[e]
        return _Sum([] if ext == 1 else [(e, 1, ext, 1)], lo)
    if isinstance(e, E.Cast):
        return _rewrite(e.value, dom)
    if not uses_var(e, dom):
        return _Sum([], _SYMBOLIC)
    if not isinstance(e, E.Binary):
        raise _NotAffine
    if e.op in ("+", "-"):
        a, b = _rewrite(e.a, dom), _rewrite(e.b, dom)
        if e.op == "-" and b.pieces:
            raise _NotAffine
        return _Sum(a.pieces + b.pieces, _base_add(a.base, b.base, 1 if e.op == "+" else -1))
    if e.op == "*":
        a, b = _rewrite(e.a, dom), _rewrite(e.b, dom)
        if a.pieces and b.pieces:
            raise _NotAffine
        if b.pieces:
            a, b = b, a
        if not isinstance(b.base, int):
            raise _NotAffine  # a symbolic stride
        c = b.base
        if c == 0:
            return _Sum([], 0)
        if c < 0:
            raise _NotAffine
        return _Sum([(v, lo, ext, s * c) for v, lo, ext, s in a.pieces],
                    a.base * c if isinstance(a.base, int) else a.base)
    if e.op in ("//", "%") and isinstance(e.b, E.IntImm) and e.b.value > 0:
        return _divmod(e.op, _rewrite(e.a, dom), e.b.value)
    raise _NotAffine


def _divmod(op: str, a: _Sum, c: int) -> _Sum:
    if not isinstance(a.base, int) or a.base % c:
        raise _NotAffine  # an offset that carries into the digits
    if all(s % c == 0 for _, _, _, s in a.pieces):
        if op == "//":
            return _Sum([(v, lo, ext, s // c) for v, lo, ext, s in a.pieces], a.base // c)
        return _Sum([], 0)
    pieces = _radix(a.pieces)
    s0 = pieces[0][3]
    if c % s0:
        raise _NotAffine
    k = c // s0
    low, high = [], []
    radix = 1
    for v, lo, ext, s in pieces:
        if radix * ext <= k:
            low.append((v, lo, ext, s))
        elif radix >= k:
            high.append((v, lo, ext, s))
        else:
            m = k // radix
            if k % radix:
                raise _NotAffine
            # a non-divisible extent (a guarded split) keeps its top digit partly empty: still surjective
            low.append((v, lo, m, s))
            high.append((v, lo * m, -(-ext // m), s * m))
        radix *= ext
    if op == "//":
        return _Sum([(v, lo, ext, s // c) for v, lo, ext, s in high], a.base // c)
    return _Sum(low, 0)


def _radix(pieces: list) -> list:
    """The pieces sorted by scale; they must form one mixed-radix number (each scale the product of the
    extents below it, times the smallest scale)."""
    if not pieces:
        return pieces
    pieces = sorted(pieces, key=lambda p: p[3])
    expect = pieces[0][3]
    for _, _, ext, s in pieces:
        if s != expect:
            raise _NotAffine
        expect = s * ext
    return pieces


def _covering(pieces: list) -> list:
    """The pieces in TVM's surjective fusion order: from scale 1 up, each next piece the one whose scale is the
    expected one (the product of the extents so far) or, failing that, the largest below it, so the sum takes
    every value of its range, some more than once (``v0 * 2 + v1`` with ``v1`` in ``[0, 4)``); a gap fails."""
    rest = sorted(pieces, key=lambda p: p[3])
    if not rest or rest[0][3] != 1:
        raise _NotAffine
    out, expect = [], 1
    while rest:
        exact = [p for p in rest if p[3] == expect]
        below = [p for p in rest if p[3] <= expect]
        if not below:
            raise _NotAffine
        p = exact[0] if exact else max(below, key=lambda q: q[3])
        rest.remove(p)
        out.append(p)
        expect = p[2] * p[3]
    return out


def _conjuncts(e) -> list:
    if isinstance(e, E.Binary) and e.op == "and":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [] if isinstance(e, E.IntImm) and e.value else [e]


def _check_predicate(pred, sums: list, dom: dict) -> None:
    for c in _conjuncts(pred):
        if not uses_var(c, dom):
            continue
        if not (isinstance(c, E.Binary) and c.op in ("<", "<=", ">", ">=")):
            raise _NotAffine
        side, other = (c.a, c.b) if uses_var(c.a, dom) else (c.b, c.a)
        if uses_var(other, dom):
            raise _NotAffine
        pieces = _rewrite(side, dom).pieces
        if len(pieces) < 2:
            continue
        pieces = _radix(pieces)
        keys = [(v, lo, ext) for v, lo, ext, _ in pieces]
        if not any(_has_run(s, keys) for s in sums):
            raise _NotAffine


def _has_run(pieces: list, keys: list) -> bool:
    mine = [(v, lo, ext) for v, lo, ext, _ in pieces]
    n = len(keys)
    return any(mine[i:i + n] == keys for i in range(len(mine) - n + 1))


def _disjoint(sums: list) -> None:
    used: dict = {}
    for s in sums:
        for v, lo, ext, _ in s.pieces:
            hi = lo * ext
            for a, b in used.get(v, ()):
                if lo < b and a < hi:
                    raise _NotAffine
            used.setdefault(v, []).append((lo, hi))


def loop_domain(loops) -> dict | None:
    """``Var -> (min, extent)`` of loops with constant ranges; None if one is symbolic (not analysable)."""
    dom = {}
    for lp in loops:
        if not (isinstance(lp.min, E.IntImm) and isinstance(lp.extent, E.IntImm)):
            return None
        dom[lp.loop_var] = (lp.min.value, lp.extent.value)
    return dom


def is_affine_binding(realize: S.BlockRealize, loops, overlap: bool = False) -> bool:
    """Whether ``realize``'s bindings (and predicate) are quasi-affine in ``loops`` (see the module doc).

    ``overlap`` also admits a binding whose pieces overlap without a gap (``_covering``), as TVM's surjective
    level does; only reorder asks for it, since it changes no block's instances, only their order (the blocks'
    own checks keep the strict rule: an overlapping spatial binding updates one element from two iterations).
    Loops with a symbolic range make the answer True: the rule needs constant extents, and refusing every
    symbolic-shape program would refuse what TVM accepts."""
    if not realize.iter_values:
        return True
    dom = loop_domain(loops)
    if dom is None:
        return True
    try:
        sums = [_rewrite(v, dom) for v in realize.iter_values]
        for s in sums:
            if overlap and s.pieces:
                try:
                    s.pieces = _radix(s.pieces)
                except _NotAffine:
                    s.pieces = _covering(s.pieces)
            else:
                s.pieces = _radix(s.pieces)
            if s.pieces and s.pieces[0][3] != 1:
                return False
        _disjoint(sums)
        _check_predicate(realize.predicate, [s.pieces for s in sums], dom)
    except _NotAffine:
        return False
    return True
