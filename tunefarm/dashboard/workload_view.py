"""One task's detail: its top-k programs as ``sch.*`` calls, and latency against each sampling decision.

The top-k is one indexed query, ranked as the store's ``best`` / ``top_k`` rank records (confirmed records first,
by their confirmed median, then the others by the farm's: ``records_trusted``); each program shows the farm's
median and, where it was re-timed on a quiet host, the confirmed median with its p10-p90 spread. The decision
(slice) plots use the task's sample of record ids that ``Study`` keeps (at most ``SLICE_CAP``, evenly thinned):
each sampled record's trace is read and its decisions parsed once, then cached, so a refresh parses only the
records sampled since. The decisions are ordered by how much they seem to matter: the spread (in log latency)
between the medians of their values.
"""
from __future__ import annotations

import json
import math
import statistics
from typing import Any

from tunefarm.dashboard.queries import StudyQueries
from tunefarm.database.decisions import decision_columns
from tunefarm.schedule.trace import Trace

MAX_CATEGORIES = 40  # values of one decision shown; the rarest are left out beyond that


def sch_calls(trace_json: str) -> str:
    """A stored trace as the ``sch.*`` calls it stands for; pretty JSON if this version cannot read it."""
    try:
        return str(Trace.from_json(json.loads(trace_json)))
    except Exception:  # noqa: BLE001 - a trace from another version of tunefarm is still shown
        # the report module loads pandas: only for a trace this version cannot read, not at every start
        from tunefarm.database.report import pretty_trace
        try:
            return pretty_trace(json.loads(trace_json))
        except ValueError:
            return trace_json


def _value(v: Any) -> Any:
    """A decision value as the page shows it: numbers stay numbers, tuples read as ``8×16``."""
    if isinstance(v, tuple):
        return "×".join(str(_value(x)) for x in v)
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


def _spread(points: list[tuple[Any, float]]) -> float:
    """How far apart the median log-latencies of one decision's values are (0 when one value)."""
    by_value: dict = {}
    for v, us in points:
        by_value.setdefault(v, []).append(math.log10(us))
    meds = [statistics.median(v) for v in by_value.values() if len(v) >= 2] or [0.0]
    return max(meds) - min(meds)


class TaskDetail:
    """Cached decision rows of one task's sampled records."""

    def __init__(self):
        self.rows: dict[int, tuple[dict, float]] = {}  # record id -> (decision column -> value, latency us)
        self.shown: tuple[tuple, dict] | None = None  # (what it was built from, the answer): reused until new records

    def add(self, rows: list[tuple]) -> None:
        rows = [r for r in rows if r[2] is not None]
        try:
            cols = decision_columns([r[1] for r in rows])
        except (ValueError, KeyError, IndexError, TypeError):  # a trace of another shape: parse one by one
            cols = None
        for i, (rid, text, secs) in enumerate(rows):
            if cols is None:
                try:
                    one = decision_columns([text])
                except (ValueError, KeyError, IndexError, TypeError):
                    one = {}
                decisions = {k: v[0] for k, v in one.items()}
            else:
                decisions = {k: v[i] for k, v in cols.items()}
            self.rows[rid] = ({k: _value(v) for k, v in decisions.items() if v is not None}, secs * 1e6)

    def decisions(self, ids: list[int]) -> list[dict]:
        columns: dict[str, list] = {}
        for rid in ids:
            row = self.rows.get(rid)
            if row is not None:
                for name, value in row[0].items():
                    columns.setdefault(name, []).append((value, row[1]))
        out = []
        for name, points in columns.items():
            counts: dict = {}
            for v, _ in points:
                counts[v] = counts.get(v, 0) + 1
            keep = set(sorted(counts, key=lambda v: -counts[v])[:MAX_CATEGORIES])
            points = [p for p in points if p[0] in keep]
            out.append({"name": name, "spread": _spread(points), "n_values": len(counts),
                        "x": [p[0] for p in points], "us": [p[1] for p in points]})
        out.sort(key=lambda d: -d["spread"])
        return out


def program(row: tuple, flop: float | None) -> dict:
    """One ``StudyQueries.top_k`` row as the page shows it: the farm's median, and the confirmed median with its
    p10-p90 spread where the record was re-timed (``tuning/confirm.py``), else ``None``."""
    rid, trace, secs, job, host, created, _, conf, conf10, conf90 = row
    return {"record_id": rid, "us": secs * 1e6, "gflops": flop / secs / 1e9 if flop and secs else None,
            "job_id": job, "host": host, "created_us": created, "trace": sch_calls(trace),
            "confirmed": None if conf is None else {"us": conf * 1e6, "p10_us": conf10 * 1e6, "p90_us": conf90 * 1e6}}


def task_detail(q: StudyQueries, cache: TaskDetail, workload_id: int, target_id: int, slice_ids: list[int],
                flop: float | None, k: int, n_records: int) -> dict:
    """Top-k and decision plots of one task; ``cache`` keeps the parsed decisions and the last answer, which
    stands while the task has no new records (``n_records``)."""
    if cache.shown is not None and cache.shown[0] == (n_records, k):
        return cache.shown[1]
    top = q.top_k(workload_id, target_id, k)
    missing = [rid for rid in slice_ids if rid not in cache.rows]
    cache.add(q.traces_of(missing) + [(r[0], r[1], r[2]) for r in top if r[0] not in cache.rows])
    ids = list(dict.fromkeys(slice_ids + [r[0] for r in top]))
    answer = {"workload_id": workload_id, "target_id": target_id, "top": [program(r, flop) for r in top],
              "decisions": cache.decisions(ids), "n_sampled": len(ids)}
    cache.shown = ((n_records, k), answer)
    return answer
