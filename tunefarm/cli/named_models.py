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
REFUSED = 2  # exit status of input refused before anything started
# float32 values one sample holds on its way through each model (input, every layer's output)
ACTIVATION_FLOATS = {"mlp": 784 + 128 + 128 + 10,
                     "convnet": 784 + 2 * 8 * 28 * 28 + 8 * 14 * 14 + 2 * 16 * 12 * 12 + 16 * 6 * 6 * 2 + 64 * 2 + 10}


@contextlib.contextmanager
def params_errors(path: str | None, status: int = 1):
    """A weights file that cannot be read (not a pickle, a refused pickle, a broken .npz) as a one-line error."""
    try:
        yield
    except (ValueError, pickle.UnpicklingError, OSError) as e:
        raise CommandError(f"cannot read the weights {path!r}: {e}", status) from None


def expected_params(name: str) -> dict[str, tuple[tuple[int, ...], str]]:
    """Each weight a named model reads: its shape and dtype (the MLP in the course's naming)."""
    if name == "mlp":
        return {"w0": ((128, 784), "float32"), "b0": ((128,), "float32"), "w1": ((10, 128), "float32"),
                "b1": ((10,), "float32")}
    return {k: (tuple(v.shape), str(v.dtype)) for k, v in convnet().state_dict().items()}


def check_params_file(path: str, model: str) -> None:
    """Refuse a weights file that is missing or unreadable, or whose names, shapes or dtypes are not the
    model's, before anything else starts (the model would fail on them later with a traceback)."""
    if not os.path.exists(path):
        raise CommandError(f"parameter file {path!r} does not exist", REFUSED)
    with params_errors(path, REFUSED):
        params = load_params(path)
    want = expected_params(model)
    missing, unexpected = sorted(set(want) - set(params)), sorted(set(params) - set(want))
    if missing or unexpected:
        raise CommandError(f"the weights {path!r} do not fit the {model}: missing {missing}, unexpected "
                           f"{unexpected} (expected {', '.join(want)})", REFUSED)
    for key, (shape, dtype) in want.items():
        got = params[key]
        if tuple(got.shape) != shape or str(got.dtype) != dtype:
            raise CommandError(f"the weights {path!r} do not fit the {model}: {key} is {got.dtype}{list(got.shape)}, "
                               f"expected {dtype}{list(shape)}", REFUSED)


def check_batch(model: str, batch: int) -> None:
    """Refuse a batch size whose activations this host cannot allocate (numpy would fail after tuning)."""
    from ..tuning.limits import MEASURE_COPIES, host_memory_bytes  # on use: the package loads the tuning stack

    need = batch * ACTIVATION_FLOATS[model] * 4 * MEASURE_COPIES
    memory = host_memory_bytes()
    if memory is not None and need > memory:
        raise CommandError(f"--batch {batch} needs about {need / 2**30:.1f} GiB for the {model}'s activations "
                           f"but this host has {memory / 2**30:.1f} GiB available", REFUSED)


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
