"""``relax.Var`` and ``relax.const`` in TVM's spellings, including the older ``DynTensorType`` ones."""
from __future__ import annotations

import abc

import numpy as np

from ...graph import builder
from ...ir.graph_expr import GraphVar, TensorType


class DynTensorType:
    """The older Relax type ``DynTensorType(ndim, dtype)``: a rank and a dtype (the shape is given apart)."""

    __slots__ = ("ndim", "dtype")

    def __init__(self, ndim: int = -1, dtype: str = "float32"):
        if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < -1:
            raise ValueError(f"DynTensorType: ndim is an integer >= -1, got {ndim!r}")
        self.ndim, self.dtype = ndim, dtype

    def __repr__(self) -> str:
        return f"DynTensorType(ndim={self.ndim}, dtype={self.dtype!r})"


def _tensor_type(shape, dyn: DynTensorType) -> TensorType:
    shape = tuple(shape)
    if dyn.ndim not in (-1, len(shape)):
        raise ValueError(f"shape {shape} has {len(shape)} dims but the DynTensorType says {dyn.ndim}")
    return TensorType(shape, dyn.dtype)


class Var(abc.ABC):
    """``relax.Var(name, relax.TensorStructInfo(shape, dtype))``, or the older ``relax.Var(name, shape,
    relax.DynTensorType(ndim, dtype))``: a graph variable. Every graph variable is a ``relax.Var``
    (``isinstance`` holds for what ``BlockBuilder`` emits too)."""

    def __new__(cls, name_hint: str, struct_info=None, type_annotation=None):
        if isinstance(struct_info, TensorType) and type_annotation is None:
            return GraphVar(name_hint, struct_info)
        if isinstance(type_annotation, DynTensorType) and isinstance(struct_info, (tuple, list)):
            return GraphVar(name_hint, _tensor_type(struct_info, type_annotation))
        raise TypeError(f"relax.Var({name_hint!r}, ...) takes relax.TensorStructInfo(shape, dtype), or a shape and "
                        f"a relax.DynTensorType; got {type(struct_info).__name__} and "
                        f"{type(type_annotation).__name__}")


Var.register(GraphVar)


def const(value, dtype=None):
    """``relax.const(array, dtype_or_struct_info)``; a ``DynTensorType`` gives the dtype (and checks the rank)."""
    if isinstance(dtype, DynTensorType):
        arr = np.asarray(value)
        return builder.const(arr, _tensor_type(arr.shape, dtype))
    return builder.const(value, dtype)


__all__ = ["DynTensorType", "Var", "const"]
