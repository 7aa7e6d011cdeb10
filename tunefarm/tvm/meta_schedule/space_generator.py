"""``ms.space_generator.ScheduleFn(f)``: a stochastic schedule function as the search space."""
from __future__ import annotations


class ScheduleFn:
    """The space of the programs ``sch_fn(sch)`` can produce (``tune_tir(space=ScheduleFn(f))``)."""

    def __init__(self, sch_fn):
        if not callable(sch_fn):
            raise TypeError(f"ScheduleFn takes a schedule function sch -> sch, got {type(sch_fn).__name__}")
        self.sch_fn = sch_fn

    def __repr__(self) -> str:
        return f"ScheduleFn({getattr(self.sch_fn, '__name__', self.sch_fn)!r})"


__all__ = ["ScheduleFn"]
