"""Fixtures of the graph tests: the course's MLP weights, numpy references, registered env functions."""
from __future__ import annotations

import numpy as np
import pytest

from graph_helpers import MLP_PARAMS


@pytest.fixture(scope="session")
def mlp_params():
    """The course's real FashionMNIST MLP weights (w0, b0, w1, b1), read through the safe unpickler."""
    from tunefarm.graph.params import MLP_PARAMS_SHA256, load_pickle_params

    assert MLP_PARAMS.exists(), f"the course's weights are expected at {MLP_PARAMS} (../shared/data)"
    return load_pickle_params(MLP_PARAMS, MLP_PARAMS_SHA256)


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
