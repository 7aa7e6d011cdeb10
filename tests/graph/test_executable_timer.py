"""``Executable.time_evaluator``: timing a compiled model the way a caller runs it (what the course's
``vm.module.time_evaluator("main", dev, number=100)`` measures)."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.graph import BlockBuilder, ops, var
from tunefarm.runtime.evaluator import BenchmarkResult, time_python_calls


def relu_then(func_name=None):
    x = var("x", (4,))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(ops.relu(x))
            if func_name:
                y = bb.emit(ops.call_dps_packed(func_name, [y], y.type))
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    return tunefarm.compile(bb.get())


def test_a_graph_executable_is_timed_call_by_call():
    calls = []

    @tunefarm.register_func("test.timer.negate", override=True)
    def negate(a, out):
        calls.append(1)
        np.negative(a, out=out)

    exe = relu_then("test.timer.negate")
    assert exe.kind == "graph"
    x = np.array([-1, 2, -3, 4], "float32")
    result = exe.time_evaluator(number=7, repeat=3)(x)
    assert isinstance(result, BenchmarkResult) and len(result.results) == 3 and result.number == 7
    assert len(calls) == 1 + 1 + 7 * 3  # the checking call, one warm-up, then the timed ones
    assert result.mean > 0 and result.min <= result.mean <= result.max


def test_a_native_executable_reuses_one_output_and_number_grows_to_min_repeat_ms():
    exe = relu_then()
    assert exe.kind == "native"
    x = np.array([-1, 2, -3, 4], "float32")
    result = exe.time_evaluator(number=1, repeat=2, min_repeat_ms=5.0)(x)
    assert result.number > 1 and all(r > 0 for r in result.results)
    with pytest.raises(TypeError, match="takes 1 input"):
        exe.time_evaluator()(x, x)
    with pytest.raises(ValueError, match="number and repeat must be >= 1"):
        time_python_calls(lambda: None, number=0)
    with pytest.raises(ValueError, match="min_repeat_ms must be >= 0"):
        time_python_calls(lambda: None, min_repeat_ms=-1)
