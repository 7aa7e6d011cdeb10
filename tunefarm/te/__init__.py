"""Tensor expressions: describe a computation elementwise, then ``create_prim_func`` it into TensorIR.

The course's spelling works unchanged::

    A = te.placeholder((128, 128), name="A", dtype="float32")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    func = te.create_prim_func([A, B, C])

``tunefarm.te.ops`` is the operator library (matmul, dense, broadcast add, relu, conv2d, ...).
"""
from . import ops
from .compute import compute, placeholder, reduce_axis, size_var, var
from .create_prim_func import create_prim_func
from .flop import estimate_flop
from .intrin import (abs, all, any, cast, ceil, const, erf, exp, floor, floordiv, floormod, if_then_else, log,
                     power, round, sigmoid, sqrt, tanh)
from .reduce import CommReducer, Reduce, comm_reducer, max, max_value, min, min_value, prod, sum
from .tensor import Axis, ComputeOp, PlaceholderOp, Tensor

__all__ = ["Axis", "CommReducer", "ComputeOp", "PlaceholderOp", "Reduce", "Tensor", "abs", "all", "any", "cast",
           "ceil", "comm_reducer", "compute", "const", "create_prim_func", "erf", "estimate_flop", "exp", "floor",
           "floordiv", "floormod", "if_then_else", "log", "max", "max_value", "min", "min_value", "ops",
           "placeholder", "power", "prod", "reduce_axis", "round", "sigmoid", "size_var", "sqrt", "sum", "tanh",
           "var"]
