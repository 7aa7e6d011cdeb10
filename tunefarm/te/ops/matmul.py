"""Matrix products: ``matmul`` (A @ B), ``dense`` (x @ w.T + bias) and the fused ``dense_bias_relu``."""
from __future__ import annotations

from ..compute import compute, reduce_axis
from ..reduce import sum as te_sum
from ..tensor import Tensor
from .broadcast import broadcast_shapes, same_dim
from .elementwise import add, relu


def _check_tensor(x, what: str, ndim: int | None = None, min_ndim: int | None = None) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} must be a te Tensor, got {type(x).__name__}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{what} must be {ndim}-D, got shape {x.shape}")
    if min_ndim is not None and x.ndim < min_ndim:
        raise ValueError(f"{what} must have at least {min_ndim} dimensions, got shape {x.shape}")


def _check_reduce_dims(a, b, what: str) -> None:
    if not same_dim(a, b):
        raise ValueError(f"{what}: reduction dimensions differ ({a} vs {b}) or cannot be proven equal")


def matmul(A: Tensor, B: Tensor, name: str = "matmul") -> Tensor:
    """``A @ B`` for 2-D operands, or batched with numpy broadcasting of the leading dimensions."""
    _check_tensor(A, "matmul: A", min_ndim=2)
    _check_tensor(B, "matmul: B", min_ndim=2)
    _check_reduce_dims(A.shape[-1], B.shape[-2], f"matmul of {A.shape} and {B.shape}")
    k = reduce_axis((0, A.shape[-1]), name="k")
    if A.ndim == 2 and B.ndim == 2:
        return compute((A.shape[0], B.shape[1]), lambda i, j: te_sum(A[i, k] * B[k, j], axis=k), name=name)
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2])

    def batched(*idx):
        b, i, j = idx[:-2], idx[-2], idx[-1]

        def at(t, rows, cols):
            lead = b[len(b) - (t.ndim - 2):] if t.ndim > 2 else ()
            lead = tuple(0 if (isinstance(s, int) and s == 1) else x for s, x in zip(t.shape[:-2], lead))
            return t[lead + (rows, cols)]

        return te_sum(at(A, i, k) * at(B, k, j), axis=k)

    return compute(batch + (A.shape[-2], B.shape[-1]), batched, name=name)


def dense(x: Tensor, w: Tensor, bias: Tensor | None = None, name: str = "T_matmul_NT") -> Tensor:
    """``x @ w.T`` (+ ``bias``, broadcast over rows): x is (n, k), w is (m, k), the result (n, m)."""
    _check_tensor(x, "dense: x", ndim=2)
    _check_tensor(w, "dense: w", ndim=2)
    _check_reduce_dims(x.shape[1], w.shape[1], f"dense of x {x.shape} and w {w.shape}")
    k = reduce_axis((0, x.shape[1]), name="k")
    out = compute((x.shape[0], w.shape[0]), lambda i, j: te_sum(x[i, k] * w[j, k], axis=k), name=name)
    if bias is None:
        return out
    _check_tensor(bias, "dense: bias")
    if bias.ndim != 1 or not same_dim(bias.shape[0], w.shape[0]):
        raise ValueError(f"dense: bias must have shape ({w.shape[0]},), got {bias.shape}")
    return add(out, bias)


def dense_bias_relu(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    """``relu(x @ w.T + b)``: the MLP layer as one fused program (three blocks, two intermediates)."""
    return relu(dense(x, w, b))
