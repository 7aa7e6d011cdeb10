"""Random replay: every candidate is a fresh sample of the space (the course's ``random_search``).

No cost model, no mutation: the baseline the evolutionary search must beat, and the right tool for a small
space (the course's ``stochastic_schedule_mm`` has five distinct programs for a 128-wide loop).
"""
from __future__ import annotations

from .program import Program
from .strategy import SearchStrategy


class RandomSearch(SearchStrategy):
    name = "random"

    def propose(self, n: int) -> list[Program]:
        out = self.fresh(n)
        if not out:
            self.exhausted = True
        return out
