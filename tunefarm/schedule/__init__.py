"""Schedules: primitives and sampling instructions over the tensor IR, recorded as replayable traces.

``Schedule(func_or_module, seed=None)`` is the entry point (same names as TVM's ``tir.Schedule``); every
call is recorded in ``sch.trace``, a ``Trace`` that prints as Python, round-trips through JSON and replays
(optionally with edited sampling decisions): ``Schedule.from_trace(trace, func)``, or TVM's
``trace.apply_to_schedule(sch)`` on a schedule of one's own. Illegal requests raise ``ScheduleError``.
"""
from .error import ScheduleError
from .instruction import INSTRUCTION_KINDS, Instruction, InstructionKind
from .random_variables import BlockRV, ExprRV, LoopRV, RandomVariable
from .schedule import Schedule
from .trace import Trace

__all__ = ["Schedule", "ScheduleError", "Trace", "BlockRV", "LoopRV", "ExprRV", "RandomVariable", "Instruction",
           "InstructionKind", "INSTRUCTION_KINDS"]
