"""A trace's Python text replays as data: only ``sch.<primitive>(literals / earlier results)`` lines run."""
from __future__ import annotations

import pytest

from tunefarm.schedule import Schedule
from tunefarm.schedule.trace_python import apply_python
from tunefarm.script import T


@T.prim_func
def copy(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]


def test_python_trace_replays_like_the_original():
    sch = Schedule(copy)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 4])
    replayed = Schedule(copy)
    apply_python(str(sch.trace).splitlines(), replayed)
    assert replayed.trace.as_python() == sch.trace.as_python()
    assert str(replayed.mod["main"]) == str(sch.mod["main"])


@pytest.mark.parametrize("line, reason", [
    ("import os", "one call per line"),
    ("os.system('true')", "sch.<primitive>"),
    ("sch.__class__()", "sch.<primitive>"),
    ("b0 = sch.get_block(name=__import__('os').getcwd())", "not a literal or an earlier result"),
    ("sch.compute_inline(block=b9)", "not a literal or an earlier result"),
    ("sch.get_block(**{'name': 'B'})", r"\*\* arguments"),
    ("b0 = sch.get_block(", "not Python"),
])
def test_anything_but_a_primitive_call_on_literals_is_refused(line, reason):
    with pytest.raises(ValueError, match=reason):
        apply_python([line], Schedule(copy))
