"""Tracing support for ``Module.export``: values flowing through ``forward`` during export."""
from __future__ import annotations

import numpy as np

from ..graph import ops as G
from ..graph.builder import BlockBuilder
from ..ir.graph_expr import GraphExpr


class Traced:
    """A graph value plus the builder it belongs to; parameters (numpy arrays) become graph params."""

    def __init__(self, value: GraphExpr, tracer: "Tracer"):
        self.value = value
        self.tracer = tracer

    @property
    def shape(self):
        return self.value.type.shape

    @property
    def dtype(self):
        return self.value.type.dtype

    def emit(self, op, *args, **attrs) -> "Traced":
        graph_args = [self.value] + [self.tracer.param(a) for a in args if a is not None]
        return Traced(self.tracer.bb.emit(op(*graph_args, **attrs)), self.tracer)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return Traced(self.tracer.bb.emit(G.reshape(self.value, shape)), self.tracer)


class Tracer:
    def __init__(self, bb: BlockBuilder, param_vars: dict):
        self.bb = bb
        self.param_vars = param_vars  # id(array) -> GraphVar

    def param(self, a):
        if isinstance(a, Traced):
            return a.value
        if isinstance(a, np.ndarray):
            try:
                return self.param_vars[id(a)]
            except KeyError:
                raise ValueError("forward used an array that is not a registered parameter of the model; "
                                 "assign it as a layer attribute so it is exported") from None
        raise TypeError(f"cannot use {type(a).__name__} in a traced forward")
