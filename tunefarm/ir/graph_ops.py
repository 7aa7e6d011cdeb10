"""Graph ops: the high-level ops (``R.nn.linear``, ``R.nn.relu``, ...), their type rules, and the two kernel-call
forms -- everything needed to build a well-typed graph ``Call``.

Each high-level op has one entry in ``TYPE_RULES``: argument types -> result type, raising ``ShapeError`` for
operands that do not fit. Building a call checks it at once, so a parser, a model tracer or a front end never
holds an ill-typed graph. What an op *does* (its ``te`` lowering and its numpy evaluation) is the graph layer's
(``tunefarm.graph.ops``); adding an op means a type rule here and a lowering there.

``call_tir(func, args, out)`` calls a PrimFunc of the same module and ``call_dps_packed(name, args, out)``
a PrimFunc by name or a registered Python function; both use destination passing.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .expr import Var
from .graph_expr import Call, GraphExpr, TensorType


class ShapeError(ValueError):
    """Operands of a graph op do not fit together."""


def _same(a, b) -> bool:
    return a is b if isinstance(a, Var) or isinstance(b, Var) else a == b


def _check(cond: bool, op: str, msg: str) -> None:
    if not cond:
        raise ShapeError(f"{op}: {msg}")


def _pair(v, op: str = "op", what: str = "argument") -> tuple[int, int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, (int, np.integer)) for x in v):
        return int(v[0]), int(v[1])
    if isinstance(v, (tuple, list)) and len(v) == 4 and all(isinstance(x, int) for x in v) \
            and v[0] == v[2] and v[1] == v[3]:  # TVM's (top, left, bottom, right) with symmetric padding
        return v[0], v[1]
    raise ShapeError(f"{op}: {what} must be an int or a pair of ints, got {v!r}")


# ----------------------------------------------------------------------------------------------- type rules
def _infer_matmul(ts, attrs):
    _check(len(ts) == 2, "matmul", f"takes 2 operands, got {len(ts)}")
    a, b = ts
    _check(a.ndim == 2 and b.ndim == 2, "matmul", f"expects 2-D operands, got {a} and {b}")
    _check(_same(a.shape[1], b.shape[0]), "matmul", f"inner dims differ: {a} @ {b}")
    _check(a.dtype == b.dtype, "matmul", f"operand dtypes differ: {a.dtype} and {b.dtype}")
    return TensorType((a.shape[0], b.shape[1]), a.dtype)


def _infer_dense(ts, attrs):
    _check(len(ts) in (2, 3), "linear", f"takes x, weight and an optional bias, got {len(ts)} operands")
    x, w = ts[0], ts[1]
    _check(x.ndim == 2 and w.ndim == 2, "linear", f"expects 2-D x and weight, got {x} and {w}")
    _check(_same(x.shape[1], w.shape[1]), "linear", f"x has {x.shape[1]} features, weight expects {w.shape[1]}")
    _check(x.dtype == w.dtype, "linear", f"x is {x.dtype} but weight is {w.dtype}")
    if len(ts) == 3:
        _check(ts[2].ndim == 1 and _same(ts[2].shape[0], w.shape[0]), "linear",
               f"bias {ts[2]} does not match weight {w}")
    return TensorType((x.shape[0], w.shape[0]), x.dtype)


def _broadcast(a: TensorType, b: TensorType, op: str) -> TensorType:
    _check(a.dtype == b.dtype, op, f"operand dtypes differ: {a.dtype} and {b.dtype}")
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
    _check(len(ts) == 2, "conv2d", f"takes data and weight, got {len(ts)} operands")
    x, w = ts
    _check(x.ndim == 4 and w.ndim == 4, "conv2d", f"expects NCHW data and OIHW weight, got {x} and {w}")
    _check(_same(x.shape[1], w.shape[1]), "conv2d", f"data has {x.shape[1]} channels, weight expects {w.shape[1]}")
    sh, sw = _pair(attrs.get("strides", 1), "conv2d", "strides")
    ph, pw = _pair(attrs.get("padding", 0), "conv2d", "padding")
    _check(all(isinstance(d, int) for d in x.shape[2:] + w.shape[2:]), "conv2d", "spatial dims must be static")
    oh = (x.shape[2] + 2 * ph - w.shape[2]) // sh + 1
    ow = (x.shape[3] + 2 * pw - w.shape[3]) // sw + 1
    _check(oh > 0 and ow > 0, "conv2d", f"kernel {w.shape[2:]} does not fit input {x.shape[2:]}")
    return TensorType((x.shape[0], w.shape[0], oh, ow), x.dtype)


def _infer_pool(ts, attrs):
    _check(len(ts) == 1, "max_pool2d", f"takes one operand, got {len(ts)}")
    (x,) = ts
    _check(x.ndim == 4, "max_pool2d", f"expects NCHW data, got {x}")
    _check(all(isinstance(d, int) for d in x.shape[2:]), "max_pool2d", "spatial dims must be static")
    kh, kw = _pair(attrs.get("pool_size", 2), "max_pool2d", "pool_size")
    sh, sw = _pair(attrs.get("strides") or attrs.get("pool_size", 2), "max_pool2d", "strides")
    ph, pw = _pair(attrs.get("padding", 0), "max_pool2d", "padding")
    oh = (x.shape[2] + 2 * ph - kh) // sh + 1
    ow = (x.shape[3] + 2 * pw - kw) // sw + 1
    _check(oh > 0 and ow > 0, "max_pool2d", f"window {kh}x{kw} does not fit input {x.shape[2:]}")
    return TensorType((x.shape[0], x.shape[1], oh, ow), x.dtype)


def _infer_flatten(ts, attrs):
    (x,) = ts
    _check(x.ndim >= 1, "flatten", "needs at least one dimension")
    rest = 1
    for d in x.shape[1:]:
        _check(isinstance(d, int), "flatten", "only the batch dim may be symbolic")
        rest *= d
    return TensorType((x.shape[0], rest), x.dtype)


def _reshape_target(x: TensorType, shape) -> tuple:
    shape = list(shape)
    holes = [i for i, d in enumerate(shape) if isinstance(d, int) and d == -1]
    _check(len(holes) <= 1, "reshape", f"at most one -1 in {tuple(shape)}")
    if holes:
        _check(x.is_static(), "reshape", "-1 can only be inferred for a static input shape")
        known = math.prod(d for i, d in enumerate(shape) if i != holes[0])
        _check(known > 0 and math.prod(x.shape) % known == 0, "reshape", f"cannot reshape {x.shape} to {tuple(shape)}")
        shape[holes[0]] = math.prod(x.shape) // known
    return tuple(shape)


def _infer_reshape(ts, attrs):
    (x,) = ts
    shape = _reshape_target(x, attrs["shape"])
    for d in shape:
        _check(isinstance(d, Var) or (isinstance(d, int) and d >= 0), "reshape", f"bad dimension {d!r}")
    if x.is_static() and all(isinstance(d, int) for d in shape):
        _check(math.prod(x.shape) == math.prod(shape), "reshape", f"cannot reshape {x.shape} to {shape}")
    return TensorType(shape, x.dtype)


def _axes(x: TensorType, axes) -> tuple:
    if axes is None:
        return tuple(range(x.ndim))[::-1]
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    _check(sorted(axes) == list(range(x.ndim)), "permute_dims", f"axes {axes} are not a permutation of {x.ndim} dims")
    return axes


def _infer_permute(ts, attrs):
    (x,) = ts
    return TensorType(tuple(x.shape[a] for a in _axes(x, attrs.get("axes"))), x.dtype)


# (argument types, attrs) -> result type, per high-level op
TYPE_RULES: dict[str, Callable] = {
    "matmul": _infer_matmul,
    "dense": _infer_dense,
    "add": lambda ts, attrs: _broadcast(ts[0], ts[1], "add"),
    "relu": lambda ts, attrs: ts[0],
    "conv2d": _infer_conv2d,
    "max_pool2d": _infer_pool,
    "flatten": _infer_flatten,
    "reshape": _infer_reshape,
    "permute_dims": _infer_permute,
}
ALIASES = {"linear": "dense", "transpose": "permute_dims"}


def make_call(op: str, *args: GraphExpr, **attrs) -> Call:
    """A high-level op call with its result type inferred (raises ShapeError on bad operands)."""
    op = ALIASES.get(op, op)
    if op not in TYPE_RULES:
        raise ValueError(f"unknown graph op {op!r}; known: {sorted(TYPE_RULES)}")
    for i, a in enumerate(args):
        if not isinstance(a, GraphExpr):
            raise TypeError(f"{op}: operand {i} must be a graph value (a var or a constant), got {type(a).__name__}")
    types = [a.type for a in args]
    if op == "reshape":
        attrs["shape"] = _reshape_target(types[0], attrs["shape"])
    if op == "permute_dims":
        attrs["axes"] = _axes(types[0], attrs.get("axes"))
    return Call(op, args, attrs, TYPE_RULES[op](types, attrs))


# ----------------------------------------------------------------------------------------------- user-facing
def matmul(a, b, out_dtype=None):
    if out_dtype not in (None, "void", "", getattr(a, "dtype", None)):
        raise ShapeError(f"matmul: out_dtype {out_dtype!r} differs from the operands' dtype (no mixed precision)")
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


def permute_dims(x, axes=None):
    return make_call("permute_dims", x, axes=None if axes is None else tuple(axes))


def _out_type(out) -> TensorType:
    if isinstance(out, TensorType):
        return out
    raise TypeError(f"the output of a kernel call must be a TensorType (R.Tensor), got {type(out).__name__}")


def call_tir(func: str, args, out) -> Call:
    """``R.call_tir(func, args, out_sinfo)``: destination-passing call of the module's PrimFunc ``func``."""
    if not isinstance(func, str):
        raise TypeError(f"call_tir names its PrimFunc by its name in the module, got {type(func).__name__}")
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    return Call("call_tir", args, {"func": func}, _out_type(out))


def call_dps_packed(func: str, args, out) -> Call:
    """``R.call_dps_packed("env.name", args, out_sinfo)``: a registered Python function or a PrimFunc by name."""
    if not isinstance(func, str):
        raise TypeError(f"call_dps_packed names its callee with a string, got {type(func).__name__}")
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    return Call("call_dps_packed", args, {"func": func}, _out_type(out))


__all__ = ["ShapeError", "TYPE_RULES", "add", "call_dps_packed", "call_tir", "conv2d", "dense", "flatten", "linear",
           "make_call", "matmul", "max_pool2d", "permute_dims", "relu", "reshape"]
