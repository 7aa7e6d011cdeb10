"""The layers the course's models use: Linear, ReLU, Conv2d, MaxPool2d, Flatten, Sequential."""
from __future__ import annotations

import math

import numpy as np

from . import functional as F
from .module import Module


def _init(shape, fan_in: int, rng) -> np.ndarray:
    """PyTorch's default: uniform in +-1/sqrt(fan_in) (``seed=None`` draws fresh weights, like PyTorch)."""
    bound = 1.0 / math.sqrt(max(1, fan_in))
    return rng.uniform(-bound, bound, size=shape).astype("float32")


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, seed: int | None = None):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.in_features, self.out_features = in_features, out_features
        self.weight = _init((out_features, in_features), in_features, rng)
        self.bias = _init((out_features,), in_features, rng) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class Flatten(Module):
    def forward(self, x):
        return F.flatten(x)


class Conv2d(Module):
    """NCHW convolution with an OIHW ``weight``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, bias: bool = True,
                 seed: int | None = None):
        super().__init__()
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        rng = np.random.default_rng(seed)
        fan_in = in_channels * kh * kw
        self.stride, self.padding = stride, padding
        self.weight = _init((out_channels, in_channels, kh, kw), fan_in, rng)
        self.bias = _init((out_channels,), fan_in, rng) if bias else None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)


class MaxPool2d(Module):
    def __init__(self, kernel_size=2, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class Sequential(Module):
    """Layers applied in order; indexable and iterable like PyTorch's."""

    def __init__(self, *layers: Module):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)

    def __getitem__(self, i):
        layers = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*layers[i])
        return layers[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, x):
        for layer in self._modules.values():
            x = layer(x)
        return x
