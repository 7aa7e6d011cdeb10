"""``is_affine_binding``: the quasi-affine rule (TVM's IsAffineBinding) on the binding forms schedules make."""
from __future__ import annotations

import pytest

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.schedule.affine import is_affine_binding


def _loop(name: str, extent: int, lo: int = 0):
    var = E.Var(name)
    return var, S.For(var, E.const(lo), E.const(extent), "serial", S.Evaluate(E.const(0)))


def _realize(values, predicate=S.TRUE, kinds=None):
    ivs = [S.IterVar(E.Var(f"v{k}"), S.Range.from_extent(1 << 20), (kinds or "S" * len(values))[k])
           for k in range(len(values))]
    return S.BlockRealize(values, predicate, S.Block("b", ivs, (), (), S.Evaluate(E.const(0))))


i, LI = _loop("i", 6)
j, LJ = _loop("j", 4)
k, LK = _loop("k", 8)
f, LF = _loop("f", 24)
o, LO = _loop("o", 3)
u, LU = _loop("u", 1)
s, LS = _loop("s", 5, lo=2)


@pytest.mark.parametrize("values, loops, pred", [
    ([i, j], [LI, LJ], S.TRUE),                                      # one loop per variable
    ([i * 4 + j], [LI, LJ], S.TRUE),                                 # split
    ([E.floordiv(f, 4), E.floormod(f, 4)], [LF], S.TRUE),            # fuse
    ([E.floordiv(E.floormod(f, 12), 4), E.floordiv(f, 12), E.floormod(f, 4)], [LF], S.TRUE),  # three-way fuse
    ([(o * 8 + k), j], [LO, LK, LJ], E.compare("<", o * 8 + k, 20)),  # a guarded split
    ([i + 3, E.const(0)], [LI], S.TRUE),                             # offsets and constants
    ([i, u * 7], [LI, LU], S.TRUE),                                  # a loop of one iteration is a constant
    ([s], [LS], S.TRUE),                                             # a loop not starting at 0
    ([i * i + j], [LJ], S.TRUE),                                     # i is outside the loops checked: a constant
])
def test_affine(values, loops, pred):
    assert is_affine_binding(_realize(values, pred), loops)


@pytest.mark.parametrize("values, loops, pred", [
    ([i * i + j], [LI, LJ], S.TRUE),                                 # not linear
    ([E.floordiv(k * k, 2)], [LK], S.TRUE),                          # TVM's rowsum_not_quasi_affine
    ([j * 16], [LJ], S.TRUE),                                        # stride 16: TVM's elementwise_not_affine
    ([i + j], [LI, LJ], S.TRUE),                                     # two iterators on one digit
    ([i, i], [LI], S.TRUE),                                          # one loop bound twice
    ([E.floordiv(f, 4), E.floormod(f, 8)], [LF], S.TRUE),            # overlapping digits of one loop
    ([i * 5 + j], [LI, LJ], S.TRUE),                                 # a gap between the digits
    ([i, j], [LI, LJ], E.compare("<", i * 4 + j, 10)),               # a predicate fusing two bindings
    ([E.max_(i, 2)], [LI], S.TRUE),                                  # min / max
])
def test_not_affine(values, loops, pred):
    assert not is_affine_binding(_realize(values, pred), loops)
