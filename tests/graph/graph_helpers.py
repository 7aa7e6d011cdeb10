"""Shared helpers of the graph tests (a uniquely named module: every test area has its own conftest)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tunefarm.graph.params import COURSE_NPZ

ROOT = Path(__file__).resolve().parents[2]
MLP_PARAMS = COURSE_NPZ  # the course's weights as tunefarm ships them


def numpy_mlp(x, p):
    """The course's numpy MLP: ``relu(x @ w0.T + b0) @ w1.T + b1``."""
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
