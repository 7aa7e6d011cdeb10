"""``tvm.topi``: the tensor-expression operator library (``topi.add``, ``topi.nn.dense`` ...) is tunefarm's
``te.ops``; every name here takes its leading arguments in TOPI's order."""
from types import SimpleNamespace

from ..te.ops import (add, dense, divide, exp, flatten, log, matmul, maximum, minimum, multiply, negative, pad, relu,
                      reshape, sigmoid, sqrt, subtract, tanh, transpose)

nn = SimpleNamespace(dense=dense, relu=relu, pad=pad, flatten=flatten)

__all__ = ["add", "divide", "exp", "log", "matmul", "maximum", "minimum", "multiply", "negative", "nn", "reshape",
           "sigmoid", "sqrt", "subtract", "tanh", "transpose"]
