"""Fixtures of the graph tests: the course's MLP weights, numpy references, registered env functions, a
compiled one-op graph."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.graph import BlockBuilder, ops, var
from tunefarm.graph.params import course_mlp_params


@pytest.fixture(scope="session")
def mlp_params():
    """The course's real FashionMNIST MLP weights (w0, b0, w1, b1), as shipped with tunefarm (sha256 checked)."""
    return course_mlp_params()


@pytest.fixture()
def env_funcs():
    """``env.linear`` / ``env.relu`` registered with numpy implementations (destination passing)."""
    import tunefarm

    calls = []

    @tunefarm.register_func("env.linear", override=True)
    def np_linear(x, w, b, out):
        calls.append("env.linear")
        np.matmul(x, w.T, out=out)
        np.add(out, b, out=out)

    @tunefarm.register_func("env.relu", override=True)
    def np_relu(x, out):
        calls.append("env.relu")
        np.maximum(x, 0, out=out)

    return calls


@pytest.fixture(scope="module")
def relu_exe():
    """``relu`` over a 3 x 4 float32 input, compiled: the smallest graph executable (one per test module)."""
    x = var("x", (3, 4))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(ops.relu(x)))
        bb.emit_func_output(gv)
    return tunefarm.compile(bb.get())
