"""``tvm.tir.Schedule``: tunefarm's ``Schedule`` with TVM's constructor keywords.

``debug_mask`` ("all", "none" or a ``ScheduleDebugMask`` int) asks TVM to re-verify its schedulable-reference
tree after every step. tunefarm keeps no such tree (every primitive maps a ``PrimFunc`` to a new one and checks
its own preconditions), so the mask is validated and kept, and has nothing further to turn on.
"""
from __future__ import annotations

from ....schedule import Schedule as _Schedule
from ....schedule import ScheduleError
from ....ir.expr import IntImm
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

    def split(self, loop, factors, preserve_unit_iters: bool = True, disable_predication: bool = False):
        """TVM's factors may be ``IntImm`` constants (``T.int64(10)``): they are plain integers here."""
        if isinstance(factors, (list, tuple)):
            factors = [f.value if isinstance(f, IntImm) else f for f in factors]
        return super().split(loop, factors, preserve_unit_iters, disable_predication)

    def cache_read(self, block, read_buffer_index, storage_scope: str):
        """TVM also names the buffer instead of giving its index among the block's reads."""
        if isinstance(read_buffer_index, str):
            read_buffer_index = self._buffer_index(block, read_buffer_index, "reads", "cache_read")
        return super().cache_read(block, read_buffer_index, storage_scope)

    def cache_write(self, block, write_buffer_index, storage_scope: str):
        if isinstance(write_buffer_index, str):
            write_buffer_index = self._buffer_index(block, write_buffer_index, "writes", "cache_write")
        return super().cache_write(block, write_buffer_index, storage_scope)

    def _buffer_index(self, block, name: str, which: str, prim: str) -> int:
        regions = getattr(self.get(self.get_block(block) if isinstance(block, str) else block), which)
        names = [r.buffer.name for r in regions]
        if name not in names:
            raise ScheduleError(prim, f"the block {which} no buffer named {name!r} (it {which} {names})")
        return names.index(name)

    def copy(self) -> "Schedule":
        new = super().copy()
        new.__class__ = type(self)
        new.debug_mask = self.debug_mask
        return new


__all__ = ["Schedule"]
