"""``relax.op``: high-level graph ops (legalized to kernels by ``tunefarm.compile``). The course's
``relax.op.dense`` / ``relax.op.relu`` sit beside TVM's current ``relax.op.nn.linear`` / ``relax.op.nn.relu``."""
from types import SimpleNamespace

from ...graph.ops import add, conv2d, dense, flatten, linear, matmul, permute_dims, relu, reshape

nn = SimpleNamespace(relu=relu, linear=linear, dense=dense, conv2d=conv2d)

__all__ = ["add", "dense", "flatten", "linear", "matmul", "nn", "permute_dims", "relu", "reshape"]
