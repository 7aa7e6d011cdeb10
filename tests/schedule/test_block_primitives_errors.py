"""Illegal block-primitive requests raise ScheduleError (naming the primitive) and nothing else.

The last test drives random sequences of block primitives over small programs: every request either
raises ScheduleError or yields a program that computes the same numbers as the original.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.reference import interpret
from tunefarm.schedule.error import ScheduleError
from tunefarm.schedule.primitives.cache import cache_read, cache_write
from tunefarm.schedule.primitives.compact import compact_buffer_allocations
from tunefarm.schedule.primitives.compute_location import (can_inline, compute_at, compute_at_candidates,
                                                           compute_inline, reverse_compute_at,
                                                           reverse_compute_inline)
from tunefarm.schedule.primitives.loop_transform import reorder, split
from tunefarm.schedule.primitives.reduction import decompose_reduction, rfactor
from tunefarm.schedule.tree import block_names, iter_paths
from tunefarm.script import from_source

import programs as P

MM_BIAS_RELU = P.mm_bias_relu_script(8)

STENCIL = P.stencil_script(16)

ROWMAX = '''
@T.prim_func
def rowmax(A: T.Buffer((4, 12), "float32"), M: T.Buffer((4,), "float32"), N: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 12):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-1000)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i in range(4):
        with T.block("N"):
            vi = T.axis.spatial(4, i)
            N[vi] = M[vi] * T.float32(3)
'''

SHIFTED = '''
@T.prim_func
def shifted(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi + 1] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi + 1]
'''


def loops(func):
    return {p[-1].loop_var.name: p[-1].loop_var for p in iter_paths(func.body) if isinstance(p[-1], S.For)}


def raises(prim, fn, *args, match=None):
    with pytest.raises(ScheduleError) as info:
        fn(*args)
    assert info.value.primitive == prim
    if match is not None:
        assert match in info.value.reason, info.value.reason
    return info.value


# ---------------------------------------------------------------------------------------------------------
def test_inline_refusals():
    f = from_source(MM_BIAS_RELU)
    raises("compute_inline", compute_inline, f, "C", match="output of the function")
    raises("compute_inline", compute_inline, f, "Y", match="reduction")
    raises("compute_inline", compute_inline, f, "root")
    raises("compute_inline", compute_inline, f, "nope", match="no block named")
    raises("compute_inline", compute_inline, from_source(SHIFTED), "B", match="distinct iteration variables")
    assert not can_inline(f, "C") and not can_inline(from_source(SHIFTED), "B")
    raises("reverse_compute_inline", reverse_compute_inline, f, "Z", match="reduction")
    raises("reverse_compute_inline", reverse_compute_inline, f, "Y", match="reduction")
    stencil = from_source(STENCIL)
    raises("reverse_compute_inline", reverse_compute_inline, stencil, "C", match="different indices")


def test_inline_refuses_when_an_input_is_overwritten_in_between():
    src = '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("A2"):
            vi = T.axis.spatial(8, i)
            A[vi] = T.float32(0)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
'''
    # TVM's reason (the scope is no stage pipeline: a write after a read) comes first; tunefarm's own is behind it
    raises("compute_inline", compute_inline, from_source(src), "B", match="write-after-read")


def test_compute_at_refusals():
    f = from_source(MM_BIAS_RELU)
    lp = loops(f)
    all_loops = [p[-1].loop_var for p in iter_paths(f.body) if isinstance(p[-1], S.For)]
    z_i, c_i = all_loops[3], all_loops[5]
    raises("compute_at", compute_at, f, "Y", c_i, match="does not cover")
    raises("compute_at", compute_at, f, "Y", lp["k"], match="already under")
    raises("compute_at", compute_at, f, "C", z_i, match="output")
    raises("compute_at", compute_at, f, "Z", all_loops[0], match="does not cover")
    raises("compute_at", compute_at, f, "Y", "i", match="loop variable")
    raises("compute_at", compute_at, f, "Y", E.Var("ghost"), match="no longer exists")
    assert compute_at_candidates(f, "C") == []


def test_reverse_compute_at_refusals():
    f = from_source(MM_BIAS_RELU)
    all_loops = [p[-1].loop_var for p in iter_paths(f.body) if isinstance(p[-1], S.For)]
    y_i, y_j, y_k, z_i = all_loops[0], all_loops[1], all_loops[2], all_loops[3]
    raises("reverse_compute_at", reverse_compute_at, f, "Z", y_k, match="not final")
    raises("reverse_compute_at", reverse_compute_at, f, "Y", z_i, match="comes after")
    raises("reverse_compute_at", reverse_compute_at, f, "C", y_j, match="no producer")
    g = reverse_compute_at(f, "Z", y_j)  # legal: the reduction over k is inside j
    assert block_names(g) == ["root", "Y", "Z", "C"]
    stencil = from_source(STENCIL)
    b_i = [p[-1].loop_var for p in iter_paths(stencil.body) if isinstance(p[-1], S.For)][0]
    raises("reverse_compute_at", reverse_compute_at, stencil, "C", b_i, match="window")


def test_reduction_refusals():
    f = from_source(MM_BIAS_RELU)
    all_loops = [p[-1].loop_var for p in iter_paths(f.body) if isinstance(p[-1], S.For)]
    y_i, y_j, y_k, z_i = all_loops[:4]
    raises("rfactor", rfactor, f, y_i, 0, match="spatial")
    raises("rfactor", rfactor, f, z_i, 0, match="spatial")
    raises("rfactor", rfactor, f, y_k, 3, match="out of range")
    raises("rfactor", rfactor, f, y_k, -4, match="out of range")
    raises("rfactor", rfactor, f, y_k, 1.0)
    raises("decompose_reduction", decompose_reduction, f, "Z", z_i, match="no init")
    raises("decompose_reduction", decompose_reduction, f, "Y", z_i, match="not an ancestor")
    g = reorder(f, [y_k, y_i, y_j])
    raises("decompose_reduction", decompose_reduction, g, "Y", y_i, match="reduction variable")
    rf, name = rfactor(f, y_k, 2)
    assert name == "Y_rf"
    raises("rfactor", rfactor, from_source(STENCIL), loops(from_source(STENCIL))["i"], 0)


def test_cache_refusals():
    f = from_source(MM_BIAS_RELU)
    raises("cache_read", cache_read, f, "Y", 2, "local", match="out of range")
    raises("cache_read", cache_read, f, "Y", -1, "local", match="out of range")
    raises("cache_read", cache_read, f, "Y", True, "local", match="must be an int")
    raises("cache_read", cache_read, f, "Y", 0, "texture", match="unknown storage scope")
    raises("cache_write", cache_write, f, "Y", 1, "local", match="out of range")
    raises("cache_write", cache_write, f, "Y", "0", "local", match="must be an int")
    raises("cache_write", cache_write, f, "nope", 0, "local", match="no block named")
    y_i = [p[-1].loop_var for p in iter_paths(f.body) if isinstance(p[-1], S.For)][0]
    g, _ = decompose_reduction(f, "Y", y_i)
    raises("cache_write", cache_write, g, "Y", 0, "local", match="needs a single writer")
    in_place = from_source('''
@T.prim_func
def acc(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = C[vi] + A[vi]
''')
    raises("cache_write", cache_write, in_place, "C", 0, "local", match="before writing")


# ---------------------------------------------------------------------------------------------------------
# random sequences: ScheduleError or the same numbers
# ---------------------------------------------------------------------------------------------------------
def _run(func, args):
    out = [a.copy() for a in args]
    interpret(func, *out)
    return out


def _random_step(rng: random.Random, func):
    names = [n for n in block_names(func) if n != "root"] + ["ghost"]
    loop_vars = list(loops(func).values()) + [E.Var("stale")]
    block = rng.choice(names)
    loop = rng.choice(loop_vars)
    kind = rng.choice(["compute_inline", "reverse_compute_inline", "compute_at", "reverse_compute_at",
                       "cache_read", "cache_write", "decompose_reduction", "rfactor", "split", "compact"])
    if kind == "compute_inline":
        return compute_inline(func, block)
    if kind == "reverse_compute_inline":
        return reverse_compute_inline(func, block)
    if kind == "compute_at":
        return compute_at(func, block, loop, rng.random() < 0.5)
    if kind == "reverse_compute_at":
        return reverse_compute_at(func, block, loop, rng.random() < 0.5)
    if kind == "cache_read":
        return cache_read(func, block, rng.randint(-1, 2), rng.choice(["local", "global", "texture"]))[0]
    if kind == "cache_write":
        return cache_write(func, block, rng.randint(-1, 1), rng.choice(["local", "global"]))[0]
    if kind == "decompose_reduction":
        return decompose_reduction(func, block, loop)[0]
    if kind == "rfactor":
        return rfactor(func, loop, rng.randint(-2, 2))[0]
    if kind == "split":
        from tunefarm.schedule.tree import find_loop

        ext = find_loop(func, loop, "split")[-1].extent
        if not isinstance(ext, E.IntImm) or ext.value < 2:
            raise ScheduleError("split", "not splittable here")
        f = rng.choice([d for d in range(1, ext.value + 1) if ext.value % d == 0] + [3])
        return split(func, loop, [None, f])[0]
    return compact_buffer_allocations(func)


@pytest.mark.parametrize("src", [MM_BIAS_RELU, STENCIL, ROWMAX, SHIFTED])
def test_random_primitive_sequences_raise_schedule_error_or_keep_the_numbers(src):
    base = from_source(src)
    rng = random.Random(hash(src) % 1000)
    nprng = np.random.default_rng(0)
    args = [nprng.standard_normal(p.const_shape()).astype(p.dtype) for p in base.params]
    want = _run(base, args)
    applied = 0
    for trial in range(25):
        func = base
        for _ in range(6):
            try:
                new = _random_step(rng, func)
            except ScheduleError:
                continue
            got = _run(new, args)
            for p, w, g in zip(base.params, want, got):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{p.name} after:\n{new.script()}")
            func = new
            applied += 1
    assert applied >= 10  # the walk really exercised legal rewrites, not only refusals
