"""``tvm.tir.schedule``: the schedule, its random variables, instructions and traces, and the test helpers."""
from ....schedule import BlockRV, InstructionKind, LoopRV, ScheduleError
from . import state, testing
from .schedule import Schedule
from .trace import Instruction, Trace

__all__ = ["BlockRV", "Instruction", "InstructionKind", "LoopRV", "Schedule", "ScheduleError", "Trace", "state",
           "testing"]
