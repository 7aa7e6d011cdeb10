"""Fixtures of the course-note tests: the weights file the notes open, an image, numpy's MLP as reference."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from tvm_note_helpers import mlp_weights


@pytest.fixture()
def in_course_dir(tmp_path, monkeypatch):
    """A working directory holding ``fasionmnist_mlp_params.pkl`` (seeded weights), as the notes expect."""
    weights = mlp_weights()
    with open(tmp_path / "fasionmnist_mlp_params.pkl", "wb") as f:
        pickle.dump(weights, f)
    monkeypatch.chdir(tmp_path)
    return weights


@pytest.fixture()
def img():
    """A 28x28 image with values in [0, 1), like the notes' FashionMNIST sample after ``ToTensor``."""
    return np.random.default_rng(3).random((28, 28), dtype=np.float32)
