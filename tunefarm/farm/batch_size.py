"""How many items one actor call carries: sized by time, not by count.

An actor call costs the driver far more CPU than an item's bookkeeping, whatever it carries: Ray's call, its
reply, and above all the wake-up and the job's step it brings (some 1.5 ms on a busy 2-core host; on a 2-worker
job, calls of about 0.5 s of work, 5-6 items, put the driver at 1.2-1.4 ms per trial and calls of about 1 s,
up to 16 items, at 0.9-1.0), so short items want many per call. But a batch's outcomes come back only when
its last item ends, and every item in flight is a pick made before the results still running come back: long
items want few per call, or a worker's queue holds minutes of picks chosen with a stale model. So a call
carries about ``BATCH_SECS`` of work: the batch is that over the run time of the items most often run (a moving
average of what workers report for their handler), between 1 and the farm's bound, and a worker holds two
calls' worth (the next batch is there when one returns). On a 2-worker job that is some 70 picks in flight,
about what TVM's MetaSchedule measures per round with one model (64).

Items of one job differ by kind: a search request runs for several measurements' time, and its reply is what
the next picks wait for. So each handler has its own moving average (``secs``), and a batch being filled
takes an item only while that leaves it nearer ``BATCH_SECS`` than it was (``fits``; its first item always
goes). Counting every item as the mean put several search requests into one call of 5-8 items, whose replies
then waited 2 s or more for each other, and a simulated 48-actor job starved for candidates; sizing the batch
by the mean of all kinds held a job's measurements to half the batch they could have (the few long items
weighed as much as the many short ones). A worker's bound in items (the farm's ``items_per_worker``, two calls
of ``size``) counts every item as one of the common kind: with long items among them a worker is full at two
calls before it holds that many, and the rest wait in the driver's queue until a call returns.
"""
from __future__ import annotations

import collections
import math

BATCH_SECS = 1.0   # work one actor call carries (see module doc: a call costs the driver far more than its Ray CPU)
_WEIGHT = 0.1      # of each item's seconds in the moving average (about the last 10-20 items)
START_BATCH = 8    # before any item's run time is known: a farm of 16-item calls took a whole 40-item stream of
                   # 0.4 s items at once, and a node that joined a moment later was left nothing to run


def _moved(mean: float | None, s: float) -> float:
    return s if mean is None else mean + _WEIGHT * (s - mean)


class BatchSizer:
    """Items per call for items of the most common kind, at most ``max_batch``; starts at ``START_BATCH``."""

    def __init__(self, max_batch: int, batch_secs: float = BATCH_SECS):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.max_batch = max_batch
        self.batch_secs = batch_secs
        self.size = min(max_batch, START_BATCH)
        self.item_secs: float | None = None
        self.handler_secs: dict[str, float] = {}
        self.handler_runs: collections.Counter = collections.Counter()

    def observe(self, runs: list[tuple[str, float]]) -> bool:
        """Fold the ``(handler, run time)`` of a returned batch's items in; True when the batch size changed. A
        change needs a quarter of the size (at least one item) so that noise does not make every reply resize
        the workers."""
        for handler, s in runs:
            if math.isfinite(s) and s >= 0:
                self.item_secs = _moved(self.item_secs, s)
                self.handler_secs[handler] = _moved(self.handler_secs.get(handler), s)
                self.handler_runs[handler] += 1
        if self.item_secs is None:
            return False
        common = self.handler_secs[self.handler_runs.most_common(1)[0][0]]
        want = max(1, min(self.max_batch, round(self.batch_secs / max(common, 1e-6))))
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
