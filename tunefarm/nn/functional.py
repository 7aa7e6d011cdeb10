"""Ops that run eagerly on numpy arrays and record graph ops on traced tensors.

Layers are written once against these functions: called with numpy arrays a model computes its reference
output; during ``export`` the same ``forward`` builds the graph.
"""
from __future__ import annotations

import numpy as np

from ..graph import ops as G
from .tracing import Traced


def linear(x, weight, bias=None):
    if isinstance(x, Traced):
        return x.emit(G.linear, weight, bias)
    y = x @ weight.T
    return y + bias if bias is not None else y


def relu(x):
    if isinstance(x, Traced):
        return x.emit(G.relu)
    return np.maximum(x, 0).astype(x.dtype, copy=False)


def add(a, b):
    if isinstance(a, Traced):
        return a.emit(G.add, b)
    return a + b


def flatten(x):
    if isinstance(x, Traced):
        return x.emit(G.flatten)
    return x.reshape(x.shape[0], -1)


def conv2d(x, weight, bias=None, stride=1, padding=0):
    if isinstance(x, Traced):
        y = x.emit(G.conv2d, weight, strides=stride, padding=padding)
        if bias is not None:
            bb = x.tracer.bb
            b = bb.emit(G.reshape(x.tracer.param(bias), (bias.shape[0], 1, 1)))
            y = Traced(bb.emit(G.add(y.value, b)), x.tracer)
        return y
    return G.numpy_conv2d(x, weight, bias, stride, padding)


def max_pool2d(x, pool_size=2, stride=None, padding=0):
    stride = pool_size if stride is None else stride
    if isinstance(x, Traced):
        return x.emit(G.max_pool2d, pool_size=pool_size, strides=stride, padding=padding)
    return G.numpy_max_pool2d(x, pool_size, stride, padding)
