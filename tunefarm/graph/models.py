"""The course's models, ready to export: the FashionMNIST MLP first."""
from __future__ import annotations

import numpy as np

from .. import nn


def mlp(params: dict | None = None) -> nn.Sequential:
    """784 -> 128 -> ReLU -> 10. ``params`` in the course's naming (``w0``, ``b0``, ``w1``, ``b1``)."""
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    if params is not None:
        model[0].weight, model[0].bias = params["w0"], params["b0"]
        model[2].weight, model[2].bias = params["w1"], params["b1"]
    return model


def mlp_reference(x: np.ndarray, params: dict) -> np.ndarray:
    """The course's numpy MLP: ``relu(x @ w0.T + b0) @ w1.T + b1``."""
    return np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]
