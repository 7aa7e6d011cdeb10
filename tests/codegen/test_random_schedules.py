"""Differential test: random legal schedules of matmul, dense+bias+relu and conv2d compile and match numpy.

The schedules come from the schedule engineer's hypothesis strategy (``tests/schedule/test_properties.py``:
every primitive, random arguments, illegal steps refused with ScheduleError); each resulting program is
built for 1 or 2 cores and run on random inputs. 150 schedules by default; the ``slow`` variant runs 1500
longer sequences.
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
from tunefarm.runtime import build  # noqa: E402
from tunefarm.schedule import Schedule, ScheduleError  # noqa: E402
from tunefarm.target import Target  # noqa: E402


def compile_and_compare(data, max_steps: int) -> None:
    name = data.draw(st.sampled_from(sorted(TP.PROGRAMS)))
    func = TP._FUNCS[name]
    sch = Schedule(func, seed=data.draw(st.integers(0, 2 ** 16)))
    pools = TP.Pools()
    for _ in range(data.draw(st.integers(1, max_steps))):
        try:
            TP.step(data, sch, pools)
        except ScheduleError:
            pass
    cores = data.draw(st.sampled_from([1, 2]))
    f = sch.mod["main"]
    mod = build(f, Target.host(cores))
    args = P.random_args(f, seed=1)
    args[-1][...] = np.nan  # the output must be fully written
    mod(*args)
    np.testing.assert_allclose(args[-1], P.expected(name, args), rtol=1e-4, atol=1e-4,
                               err_msg=f"{name} on {cores} cores:\n{sch.trace}")


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_schedules_compile_and_match_numpy(data):
    compile_and_compare(data, max_steps=10)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_schedules_compile_and_match_numpy_many(data):
    compile_and_compare(data, max_steps=16)
