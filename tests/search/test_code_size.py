"""VerifyCodeSize: the unrolled-size estimate on the scheduled function matches the lowered program."""
from __future__ import annotations

import pytest

from tunefarm.codegen import lower
from tunefarm.ir import stmt as S
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.search.postprocs import (PostprocError, VerifyCodeSize, apply_postprocs, default_postprocs,
                                       unrolled_size)
from tunefarm.search.space import AutoSpace
from tunefarm.search.workloads import builtin_workload
from tunefarm.target import Target


def lowered_size(func) -> int:
    """The same count on the lowered program, where the code generator's unroll decisions are loop kinds."""
    def walk(s, mult, lanes):
        if isinstance(s, S.For):
            ext = s.const_extent() or 1
            if s.kind == "unrolled":
                return walk(s.body, mult * ext, lanes)
            if s.kind == "vectorized":
                return walk(s.body, mult, lanes * ext)
            return walk(s.body, mult, lanes)
        if isinstance(s, S.SeqStmt):
            return sum(walk(x, mult, lanes) for x in s.seq)
        if isinstance(s, S.BufferStore):
            return mult * -(-lanes * 4 // 32)
        if isinstance(s, S.IfThenElse):
            return walk(s.then_case, mult, lanes) + (walk(s.else_case, mult, lanes) if s.else_case else 0)
        if hasattr(s, "body"):
            return walk(s.body, mult, lanes)
        return 0
    return walk(lower(func, "main").body, 1, 1)


@pytest.mark.parametrize("name", ["matmul-128", "dense-relu-784-128", "conv2d-1x64x28x28-64x3x3"])
def test_estimate_matches_the_lowered_program(name):
    func = builtin_workload(name)
    space = AutoSpace.for_target(Target.host(num_cores=1))
    postprocs = [p for p in default_postprocs() if not isinstance(p, VerifyCodeSize)]
    sizes, seed = [], 0
    while len(sizes) < 12 and seed < 200:
        try:
            sch = apply_postprocs(space.sample(func, seed), postprocs)
        except (ScheduleError, PostprocError):
            seed += 1
            continue
        seed += 1
        got = unrolled_size(sch.mod["main"])
        assert got == lowered_size(sch.mod["main"]), f"{name} seed {seed - 1}"
        sizes.append(got)
    assert len(sizes) == 12 and len(set(sizes)) > 2  # the samples differ, so the check is not vacuous


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


def test_verify_code_size_rejects_with_the_size_and_limit():
    sch = _unrolled_matmul(64, 128)
    VerifyCodeSize(max_size=128).apply(sch)  # at the limit: accepted
    with pytest.raises(PostprocError, match="128 vector statements is over the limit of 100"):
        VerifyCodeSize(max_size=100).apply(sch)
    assert any(isinstance(p, VerifyCodeSize) for p in default_postprocs())
