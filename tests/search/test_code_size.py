"""VerifyCodeSize: the unrolled-size and gathered-lanes estimates on the scheduled function match lowering."""
from __future__ import annotations

import pytest

from tunefarm.codegen import lower
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.arith import affine_coefficients
from tunefarm.ir.functor import post_order_visit
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.search.postprocs import (PostprocError, VerifyCodeSize, apply_postprocs, default_postprocs,
                                       gathered_lanes, unrolled_size)
from tunefarm.search.space import AutoSpace
from tunefarm.search.workloads import builtin_workload
from tunefarm.target import Target


def lowered_counts(func) -> tuple[int, int]:
    """The same two counts on the lowered program, where the code generator's unroll decisions are loop kinds:
    (vector statements, lanes loaded or stored one at a time -- accesses in a vectorized loop whose flat index
    moves with the lane by a stride other than 0 or 1, what ``codegen/vectorize.py`` gathers or scatters)."""
    def gathered(idx, var) -> bool:
        aff = affine_coefficients(idx, [var])
        return aff is None or aff[0].get(var, 0) not in (0, 1)

    def walk(s, mult, lanes, lane):
        if isinstance(s, S.For):
            ext = s.const_extent() or 1
            if s.kind == "unrolled":
                return walk(s.body, mult * ext, lanes, lane)
            if s.kind == "vectorized":
                return walk(s.body, mult, lanes * ext, (s.loop_var, ext))
            return walk(s.body, mult, lanes, lane)
        if isinstance(s, S.SeqStmt):
            parts = [walk(x, mult, lanes, lane) for x in s.seq]
            return sum(p[0] for p in parts), sum(p[1] for p in parts)
        if isinstance(s, S.BufferStore):
            gathers = 0
            if lane is not None:
                indices = [s.indices[0]]
                post_order_visit(s.value, lambda n: indices.append(n.indices[0]) if isinstance(n, E.BufferLoad)
                                 else None)
                gathers = mult * lane[1] * sum(gathered(i, lane[0]) for i in indices)
            return mult * -(-lanes * 4 // 32), gathers
        if isinstance(s, S.IfThenElse):
            a = walk(s.then_case, mult, lanes, lane)
            b = walk(s.else_case, mult, lanes, lane) if s.else_case else (0, 0)
            return a[0] + b[0], a[1] + b[1]
        if hasattr(s, "body"):
            return walk(s.body, mult, lanes, lane)
        return 0, 0
    return walk(lower(func, "main").body, 1, 1, None)


def lowered_size(func) -> int:
    return lowered_counts(func)[0]


def lowered_gathers(func) -> int:
    return lowered_counts(func)[1]


@pytest.mark.parametrize("name", ["matmul-128", "dense-relu-784-128", "conv2d-1x64x28x28-64x3x3"])
def test_estimate_matches_the_lowered_program(name):
    func = builtin_workload(name)
    space = AutoSpace.for_target(Target.host(num_cores=1))
    postprocs = [p for p in default_postprocs() if not isinstance(p, VerifyCodeSize)]
    sizes, all_gathers, seed = [], [], 0
    while len(sizes) < 12 and seed < 200:
        try:
            sch = apply_postprocs(space.sample(func, seed), postprocs)
        except (ScheduleError, PostprocError):
            seed += 1
            continue
        seed += 1
        got, gathers = unrolled_size(sch.mod["main"]), gathered_lanes(sch.mod["main"])
        lowered, lowered_gathered = lowered_counts(sch.mod["main"])
        assert got == lowered, f"{name} seed {seed - 1}"
        sizes.append(got)
        if name == "conv2d-1x64x28x28-64x3x3":
            # the padding's clamped index is not affine in the lane, so it counts as gathered; lowering may
            # simplify it per unrolled copy: an upper bound there
            assert gathers >= lowered_gathered, f"{name} seed {seed - 1}"
        else:
            assert gathers == lowered_gathered, f"{name} seed {seed - 1}"
        all_gathers.append(gathers)
    assert len(sizes) == 12 and len(set(sizes)) > 2  # the samples differ, so the check is not vacuous
    if name != "matmul-128":  # matmul's samples read rows and columns with unit stride only
        assert any(all_gathers)


def _unrolled_matmul(inner: int, unroll_step: int):
    func = builtin_workload("matmul-64x64x64")
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 8])
    k0, k1 = sch.split(k, [None, inner])
    sch.reorder(i, j0, k0, k1, j1)
    sch.vectorize(j1)
    sch.annotate(i, "pragma_auto_unroll_max_step", unroll_step)
    return sch


@pytest.mark.parametrize("inner,step,expected", [
    (4, 16, 8),  # k1 (extent 4) holds two 8-lane stores (init, update): unrolled -> 8; k0 has a rolled loop inside
    (4, 0, 2),  # no unrolling
    (64, 64, 2),  # 64 * 2 statements > 64: not unrolled
    (64, 128, 128),
])
def test_counts_unrolled_copies_of_vector_statements(inner, step, expected):
    func = _unrolled_matmul(inner, step).mod["main"]
    assert unrolled_size(func) == expected
    assert lowered_size(func) == expected


def test_counts_gathered_lanes_of_a_strided_vector_read():
    func = builtin_workload("matmul-64x64x64")
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 8])
    sch.reorder(j, k, i0, i1)  # lanes walk down a column of A and C: stride 64
    sch.vectorize(i1)
    sch.annotate(j, "pragma_auto_unroll_max_step", 0)
    func = sch.mod["main"]
    # the update's store to C and loads of C and A move by 64 per lane (3 x 8 lanes), B's load by 0; the init's
    # store to C too (8)
    assert gathered_lanes(func) == lowered_gathers(func) == 4 * 8
    VerifyCodeSize(max_gathered_lanes=32).apply(sch)
    with pytest.raises(PostprocError, match="32 vector lanes one at a time, over the limit of 16"):
        VerifyCodeSize(max_gathered_lanes=16).apply(sch)
    assert gathered_lanes(_unrolled_matmul(4, 16).mod["main"]) == 0  # unit-stride lanes: whole vectors


def test_verify_code_size_rejects_with_the_size_and_limit():
    sch = _unrolled_matmul(64, 128)
    VerifyCodeSize(max_size=128).apply(sch)  # at the limit: accepted
    with pytest.raises(PostprocError, match="128 vector statements is over the limit of 100"):
        VerifyCodeSize(max_size=100).apply(sch)
    assert any(isinstance(p, VerifyCodeSize) for p in default_postprocs())
