"""The course's models, ready to export: the FashionMNIST MLP first, and a small convnet for the conv path."""
from __future__ import annotations

import numpy as np

from .layers import Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential


def mlp(params: dict | None = None) -> Sequential:
    """784 -> 128 -> ReLU -> 10. ``params`` in the course's naming (``w0``, ``b0``, ``w1``, ``b1``)."""
    model = Sequential(Linear(784, 128), ReLU(), Linear(128, 10))
    if params is not None:
        model[0].weight, model[0].bias = params["w0"], params["b0"]
        model[2].weight, model[2].bias = params["w1"], params["b1"]
    return model


def mlp_reference(x: np.ndarray, params: dict) -> np.ndarray:
    """The course's numpy MLP: ``relu(x @ w0.T + b0) @ w1.T + b1``."""
    return np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]


def convnet() -> Sequential:
    """conv(1->8, 3x3, pad 1) - ReLU - maxpool 2 - conv(8->16, 3x3) - ReLU - maxpool 2 - flatten - 64 - 10
    on 1x28x28 images (seeded random weights, for trying the conv path)."""
    return Sequential(Conv2d(1, 8, 3, padding=1, seed=1), ReLU(), MaxPool2d(2),
                      Conv2d(8, 16, 3, seed=2), ReLU(), MaxPool2d(2), Flatten(),
                      Linear(16 * 6 * 6, 64, seed=3), ReLU(), Linear(64, 10, seed=4))
