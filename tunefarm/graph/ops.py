"""High-level graph ops (``R.nn.linear``, ``R.nn.relu``, ...): shape inference and their tensor expressions.

Each op is one entry of ``OPS``: a type rule (argument types -> result type, with clear errors for
mismatched shapes) and a ``te`` lowering used by ``Legalize``. Adding an op means adding one entry.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from ..ir.expr import Var
from .expr import Call, GraphExpr, TensorType


class ShapeError(ValueError):
    """Operands of a graph op do not fit together."""


def _same(a, b) -> bool:
    return a is b if isinstance(a, Var) or isinstance(b, Var) else a == b


def _check(cond: bool, op: str, msg: str) -> None:
    if not cond:
        raise ShapeError(f"{op}: {msg}")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@dataclasses.dataclass
class OpDef:
    infer: Callable  # (types, attrs) -> TensorType
    te: Callable  # (placeholders..., **attrs) -> te.Tensor


def _infer_matmul(ts, attrs):
    a, b = ts
    _check(a.ndim == 2 and b.ndim == 2, "matmul", f"expects 2-D operands, got {a} and {b}")
    _check(_same(a.shape[1], b.shape[0]), "matmul", f"inner dims differ: {a} @ {b}")
    return TensorType((a.shape[0], b.shape[1]), a.dtype)


def _infer_dense(ts, attrs):
    x, w = ts[0], ts[1]
    _check(x.ndim == 2 and w.ndim == 2, "linear", f"expects 2-D x and weight, got {x} and {w}")
    _check(_same(x.shape[1], w.shape[1]), "linear", f"x has {x.shape[1]} features, weight expects {w.shape[1]}")
    if len(ts) == 3:
        _check(ts[2].ndim == 1 and _same(ts[2].shape[0], w.shape[0]), "linear",
               f"bias {ts[2]} does not match weight {w}")
    return TensorType((x.shape[0], w.shape[0]), x.dtype)


def _broadcast(a: TensorType, b: TensorType, op: str) -> TensorType:
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + a.shape
    sb = (1,) * (n - b.ndim) + b.shape
    out = []
    for x, y in zip(sa, sb):
        if _same(x, y) or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not broadcast")
    return TensorType(out, a.dtype)


def _infer_conv2d(ts, attrs):
    x, w = ts
    _check(x.ndim == 4 and w.ndim == 4, "conv2d", f"expects NCHW data and OIHW weight, got {x} and {w}")
    _check(_same(x.shape[1], w.shape[1]), "conv2d", f"data has {x.shape[1]} channels, weight expects {w.shape[1]}")
    sh, sw = _pair(attrs.get("strides", 1))
    ph, pw = _pair(attrs.get("padding", 0))
    _check(all(isinstance(d, int) for d in x.shape[2:] + w.shape[2:]), "conv2d", "spatial dims must be static")
    oh = (x.shape[2] + 2 * ph - w.shape[2]) // sh + 1
    ow = (x.shape[3] + 2 * pw - w.shape[3]) // sw + 1
    return TensorType((x.shape[0], w.shape[0], oh, ow), x.dtype)


def _infer_pool(ts, attrs):
    (x,) = ts
    _check(x.ndim == 4, "max_pool2d", f"expects NCHW data, got {x}")
    kh, kw = _pair(attrs.get("pool_size", 2))
    sh, sw = _pair(attrs.get("strides", attrs.get("pool_size", 2)))
    ph, pw = _pair(attrs.get("padding", 0))
    oh = (x.shape[2] + 2 * ph - kh) // sh + 1
    ow = (x.shape[3] + 2 * pw - kw) // sw + 1
    return TensorType((x.shape[0], x.shape[1], oh, ow), x.dtype)


def _infer_flatten(ts, attrs):
    (x,) = ts
    rest = 1
    for d in x.shape[1:]:
        _check(isinstance(d, int), "flatten", "only the batch dim may be symbolic")
        rest *= d
    return TensorType((x.shape[0], rest), x.dtype)


def _infer_reshape(ts, attrs):
    (x,) = ts
    shape = tuple(attrs["shape"])
    if x.is_static() and all(isinstance(d, int) and d >= 0 for d in shape):
        import math

        _check(math.prod(x.shape) == math.prod(shape), "reshape", f"cannot reshape {x.shape} to {shape}")
    return TensorType(shape, x.dtype)


def _te_ops():
    from ..te import ops

    return ops


OPS: dict[str, OpDef] = {
    "matmul": OpDef(_infer_matmul, lambda a, b: _te_ops().matmul(a, b)),
    "dense": OpDef(_infer_dense, lambda x, w, b=None: _te_ops().dense(x, w, b)),
    "add": OpDef(lambda ts, attrs: _broadcast(ts[0], ts[1], "add"), lambda a, b: _te_ops().add(a, b)),
    "relu": OpDef(lambda ts, attrs: ts[0], lambda x: _te_ops().relu(x)),
    "conv2d": OpDef(_infer_conv2d, lambda x, w, strides=1, padding=0: _te_ops().conv2d(x, w, strides, padding)),
    "max_pool2d": OpDef(_infer_pool, lambda x, pool_size=2, strides=None, padding=0:
                        _te_ops().max_pool2d(x, pool_size, strides if strides is not None else pool_size, padding)),
    "flatten": OpDef(_infer_flatten, lambda x: _te_ops().flatten(x)),
    "reshape": OpDef(_infer_reshape, lambda x, shape: _te_ops().reshape(x, shape)),
}


def make_call(op: str, *args: GraphExpr, **attrs) -> Call:
    """A high-level op call with its result type inferred (raises ShapeError on bad operands)."""
    if op == "linear":
        op = "dense"
    if op not in OPS:
        raise ValueError(f"unknown graph op {op!r}; known: {sorted(OPS)}")
    types = [a.type for a in args]
    return Call(op, args, attrs, OPS[op].infer(types, attrs))


def matmul(a, b):
    return make_call("matmul", a, b)


def linear(x, w, b=None):
    return make_call("dense", x, w) if b is None else make_call("dense", x, w, b)


dense = linear


def add(a, b):
    return make_call("add", a, b)


def relu(x):
    return make_call("relu", x)


def conv2d(x, w, strides=1, padding=0):
    return make_call("conv2d", x, w, strides=strides, padding=padding)


def max_pool2d(x, pool_size=2, strides=None, padding=0):
    return make_call("max_pool2d", x, pool_size=pool_size, strides=strides if strides is not None else pool_size,
                     padding=padding)


def flatten(x):
    return make_call("flatten", x)


def reshape(x, shape):
    return make_call("reshape", x, shape=tuple(shape))
