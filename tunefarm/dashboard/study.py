"""The study as the dashboard shows it: aggregates kept up to date from the records that are new since last time.

A refresh reads only records with an id above the last one seen, as aggregates the database computes over
that id range (``queries.py``: counts, best latencies, error texts and throughput bins per group, the records
that improved their task's best), and merges them into running totals: per job, per job and task, per task
(workload on a target), per host. The first view of a large study aggregates every record once, from narrow
indexes in their order (a ``Span.whole`` read: no per-record Python); after that a refresh costs what
arrived since the previous one, so a page polling every few seconds stays cheap on a 100,000-record study.
What the page needs is then built from the totals (``snapshot``): small, whatever the study's size. Per-host
medians are read along each host's index (half its entries), and only again when the study grew by
``MEDIAN_GROWTH`` (a median of 30,000 timings does not move with 64 more).

A *task* is a workload on one target (a latency measured on one CPU says nothing of another). Best-so-far
curves keep only the points where the best improved (plus the current end), which is all a step plot needs.
"""
from __future__ import annotations

import collections
import json
import math
import time

from tunefarm.dashboard.queries import Span, StudyQueries, mixed_id
from tunefarm.database import liveness
from tunefarm.target import target_label

BIN_S = 10  # throughput is counted in bins this wide, merged into at most MAX_BARS when shown
MAX_BARS = 90
RATE_WINDOW_S = 30.0  # "trials/s now": records of the last half minute (and of the bin under way)
SLICE_CAP = 1500  # about this many record ids per task are kept for the decision (slice) plots
MEDIAN_GROWTH = 1.02
ERROR_CHARS = 160


def error_head(error: str | None, status: str) -> str:
    """The first non-empty line of an error text, shortened: what groups one kind of failure."""
    for line in (error or "").splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= ERROR_CHARS else line[:ERROR_CHARS - 1] + "…"
    return status


class Tally:
    """Counts, statuses, errors and the best latency of one group of records."""

    def __init__(self):
        self.n = 0
        self.statuses: collections.Counter = collections.Counter()
        self.errors: collections.Counter = collections.Counter()
        self.best = math.inf

    def add(self, status: str, n: int, best: float | None) -> None:
        self.n += n
        self.statuses[status] += n
        if status == "ok" and best is not None:
            self.best = min(self.best, best)

    def as_dict(self, flop: float | None) -> dict:
        best = self.best if math.isfinite(self.best) else None
        return {"n": self.n, "ok": self.statuses.get("ok", 0), "statuses": dict(self.statuses),
                "errors": self.errors.most_common(3), "best_us": None if best is None else best * 1e6,
                "gflops": flop / best / 1e9 if best and flop else None}


class _Task(Tally):
    """A task's tally plus its best-so-far curve and its sample of record ids for the slice plots."""

    def __init__(self):
        super().__init__()
        self.curve: list[tuple[int, int, float]] = []  # (trial number in the task, created_us, best secs)
        self.last_us = 0
        self.slice_ids: list[int] = []
        self.stride = 1

    def improve(self, n: int, created: int, secs: float) -> None:
        """A record of the range that beat the range's earlier ones: kept if it beats the task's best too."""
        if not self.curve or secs < self.curve[-1][2]:
            self.curve.append((n, created, secs))

    def curve_view(self) -> dict:
        """The best-so-far steps as the page draws them, ending at the task's last trial."""
        curve = self.curve + ([(self.n, self.last_us, self.best)] if self.curve else [])
        return {"trial": [c[0] for c in curve], "t_us": [c[1] for c in curve], "best_us": [c[2] * 1e6 for c in curve]}

    def want_stride(self) -> int:
        """The power of two that keeps about ``SLICE_CAP`` of the task's ok records."""
        stride = self.stride
        while self.statuses.get("ok", 0) / stride > SLICE_CAP:
            stride *= 2
        return stride


class Study:
    """Running totals of one study, refreshed from the rows that are new (see the module docstring)."""

    def __init__(self, queries: StudyQueries):
        self.q = queries
        self.last_id = 0
        self.workloads: dict[int, dict] = {}
        self.targets: dict[int, tuple[str, str]] = {}  # id -> (full string, label)
        self.tasks: dict[tuple[int, int], _Task] = {}
        self.job_tasks: dict[tuple[int, int, int], Tally] = {}
        self.job_counts: collections.Counter = collections.Counter()
        self.bins: dict[int | None, collections.Counter] = collections.defaultdict(collections.Counter)
        self.host_statuses: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.host_timed: collections.Counter = collections.Counter()  # ok records with a median, per host
        self.host_medians: dict[str, tuple] = {}
        self._medians_at = 0  # records in the study when the host medians were computed

    def refresh(self) -> int:
        """Fold in the records that are new since the last refresh; returns how many there were. A refresh that
        fails half-way (a lost server, a refused read) has folded in part of its records: the totals start over
        from nothing, so the next refresh reads the study whole rather than count those records twice."""
        try:
            with self.q.reading():
                return self._refresh()
        except BaseException:
            self.__init__(self.q)
            self.q.forget()
            raise

    def _names(self, after_workload: int, after_target: int) -> None:
        for wid, key, name, flop in self.q.workloads_after(after_workload):
            self.workloads[wid] = {"key": key, "name": name, "flop": flop}
        for tid, target in self.q.targets_after(after_target):
            self.targets[tid] = (target, target_label(target))

    def _refresh(self) -> int:
        self._names(max(self.workloads, default=0), max(self.targets, default=0))
        new = self._fold_records()
        if any(w not in self.workloads or t not in self.targets for w, t in self.tasks):
            self._names(0, 0)  # a workload or target whose smaller id committed late (PostgreSQL): read them all
        due = self.medians_due()
        if due:
            counts = {h: (sum(c.values()), self.host_timed[h]) for h, c in self.host_statuses.items()}
            self.host_medians = {h: (b, r) for h, b, r in self.q.host_medians(counts)}
            self._medians_at = due
        return new

    def _fold_records(self) -> int:
        span, hi = self.q.new_span(self.last_id)
        if not span:
            return 0
        before = {k: t.n for k, t in self.tasks.items()}
        new = self._fold_tallies(span)
        walk = sorted(k for k, t in self.tasks.items() if t.statuses.get("ok"))  # a whole read walks these
        for wid, tid, n, created, secs in self.q.improvements(span, walk):
            self.tasks[(wid, tid)].improve(before.get((wid, tid), 0) + n, created, secs)
        for job, wid, tid, status, error, n in self.q.errors(span, ERROR_CHARS + 1):
            head = error_head(error, status)
            self.tasks[(wid, tid)].errors[head] += n
            if job is not None:
                self.job_tasks[(job, wid, tid)].errors[head] += n
        for host, status, n, timed in self.q.host_statuses(span):
            self.host_statuses[host][status] += n
            if status == "ok":
                self.host_timed[host] += timed
        for job, b, n in self.q.bins(span, BIN_S * 1_000_000, [*sorted(self.job_counts), None]):
            self.bins[job][b] += n
        self._sample(span)
        self.q.mark_read(span, hi)
        self.last_id = hi
        return new

    def medians_due(self) -> int | None:
        """The study's size if the host medians should be recomputed now: it grew by ``MEDIAN_GROWTH``, or a
        host has none yet."""
        total = sum(t.n for t in self.tasks.values())
        new_host = any(h not in self.host_medians for h in self.host_statuses)
        return total if total and (total >= self._medians_at * MEDIAN_GROWTH or new_host) else None

    def _task_of(self, wid: int, tid: int) -> _Task:
        task = self.tasks.get((wid, tid))
        if task is None:
            task = self.tasks[(wid, tid)] = _Task()
        return task

    def _fold_tallies(self, span: Span) -> int:
        new = 0
        for job, wid, tid, status, n, best, last in self.q.tallies(span):
            task = self._task_of(wid, tid)
            task.add(status, n, best)
            task.last_us = max(task.last_us, last)
            if job is not None:
                jt = self.job_tasks.get((job, wid, tid))
                if jt is None:
                    jt = self.job_tasks[(job, wid, tid)] = Tally()
                jt.add(status, n, best)
                self.job_counts[job] += n
            new += n
        return new

    def _sample(self, span: Span) -> None:
        """Extend each task's slice sample with the range's records that pass its stride."""
        strides = {k: t.want_stride() for k, t in self.tasks.items()}
        if not strides:
            return
        found: dict[tuple[int, int], list[int]] = collections.defaultdict(list)
        for wid, tid, rid in self.q.sample_ids(span, min(strides.values())):
            found[(wid, tid)].append(rid)
        for key, task in self.tasks.items():
            stride = strides[key]
            if stride != task.stride:
                task.slice_ids = [i for i in task.slice_ids if mixed_id(i) % stride == 0]
                task.stride = stride
            task.slice_ids += [i for i in found.get(key, ()) if mixed_id(i) % stride == 0]

    # -- what the page shows -------------------------------------------------------------------------------
    def _flop(self, wid: int) -> float | None:
        return self.workloads.get(wid, {}).get("flop")

    def _task_ref(self, wid: int, tid: int) -> dict:
        w = self.workloads.get(wid, {})
        target, label = self.targets.get(tid, ("", ""))
        return {"workload_id": wid, "target_id": tid, "workload": w.get("name", f"#{wid}"),
                "key": w.get("key", ""), "target": target, "target_label": label}

    def _rate(self, job: int, now_us: int, started_us: int) -> float:
        """Trials per second over the throughput bins of the last ``RATE_WINDOW_S`` (and the current one), or
        since the job started if that is later."""
        first = int(now_us - RATE_WINDOW_S * 1e6) // (BIN_S * 1_000_000)
        recent = sum(n for b, n in self.bins[job].items() if b >= first)
        since = max(first * BIN_S * 1_000_000, started_us)
        return recent / max(1.0, (now_us - since) / 1e6)

    def job_view(self, row: tuple, now_us: int) -> dict:
        """One row of ``StudyQueries.jobs`` as the page shows it: state, rate, trials and its tasks."""
        jid, name, config_json, finished, host, *state = row
        started = state[-1]
        status = liveness.job_state(*state, now_us)
        try:
            config = json.loads(config_json)
        except ValueError:
            config = {}
        config = config if isinstance(config, dict) else {}
        budget = config.get("max_trials")
        by_key = {w["key"]: wid for wid, w in self.workloads.items()}
        tasks = {(wid, tid): jt for (j, wid, tid), jt in self.job_tasks.items() if j == jid}
        planned = config.get("tasks") if isinstance(config.get("tasks"), list) else []
        tids = [tid for tid, (t, _) in self.targets.items() if t == config.get("target")]
        for entry in planned:  # a job's tasks show from its start, before their first record
            wid = by_key.get(entry[1]) if isinstance(entry, list) and len(entry) > 1 else None
            if wid is not None and tids and not any(w == wid for w, _ in tasks):
                tasks[(wid, tids[0])] = Tally()
        return {"id": jid, "name": name, "state": status, "host": host, "started_us": started,
                "finished_us": finished, "n": self.job_counts.get(jid, 0),
                "budget": budget if isinstance(budget, int) else None,
                "rate": self._rate(jid, now_us, started) if status == liveness.RUNNING else 0.0,
                "tasks": [{**self._task_ref(wid, tid), **jt.as_dict(self._flop(wid))}
                          for (wid, tid), jt in sorted(tasks.items())]}

    def _throughput(self, now_us: int) -> dict:
        return throughput([({"job": job}, bins) for job, bins in
                           sorted(self.bins.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))], now_us)

    def _task(self, wid: int, tid: int, task: _Task) -> dict:
        return {**self._task_ref(wid, tid), **task.as_dict(self._flop(wid)), "curve": task.curve_view()}

    def _host(self, name: str, statuses: collections.Counter) -> dict:
        build, run = self.host_medians.get(name, (None, None))
        n = sum(statuses.values())
        return {"host": name, "n": n, "statuses": dict(statuses), "errors": n - statuses.get("ok", 0),
                "build_s": build, "run_s": run}

    def snapshot(self) -> dict:
        """Everything the page's overview shows, as plain JSON data (names are data: the page escapes them)."""
        now_us = time.time_ns() // 1000
        return {
            "now_us": now_us, "last_record_id": self.last_id, "n_records": sum(t.n for t in self.tasks.values()),
            "jobs": [self.job_view(row, now_us) for row in self.q.jobs()],
            "tasks": [self._task(wid, tid, t) for (wid, tid), t in sorted(self.tasks.items())],
            "throughput": self._throughput(now_us),
            "hosts": [self._host(name, c) for name, c in sorted(self.host_statuses.items())],
        }


def throughput(series: list[tuple[dict, collections.Counter]], now_us: int) -> dict:
    """Trials per minute of each ``(label, {bin: records})`` in at most ``MAX_BARS`` bins of one width; the bin
    under way is divided by the part of it that has passed (else a running job would seem to slow down at the
    right edge)."""
    if not any(bins for _, bins in series):
        return {"bin_s": BIN_S, "series": []}
    lo = min(min(b) for _, b in series if b)
    hi = max(max(b) for _, b in series if b)
    merge = max(1, math.ceil((hi - lo + 1) / MAX_BARS))
    width_us = BIN_S * merge * 1_000_000
    out = []
    for label, bins in series:
        merged: collections.Counter = collections.Counter()
        for b, n in bins.items():
            merged[lo + (b - lo) // merge * merge] += n
        keys = sorted(merged)
        starts = [k * BIN_S * 1_000_000 for k in keys]
        spans = [min(width_us, max(1_000_000, now_us - t)) / 60e6 for t in starts]
        out.append({**label, "t_us": starts, "per_min": [merged[k] / m for k, m in zip(keys, spans)]})
    return {"bin_s": BIN_S * merge, "series": out}
