"""The analysis under the block primitives: interval bounds of index expressions, regions, positions."""
from __future__ import annotations

import itertools
import random

import numpy as np

from tunefarm.ir import expr as E
from tunefarm.ir.arith import simplify
from tunefarm.ir.buffer import Buffer
from tunefarm.ir import stmt as S
from tunefarm.reference import interpret
from tunefarm.schedule import Schedule
from tunefarm.schedule.primitives import dataflow as D
from tunefarm.schedule.primitives.compute_location import compute_at_candidates, reverse_compute_at
from tunefarm.schedule.tree import find_block, iter_paths
from tunefarm.script import from_source


def _eval(e, env):
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    a, b = _eval(e.a, env), _eval(e.b, env)
    return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if b else 0, "%": a % b if b else 0,
            "min": min(a, b), "max": max(a, b)}[e.op]


def _random_expr(rng, leaves, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves) if rng.random() < 0.8 else E.const(rng.randint(-3, 5))
    op = rng.choice(["+", "-", "*", "//", "%", "min", "max"])
    a = _random_expr(rng, leaves, depth - 1)
    if op in ("*", "//", "%"):
        return {"*": E.mul, "//": E.floordiv, "%": E.floormod}[op](a, E.const(rng.randint(1, 5)))
    b = _random_expr(rng, leaves, depth - 1)
    return {"+": E.add, "-": E.sub, "min": E.min_, "max": E.max_}[op](a, b)


def test_interval_bounds_contain_every_value():
    rng = random.Random(7)
    x, y, f = E.Var("x"), E.Var("y"), E.Var("f")
    relax = {x: (E.const(0), E.const(3)), y: (E.mul(f, 4), E.add(E.mul(f, 4), 3))}  # y ranges over f's tile
    checked = 0
    for _ in range(300):
        e = _random_expr(rng, [x, y, f], 3)
        r = D.interval(e, relax, {f: (0, 2)})
        if r is None:
            continue
        checked += 1
        for fv in range(3):
            lo, hi = _eval(r[0], {f: fv}), _eval(r[1], {f: fv})
            for xv, yv in itertools.product(range(4), range(4 * fv, 4 * fv + 4)):
                v = _eval(e, {x: xv, y: yv, f: fv})
                assert lo <= v <= hi, (e, r, fv, xv, yv)
    assert checked > 200


def test_interval_is_tight_for_tiles():
    i0, i1 = E.Var("i0"), E.Var("i1")
    e = E.add(E.mul(i0, 8), i1)
    lo, hi = D.interval(e, {i1: (E.const(0), E.const(7))})
    assert simplify(E.sub(hi, lo)).value == 7
    q = D.interval(E.floordiv(e, 8), {i1: (E.const(0), E.const(7))}, {i0: (0, 3)})
    assert simplify(q[0]) is i0 or repr(simplify(q[0])) == "i0"
    m = D.interval(E.floormod(e, 8), {i1: (E.const(0), E.const(7))}, {i0: (0, 3)})
    assert (simplify(m[0]).value, simplify(m[1]).value) == (0, 7)
    assert D.interval(E.BufferLoad(Buffer("A", (4,), "int32"), [i1]), {i1: (E.const(0), E.const(3))}) is None


THREE_STAGE = '''
@T.prim_func
def three(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] * T.float32(2)
'''


def test_scope_info_orders_blocks_and_finds_accesses():
    f = from_source(THREE_STAGE)
    root = f.root_block
    info = D.ScopeInfo(f, root)
    assert [s.name for s in info.sites] == ["B", "C"]
    b, c = info.sites
    assert b.order < c.order
    assert {x.name for x in b.writes} == {"B"} and {x.name for x in c.reads} == {"B"}
    assert [s.name for s in info.readers(root.alloc_buffers[0])] == ["C"]
    loop_c_i = find_block(f, "C")[-3]
    assert isinstance(loop_c_i, S.For) and c.under(loop_c_i) and not b.under(loop_c_i)


def test_candidates_and_a_transposed_reverse_compute_at():
    f = from_source(THREE_STAGE)
    sch = Schedule(f)
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, factors=[4, 4])
    g = sch.mod["main"]
    assert [v.name for v in compute_at_candidates(g, "B")] == ["i", "j"]  # consumer C's loops
    h = reverse_compute_at(g, "C", sch.get(j0).loop_var)
    text = h.script()
    # C reads B[vj, vi]: B's tile (row i, columns j_0*4..+3) feeds C's rows j_0*4..+3 of column i
    assert "vi = T.axis.spatial(16, j_0 * 4 + ax0)" in text and "vj = T.axis.spatial(16, i)" in text
    a = np.random.default_rng(0).standard_normal((16, 16)).astype("float32")
    c = np.zeros((16, 16), "float32")
    interpret(h, a, c)
    np.testing.assert_allclose(c, (a + 1).T * 2, rtol=1e-6)


def test_fresh_names_avoid_blocks_and_buffers():
    f = from_source(THREE_STAGE)
    assert D.fresh_name(f, "B") == "B_1"
    assert D.fresh_name(f, "X") == "X"
    assert D.fresh_name(f, "C", taken=("C_1",)) == "C_2"
    assert sum(isinstance(p[-1], S.BlockRealize) for p in iter_paths(f.body)) == 3
