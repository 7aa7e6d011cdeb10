"""``placeholder``, ``compute``, ``reduce_axis`` and ``var``: building tensor-expression programs."""
from __future__ import annotations

import inspect

from ..ir import expr as E
from ..ir.dtype import check_dtype
from ..ir.stmt import Range
from .reduce import Reduce
from .tensor import Axis, ComputeOp, PlaceholderOp, Tensor, TensorBuffer, dim_expr, normalize_shape
from .walk import iter_nodes


def var(name: str = "n", dtype: str = "int32") -> E.Var:
    """A symbolic scalar, e.g. a batch dimension: ``n = te.var("n", "int64")``."""
    return E.Var(name, dtype)


def size_var(name: str = "n", dtype: str = "int32") -> E.Var:
    return E.Var(name, dtype)


def placeholder(shape, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of the program."""
    return Tensor(shape, check_dtype(dtype), PlaceholderOp(name), name)


def _range(dom) -> Range:
    if isinstance(dom, Range):
        return dom
    if isinstance(dom, (tuple, list)) and len(dom) == 2:
        lo, hi = (dim_expr(x) if isinstance(x, int) else x for x in dom)
        dtype = "int64" if "int64" in (lo.dtype, hi.dtype) else "int32"
        lo = E.cast(dtype, lo)
        hi = E.cast(dtype, hi)
        return Range(lo, E.sub(hi, lo))
    raise TypeError(f"reduce_axis domain must be (lo, hi) or a Range, got {dom!r}")


def reduce_axis(dom, name: str = "rv") -> Axis:
    """A reduction axis over ``[lo, hi)``, used in index expressions and in ``te.sum(..., axis=k)``."""
    return Axis(name, _range(dom), "R")


def _axis_names(fcompute, ndim: int) -> list[str]:
    try:
        sig = inspect.signature(fcompute)
    except (TypeError, ValueError):
        return [f"i{n}" for n in range(ndim)]
    names = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return [f"i{n}" for n in range(ndim)]
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            names.append(p.name)
    if len(names) != ndim:
        raise ValueError(f"fcompute takes {len(names)} index arguments ({', '.join(names)}) but the output "
                         f"shape has {ndim} dimensions")
    return names


def compute(shape, fcompute, name: str = "compute", tag: str = "", attrs=None) -> Tensor:
    """The tensor whose element at index ``(i, j, ...)`` is ``fcompute(i, j, ...)``."""
    shape = normalize_shape(shape)
    axes = []
    for nm, s in zip(_axis_names(fcompute, len(shape)), shape):
        ext = dim_expr(s)
        axes.append(Axis(nm, Range(E.const(0, ext.dtype), ext), "S"))
    body = fcompute(*axes)
    if isinstance(body, (list, tuple)):
        raise TypeError(f"compute {name!r}: fcompute returned {len(body)} values; multi-output computes are "
                        "not supported (write one compute per output)")
    if isinstance(body, Tensor):
        raise TypeError(f"compute {name!r}: fcompute returned the tensor {body.name!r}, not an element; "
                        "index it (e.g. A[i, j])")
    body = E.as_expr(body)
    reduce_axes = body.axis if isinstance(body, Reduce) else ()
    inputs = _check_body(name, body, axes, reduce_axes)
    op = ComputeOp(name, axes, body, reduce_axes, inputs, tag, attrs)
    return Tensor(shape, body.dtype, op, name)


def _check_body(name: str, body, axes, reduce_axes) -> list[Tensor]:
    """Validate a compute body and return its input tensors in first-use order."""
    own = set(axes) | set(reduce_axes)
    inputs: dict = {}
    for n in iter_nodes(body):
        if isinstance(n, Reduce) and n is not body:
            raise ValueError(f"compute {name!r}: a reduction must be the whole body (e.g. te.sum(...)), "
                             "not part of a larger expression; use a second compute")
        if isinstance(n, Axis) and n not in own:
            kind = "reduce axis" if n.iter_type == "R" else "index variable of another compute"
            hint = " that this compute does not reduce over (pass it in axis=)" if n.iter_type == "R" else ""
            raise ValueError(f"compute {name!r}: uses {kind} {n.name!r}{hint}")
        if isinstance(n, E.BufferLoad):
            if not isinstance(n.buffer, TensorBuffer):
                raise TypeError(f"compute {name!r}: reads buffer {n.buffer.name!r} which is not a te tensor")
            inputs.setdefault(n.buffer.tensor, None)
    return list(inputs)
