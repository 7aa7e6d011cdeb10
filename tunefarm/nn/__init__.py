"""``tunefarm.nn``: PyTorch-style model definitions that export to tunefarm's graph IR."""
from . import spec
from .layers import Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential
from .module import Module

__all__ = ["Conv2d", "Flatten", "Linear", "MaxPool2d", "Module", "ReLU", "Sequential", "spec"]
