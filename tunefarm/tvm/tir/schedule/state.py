"""``tvm.tir.schedule.state.ScheduleDebugMask``: the checks TVM's ``debug_mask=`` turns on."""
import enum


class ScheduleDebugMask(enum.IntFlag):
    VERIFY_SREF_TREE = 1
    VERIFY_CACHED_FLAGS = 2


__all__ = ["ScheduleDebugMask"]
