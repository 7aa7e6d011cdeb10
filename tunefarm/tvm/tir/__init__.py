"""``tvm.tir``: TensorIR's ``Schedule`` and ``PrimFunc`` are tunefarm's own; ``tvm.tir.Schedule`` takes TVM's
keyword arguments (``debug_mask=``) and ``IntImm`` / ``FloatImm`` / ``Var`` take TVM's argument order."""
from ...ir.function import PrimFunc
from ...schedule import ScheduleError
from . import expr, schedule
from .expr import FloatImm, IntImm, Var
from .schedule import BlockRV, LoopRV, Schedule, Trace

__all__ = ["BlockRV", "FloatImm", "IntImm", "LoopRV", "PrimFunc", "Schedule", "ScheduleError", "Trace", "Var", "expr",
           "schedule"]
