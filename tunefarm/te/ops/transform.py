"""Layout operators: ``reshape``, ``flatten`` and ``transpose`` (numpy semantics, row-major order)."""
from __future__ import annotations

import math

from ...ir import expr as E
from ..compute import compute
from ..tensor import Tensor, dim_expr, normalize_shape
from .broadcast import same_dim


def _check(x, what: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: expected a te Tensor, got {type(x).__name__}")


def _prod(dims):
    """Product of shape entries (an int when all are constant)."""
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)
    out = E.const(1, "int32")
    for d in dims:
        out = E.mul(out, dim_expr(d))
    return out


def _infer_minus_one(x: Tensor, newshape) -> tuple:
    newshape = list(newshape)
    holes = [n for n, d in enumerate(newshape) if isinstance(d, int) and d == -1]
    if len(holes) > 1:
        raise ValueError(f"reshape: at most one -1 in the new shape, got {tuple(newshape)}")
    if holes:
        known = [d for n, d in enumerate(newshape) if n != holes[0]]
        total = _prod(x.shape)
        rest = _prod(known)
        if not (isinstance(total, int) and isinstance(rest, int)):
            raise ValueError("reshape: -1 can only be inferred for constant shapes; give the symbolic extent")
        if rest == 0 or total % rest:
            raise ValueError(f"reshape: cannot reshape {x.shape} into {tuple(newshape)}")
        newshape[holes[0]] = total // rest
    return normalize_shape(newshape)


def reshape(x: Tensor, newshape, name: str = "T_reshape") -> Tensor:
    """``x.reshape(newshape)``; one entry may be -1. Leading dimensions kept as they are stay symbolic."""
    _check(x, "reshape")
    newshape = _infer_minus_one(x, newshape)
    old_total, new_total = _prod(x.shape), _prod(newshape)
    if isinstance(old_total, int) and isinstance(new_total, int) and old_total != new_total:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({old_total} elements) into {newshape} "
                         f"({new_total} elements)")
    keep = 0
    while keep < min(x.ndim, len(newshape)) and same_dim(x.shape[keep], newshape[keep]):
        keep += 1
    rest_in, rest_out = x.shape[keep:], newshape[keep:]

    def f(*idx):
        lead = list(idx[:keep])
        linear = E.const(0, "int32")
        for i, d in zip(idx[keep:], rest_out):
            linear = E.add(E.mul(linear, dim_expr(d)), i)
        src = []
        for n, d in enumerate(rest_in):
            stride = _prod(rest_in[n + 1:])
            q = linear if (isinstance(stride, int) and stride == 1) else E.floordiv(linear, dim_expr(stride))
            src.append(q if n == 0 else E.floormod(q, dim_expr(d)))
        return x[tuple(lead + src)]

    return compute(newshape, f, name=name)


def flatten(x: Tensor, name: str = "T_flatten") -> Tensor:
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...), keeping a symbolic batch dimension N."""
    _check(x, "flatten")
    if x.ndim < 1:
        raise ValueError("flatten: needs at least one dimension")
    return reshape(x, (x.shape[0], _prod(x.shape[1:])), name=name)


def transpose(x: Tensor, axes=None, name: str = "T_transpose") -> Tensor:
    """``numpy.transpose(x, axes)``: axes default to reversed order; negative axes count from the end."""
    _check(x, "transpose")
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(a + x.ndim if a < 0 else a for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} dimensions")
    inverse = [axes.index(d) for d in range(x.ndim)]
    return compute(tuple(x.shape[a] for a in axes), lambda *idx: x[tuple(idx[p] for p in inverse)], name=name)
