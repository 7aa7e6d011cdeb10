"""Graph ops (``relax.op.*``): building a call (``tunefarm.ir.graph_ops``, re-exported here), and what each
high-level op becomes -- a ``te`` lowering used by ``LegalizeOps``, and a numpy evaluation used to fold ops whose
operands are all constants (a weight transposed or reshaped by the model's code is transposed once at compile
time, never per call).

Each high-level op has one entry in ``OPS`` here and one type rule in ``tunefarm.ir.graph_ops.TYPE_RULES``.
The numpy versions of ``conv2d`` and ``max_pool2d`` are also what ``tunefarm.nn`` layers compute eagerly.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..ir.graph_expr import Call, Constant
from ..ir.graph_ops import (ShapeError, add, call_dps_packed, call_tir, conv2d, dense, flatten, linear, make_call,
                            matmul, max_pool2d, permute_dims, relu, reshape)


@dataclasses.dataclass
class OpDef:
    te: Callable  # (placeholders..., **attrs) -> te.Tensor
    numpy: Callable  # (arrays..., **attrs) -> np.ndarray (constant folding)


def _te():
    """The te op library, imported on first lowering (see the package docstring: loading an executable imports
    ``tunefarm.graph`` and none of the compiler)."""
    from ..te import ops  # on use: see the docstring

    return ops


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def numpy_conv2d(x, weight, bias=None, strides=1, padding=0):
    """NCHW ``x`` convolved with OIHW ``weight`` (plus ``bias`` per output channel), in numpy."""
    sh, sw = _pair(strides)
    ph, pw = _pair(padding)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, w = xp.shape
    o, _, kh, kw = weight.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, o, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
            out += np.einsum("nchw,oc->nohw", patch, weight[:, :, i, j])
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def numpy_max_pool2d(x, pool_size=2, strides=None, padding=0):
    """NCHW max pooling in numpy (``strides`` defaults to the window; padding never wins the max)."""
    kh, kw = _pair(pool_size)
    sh, sw = _pair(pool_size if strides is None else strides)
    ph, pw = _pair(padding)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
    n, c, h, w = xp.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.full((n, c, oh, ow), -np.inf, dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out = np.maximum(out, xp[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw])
    return out


OPS: dict[str, OpDef] = {
    "matmul": OpDef(lambda a, b: _te().matmul(a, b), lambda a, b: a @ b),
    "dense": OpDef(lambda x, w, b=None: _te().dense(x, w, b),
                   lambda x, w, b=None: x @ w.T if b is None else x @ w.T + b),
    "add": OpDef(lambda a, b: _te().add(a, b), lambda a, b: a + b),
    "relu": OpDef(lambda x: _te().relu(x), lambda x: np.maximum(x, 0).astype(x.dtype)),
    "conv2d": OpDef(lambda x, w, strides=1, padding=0: _te().conv2d(x, w, strides, padding),
                    lambda x, w, strides=1, padding=0: numpy_conv2d(x, w, None, strides, padding)),
    "max_pool2d": OpDef(lambda x, pool_size=2, strides=None, padding=0:
                        _te().max_pool2d(x, pool_size, strides if strides is not None else pool_size, padding),
                        numpy_max_pool2d),
    "flatten": OpDef(lambda x: _te().flatten(x), lambda x: x.reshape(x.shape[0], -1)),
    "reshape": OpDef(lambda x, shape: _te().reshape(x, shape), lambda x, shape: x.reshape(shape)),
    "permute_dims": OpDef(lambda x, axes=None: _te().transpose(x, axes), lambda x, axes=None: np.transpose(x, axes)),
}


def fold(call: Call) -> Constant | None:
    """The value of a high-level op whose operands are all constants (None when it is not foldable)."""
    op = OPS.get(call.op)
    if op is None or not call.args or not all(isinstance(a, Constant) for a in call.args):
        return None
    value = np.ascontiguousarray(op.numpy(*[a.data for a in call.args], **call.attrs)).astype(call.type.dtype)
    if tuple(value.shape) != tuple(call.type.shape):  # pragma: no cover - the type rule and numpy disagree
        raise AssertionError(f"folding {call.op} gave shape {value.shape}, expected {call.type.shape}")
    return Constant(value)


__all__ = ["OPS", "ShapeError", "add", "call_dps_packed", "call_tir", "conv2d", "dense", "flatten", "fold", "linear",
           "make_call", "matmul", "max_pool2d", "numpy_conv2d", "numpy_max_pool2d", "permute_dims", "relu",
           "reshape"]
