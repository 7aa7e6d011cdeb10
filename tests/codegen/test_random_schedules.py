"""Differential test: random legal schedules of matmul, dense+bias+relu and conv2d compile and match numpy.

The schedules come from the schedule engineer's hypothesis strategy (``tests/schedule/test_properties.py``:
every primitive, random arguments, illegal steps refused with ScheduleError); each resulting program is
built for 1 or 2 cores and run on random inputs. Half of the chains then go through the tuner's
postprocessors (with random parallel / vectorize / unroll annotations on the root block, as the auto space
sets them), which may reject the program (``PostprocError``) or rewrite it.

No build may hang: a 37x53x29 matmul is among the workloads, where a random ``fuse`` + ``unroll`` can ask for
100,000 statements of straight-line code (a build that did not return in 10 minutes); ``build()`` must refuse
such a program with ``CodeSizeError`` (counted as refused), and a hypothesis deadline fails any example that
takes a minute. 150 + 60 schedules by default; the ``slow`` variants run 1500 + 500 longer sequences.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schedule"))

import programs as P  # noqa: E402  (tests/schedule)
import test_properties as TP  # noqa: E402
from tunefarm.codegen import CodeSizeError  # noqa: E402
from tunefarm.runtime import build  # noqa: E402
from tunefarm.schedule import Schedule, ScheduleError  # noqa: E402
from tunefarm.search.postprocs import PostprocError, apply_postprocs, default_postprocs  # noqa: E402
from tunefarm.search.space import PARALLEL_KEY, UNROLL_KEY, VECTORIZE_KEY  # noqa: E402
from tunefarm.target import Target  # noqa: E402

# name -> (function, the numpy reference's builder name)
WORKLOADS = {**{name: (func, name) for name, func in TP._FUNCS.items()},
             "matmul_37x53x29": (P.matmul(37, 53, 29), "matmul")}
DEADLINE_MS = 60_000  # a build the code-size guard lets through takes seconds at most


def _postprocess(data, sch: Schedule) -> bool:
    """Annotate the root block as the auto space does and run the postprocessors; False if they reject it."""
    root = sch.get_block("root")
    for key, values in ((PARALLEL_KEY, [0, 2, 16, 64]), (VECTORIZE_KEY, [0, 4, 8, 16]), (UNROLL_KEY, [0, 16, 64, 512])):
        value = data.draw(st.sampled_from(values))
        if value:
            sch.annotate(root, key, value)
    try:
        apply_postprocs(sch, default_postprocs())
    except (PostprocError, ScheduleError):
        return False
    return True


def compile_and_compare(data, max_steps: int, postprocs: bool = False) -> None:
    name = data.draw(st.sampled_from(sorted(WORKLOADS)))
    func, reference = WORKLOADS[name]
    sch = Schedule(func, seed=data.draw(st.integers(0, 2 ** 16)))
    pools = TP.Pools()
    for _ in range(data.draw(st.integers(1, max_steps))):
        try:
            TP.step(data, sch, pools)
        except ScheduleError:
            pass
    if postprocs and not _postprocess(data, sch):
        return
    cores = data.draw(st.sampled_from([1, 2]))
    f = sch.mod["main"]
    try:
        mod = build(f, Target.host(cores))
    except CodeSizeError as e:  # refused before LLVM: the message names the loop and the size
        assert "unrolling loop" in str(e) and "over the build limit" in str(e)
        return
    args = P.random_args(f, seed=1)
    args[-1][...] = np.nan  # the output must be fully written
    mod(*args)
    np.testing.assert_allclose(args[-1], P.expected(reference, args), rtol=1e-4, atol=1e-4,
                               err_msg=f"{name} on {cores} cores:\n{sch.trace}")


@settings(max_examples=150, deadline=DEADLINE_MS, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_schedules_compile_and_match_numpy(data):
    compile_and_compare(data, max_steps=10)


@settings(max_examples=60, deadline=DEADLINE_MS, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_postprocessed_schedules_compile_and_match_numpy(data):
    compile_and_compare(data, max_steps=10, postprocs=True)


@pytest.mark.slow
@settings(max_examples=1500, deadline=DEADLINE_MS, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_schedules_compile_and_match_numpy_many(data):
    compile_and_compare(data, max_steps=16)


@pytest.mark.slow
@settings(max_examples=500, deadline=DEADLINE_MS, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_postprocessed_schedules_compile_and_match_numpy_many(data):
    compile_and_compare(data, max_steps=16, postprocs=True)


def test_the_drill_program_is_refused_not_built():
    """The chain the random primitives can reach on the 37x53x29 workload: fuse all three loops, unroll."""
    sch = Schedule(WORKLOADS["matmul_37x53x29"][0])
    sch.unroll(sch.fuse(*sch.get_loops(sch.get_block("C"))))
    with pytest.raises(CodeSizeError, match="113,738 statements"):
        build(sch.mod["main"], Target.host(1))
