"""``decompose_padding``: a fill block and a condition-free copy of the valid region, recorded and replayable,
computing what numpy's ``np.pad`` does; trivial or unsupported padding is refused."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.runtime import build
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.schedule.trace_python import apply_python
from tunefarm.script import T


@T.prim_func
def pad2d(x: T.Buffer((6, 10, 10), "float32"), y: T.Buffer((6, 14, 13), "float32")):
    for c, h, w in T.grid(6, 14, 13):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            y[vc, vh, vw] = T.if_then_else(2 <= vh and vh < 12 and 1 <= vw and vw < 11, x[vc, vh - 2, vw - 1],
                                           T.float32(-7))


@pytest.mark.parametrize("at", [0, 1, 2])
def test_decompose_padding_builds_and_replays(at):
    sch = Schedule(pad2d)
    block = sch.get_block("pad")
    fill = sch.decompose_padding(block, sch.get_loops(block)[at])
    assert sch.get(fill).name == "pad_pad_const"
    body = sch.get(block).body
    assert not any(type(n).__name__ == "Select" for n in [body.value])  # the copy has no condition left
    x = np.random.default_rng(at).random((6, 10, 10), dtype=np.float32)
    y = np.zeros((6, 14, 13), np.float32)
    build(sch.mod["main"])(x, y)
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (2, 2), (1, 2)), constant_values=-7))
    again = Schedule.from_trace(Trace.from_json(sch.trace.as_json()), pad2d)
    from_text = Schedule(pad2d)
    apply_python(sch.trace.as_python(), from_text)
    for other in (again, from_text):
        assert str(other.mod["main"]) == str(sch.mod["main"])


def test_trivial_padding_is_not_decomposed():
    @T.prim_func
    def copy(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("pad"):
                vi = T.axis.remap("S", [i])
                y[vi] = T.if_then_else(0 <= vi and vi < 8, x[vi], T.float32(0))

    sch = Schedule(copy)
    block = sch.get_block("pad")
    (i,) = sch.get_loops(block)
    assert not sch.can_decompose_padding(block, i)
    with pytest.raises(ScheduleError, match="decompose_padding: block 'pad' has no padding to decompose"):
        sch.decompose_padding(block, i)


def test_a_condition_that_is_not_a_bound_is_refused():
    @T.prim_func
    def odd(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("pad"):
                vi = T.axis.remap("S", [i])
                y[vi] = T.if_then_else(vi % 2 == 0, x[vi], T.float32(0))

    sch = Schedule(odd)
    block = sch.get_block("pad")
    with pytest.raises(ScheduleError, match="is not a constant bound on an iteration variable"):
        sch.decompose_padding(block, sch.get_loops(block)[0])
