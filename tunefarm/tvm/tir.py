"""``tvm.tir``: TensorIR's ``Schedule`` and ``PrimFunc`` are tunefarm's own."""
from ..ir.function import PrimFunc
from ..schedule import Schedule, Trace

__all__ = ["PrimFunc", "Schedule", "Trace"]
