"""The operator library: numpy-semantics operators returning te Tensors (build with ``te.create_prim_func``)."""
from .broadcast import broadcast_shapes
from .elementwise import (add, divide, exp, log, maximum, minimum, multiply, negative, relu, sigmoid, sqrt,
                          subtract, tanh)
from .matmul import dense, dense_bias_relu, matmul
from .nn import conv2d, max_pool2d, pad
from .transform import flatten, reshape, transpose

__all__ = ["add", "broadcast_shapes", "conv2d", "dense", "dense_bias_relu", "divide", "exp", "flatten", "log",
           "matmul", "max_pool2d", "maximum", "minimum", "multiply", "negative", "pad", "relu", "reshape",
           "sigmoid", "sqrt", "subtract", "tanh", "transpose"]
