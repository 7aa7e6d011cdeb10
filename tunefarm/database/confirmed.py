"""Confirmed timings: a record's re-timing among its workload's best, stored beside the farm's figure.

The farm times each candidate once, beside whatever else the host runs; its best is the fastest of many noisy
figures, so it is both optimistic (the winner's luck) and inflated (its neighbours). ``tuning/confirm.py``
re-times the K best together on one quiet host and stores here, per record, the median and the p10-p90 spread
over the blocks of all its timing sessions. ``best`` / ``top_k`` rank confirmed records first, by the confirmed
median, then the others by the farm's (``provenance.TRUSTED_ORDER``: figures taken in different conditions are
not compared); the farm's figure stays as it was measured.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from tunefarm.database.errors import InvalidRecordError


def checked(median, p10, p90) -> tuple[float, float, float]:
    """A confirmed figure as stored: finite, positive seconds with p10 <= median <= p90."""
    vals = tuple(float(v) for v in (median, p10, p90))
    if not all(math.isfinite(v) and v > 0 for v in vals) or not vals[1] <= vals[0] <= vals[2]:
        raise InvalidRecordError(f"a confirmed figure needs 0 < p10 <= median <= p90 seconds, got {vals!r}"[:200])
    return vals


UPDATE_SQL = ("UPDATE records SET confirmed_secs = ?, confirmed_p10_secs = ?, confirmed_p90_secs = ? "
              "WHERE id = ? AND status = 'ok'")


class ConfirmedFigures:
    """The write of confirmed figures, for every ``SqlDatabase`` (it runs in the store's write transaction)."""

    def store_confirmed(self, figures: Iterable[tuple]) -> int:
        """Store ``(record_id, median, p10, p90)`` seconds for each record, in one transaction; returns how many
        records took them (a record that is not ok, or not here, takes none)."""
        rows = [(*checked(m, lo, hi), int(rid)) for rid, m, lo, hi in figures]

        def store(self_):
            return self_._write(lambda conn: sum(conn.execute(UPDATE_SQL, row).rowcount for row in rows))

        return self._call(store, (), {})
