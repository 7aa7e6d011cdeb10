"""``tvm.tir.Schedule``: tunefarm's ``Schedule`` with TVM's constructor keywords.

``debug_mask`` ("all", "none" or a ``ScheduleDebugMask`` int) asks TVM to re-verify its schedulable-reference
tree after every step. tunefarm keeps no such tree (every primitive maps a ``PrimFunc`` to a new one and checks
its own preconditions), so the mask is validated and kept, and has nothing further to turn on.
"""
from __future__ import annotations

from ....schedule import Schedule as _Schedule
from ....schedule import ScheduleError
from .state import ScheduleDebugMask

_ALL = int(ScheduleDebugMask.VERIFY_SREF_TREE | ScheduleDebugMask.VERIFY_CACHED_FLAGS)


def _debug_mask(value) -> int:
    if value == "all":
        return _ALL
    if value == "none":
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _ALL:
        return int(value)
    raise ValueError(f"debug_mask must be 'all', 'none' or a ScheduleDebugMask value, got {value!r}")


class Schedule(_Schedule):
    """``tir.Schedule(mod, *, seed=None, debug_mask="none", error_render_level="detail", enable_check=True)``."""

    def __init__(self, mod, *, seed: int | None = None, debug_mask="none", error_render_level: str = "detail",
                 enable_check: bool = True):
        if error_render_level not in ("detail", "fast", "none"):
            raise ValueError(f"error_render_level must be 'detail', 'fast' or 'none', got {error_render_level!r}")
        if not enable_check:
            raise ScheduleError("Schedule", "enable_check=False (skipping legality checks) is not supported: "
                                            "every primitive checks its preconditions")
        self.debug_mask = _debug_mask(debug_mask)
        super().__init__(mod, seed=seed)

    def copy(self) -> "Schedule":
        new = super().copy()
        new.__class__ = type(self)
        new.debug_mask = self.debug_mask
        return new


__all__ = ["Schedule"]
