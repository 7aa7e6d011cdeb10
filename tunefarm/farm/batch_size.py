"""How many items one actor call carries: sized by time, not by count.

An actor call costs the driver about the same CPU whatever it carries (Ray's call, its reply, the wake-up: some
1.5-2 ms on a busy 2-core host), so short items want many per call. But a batch's outcomes come back only when
its last item ends, and every item in flight is a pick made before the results still running come back: long
items want few per call, or a worker's queue holds minutes of picks chosen with a stale model. So a call
carries about ``BATCH_SECS`` of work: the batch is that over the items' mean run time (a moving average of what
workers report), between 1 and the farm's bound, and a worker holds two calls' worth (the next batch is there
when one returns).

Items of one job differ by kind: a search request runs for several measurements' time, and its reply is what
the next picks wait for. So each handler has its own moving average too (``secs``), and a batch being filled
takes an item only while that leaves it nearer ``BATCH_SECS`` than it was (``fits``; its first item always
goes). Counting every item as the mean put several search requests into one call of 5-8 items, whose replies
then waited 2 s or more for each other, and a simulated 48-actor job starved for candidates. A worker's bound
in items (the farm's ``items_per_worker``, two calls of ``size``) still follows the mean of all: with long items
among short ones a worker is full at two calls before it holds that many, and the rest wait in the driver's
queue until a call returns.
"""
from __future__ import annotations

import math

BATCH_SECS = 0.5   # work one actor call carries: a call's driver CPU (about 2 ms) is under 1% of it
_WEIGHT = 0.1      # of each item's seconds in the moving average (about the last 10-20 items)


def _moved(mean: float | None, s: float) -> float:
    return s if mean is None else mean + _WEIGHT * (s - mean)


class BatchSizer:
    """Items per call for items of the recent mean length, at most ``max_batch``; starts at ``max_batch``."""

    def __init__(self, max_batch: int, batch_secs: float = BATCH_SECS):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.max_batch = max_batch
        self.batch_secs = batch_secs
        self.size = max_batch
        self.item_secs: float | None = None
        self.handler_secs: dict[str, float] = {}

    def observe(self, runs: list[tuple[str, float]]) -> bool:
        """Fold the ``(handler, run time)`` of a returned batch's items in; True when the batch size changed. A
        change needs a quarter of the size (at least one item) so that noise does not make every reply resize
        the workers."""
        for handler, s in runs:
            if math.isfinite(s) and s >= 0:
                self.item_secs = _moved(self.item_secs, s)
                self.handler_secs[handler] = _moved(self.handler_secs.get(handler), s)
        if self.item_secs is None:
            return False
        want = max(1, min(self.max_batch, round(self.batch_secs / max(self.item_secs, 1e-6))))
        if abs(want - self.size) < max(1, self.size // 4):
            return False
        self.size = want
        return True

    def secs(self, handler: str) -> float:
        """The expected run time of an item of ``handler``: its own mean, else the mean of all (0 before any)."""
        got = self.handler_secs.get(handler, self.item_secs)
        return 0.0 if got is None else got

    def fits(self, secs: float, item_secs: float) -> bool:
        """A batch expected to run ``secs`` so far takes an item expected to run ``item_secs`` (``secs(handler)``):
        with it, the batch is nearer a call's worth than without (for items of one length that is the count,
        ``round(batch_secs / item)``)."""
        return secs + item_secs / 2 <= self.batch_secs
