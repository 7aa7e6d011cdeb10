"""The models the command line knows by name, exported for one batch size.

``mlp`` is the course's FashionMNIST MLP (784 -> 128 -> ReLU -> 10) on the course's weights shipped with
tunefarm unless ``--params`` names others; ``convnet`` a small LeNet-style network on 1x28x28 images (seeded
random weights, for trying the conv path).
"""
from __future__ import annotations

import contextlib
import os
import pickle

from ..graph.params import find_mlp_params, load_params
from ..nn import spec
from ..nn.models import convnet, mlp
from .errors import CommandError

MODELS = ("mlp", "convnet")


@contextlib.contextmanager
def params_errors(path: str | None):
    """A weights file that cannot be read (not a pickle, a refused pickle, a broken .npz) as a one-line error."""
    try:
        yield
    except (ValueError, pickle.UnpicklingError, OSError) as e:
        raise CommandError(f"cannot read the weights {path!r}: {e}") from None


def check_params_file(path: str) -> None:
    """Refuse a weights file that is missing or unreadable, before anything else starts."""
    if not os.path.exists(path):
        raise CommandError(f"parameter file {path!r} does not exist")
    with params_errors(path):
        load_params(path)


def load_model(name: str, params_path: str | None, batch: int):
    """``(IRModule, params)`` of a named model for one batch size."""
    if batch < 1:
        raise CommandError(f"--batch must be at least 1, got {batch}")
    if name == "mlp":
        if params_path is not None and not os.path.exists(params_path):
            raise CommandError(f"parameter file {params_path!r} does not exist")
        with params_errors(params_path):
            params, _ = find_mlp_params(params_path)
        missing = {"w0", "b0", "w1", "b1"} - set(params)
        if missing:
            raise CommandError(f"the MLP parameters lack {sorted(missing)} (expected w0, b0, w1, b1)")
        return mlp(params).export({"forward": {"x": spec.Tensor((batch, 784), "float32")}})
    if name == "convnet":
        model = convnet()
        if params_path is not None:
            with params_errors(params_path):
                model.load_state_dict(load_params(params_path))
        return model.export({"forward": {"x": spec.Tensor((batch, 1, 28, 28), "float32")}})
    raise CommandError(f"unknown model {name!r}; known models: {', '.join(MODELS)}")
