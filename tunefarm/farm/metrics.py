"""The farm's Ray metrics (``ray.util.metrics``), exported by Ray's metrics agent to Prometheus.

Names start with ``tunefarm_``; Ray's exporter adds the ``ray_`` prefix, counters gain ``_total`` and
histograms ``_bucket`` / ``_sum`` / ``_count`` (see ``exported_names``, which the Grafana dashboard in
``dashboards/grafana_tunefarm.json`` is checked against). They are recorded by the driver from the results it
receives, so a worker never pays for them and a lost worker loses none.

Ray exports a gauge only for about 20 s after it was last set (its agent drops stale gauge series), so a best
latency that stops improving, or a worker count that holds still, would vanish from Prometheus: a thread of
the driver sets every gauge series again each ``REFRESH_S`` until the farm closes.
"""
from __future__ import annotations

import threading

from ..runtime.measure_result import MeasureResult, MeasureStatus

# name -> (kind, description, tag keys)
METRICS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "tunefarm_trials": ("counter", "Measured candidates by final status", ("status",)),
    "tunefarm_requeued_trials": ("counter", "In-flight candidates re-queued after their node disappeared", ()),
    "tunefarm_build_seconds": ("histogram", "Replay + LLVM build time per candidate (seconds)", ()),
    "tunefarm_run_seconds": ("histogram", "Median run time of successfully measured candidates (seconds)", ()),
    "tunefarm_best_latency_seconds": ("gauge", "Best measured latency per tuning task (seconds)", ("task",)),
    "tunefarm_candidates_in_flight": ("gauge", "Candidates sent to workers and not yet returned", ()),
    "tunefarm_live_workers": ("gauge", "Measurement workers alive and ready", ()),
    "tunefarm_driver_cpu_seconds": ("counter", "CPU seconds the driver spent dispatching and collecting", ()),
}

BUILD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]
RUN_BUCKETS = [1e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1.0]
REFRESH_S = 5.0  # well inside Ray's ~20 s life of a gauge series that is not set again


def exported_names() -> set[str]:
    """Every Prometheus series name Ray's exporter produces for METRICS (``ray_`` prefix + type suffixes)."""
    out: set[str] = set()
    for name, (kind, _, _) in METRICS.items():
        base = "ray_" + name
        if kind == "counter":
            out.add(base + "_total")
        elif kind == "histogram":
            out.update({base + "_bucket", base + "_sum", base + "_count"})
        else:
            out.add(base)
    return out


class FarmMetrics:
    """Creates the metrics once per process (Ray must be initialized) and records farm events."""

    def __init__(self):
        from ray.util import metrics as m

        self._m: dict = {}
        for name, (kind, desc, tags) in METRICS.items():
            if kind == "counter":
                self._m[name] = m.Counter(name, description=desc, tag_keys=tags)
            elif kind == "gauge":
                self._m[name] = m.Gauge(name, description=desc, tag_keys=tags)
            else:
                buckets = BUILD_BUCKETS if name == "tunefarm_build_seconds" else RUN_BUCKETS
                self._m[name] = m.Histogram(name, description=desc, boundaries=buckets, tag_keys=tags)
        self._best: dict[str, float] = {}
        self._series: dict[tuple, float] = {}  # (gauge name, tags) -> value last set
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._refresher = threading.Thread(target=self._refresh, name="tunefarm-metrics-refresh", daemon=True)
        self._refresher.start()

    def _set(self, name: str, value: float, tags: dict | None = None) -> None:
        with self._lock:
            self._series[(name, tuple(sorted((tags or {}).items())))] = value
            self._m[name].set(value, tags=tags)

    def _refresh(self) -> None:
        while not self._closed.wait(REFRESH_S):
            with self._lock:
                for (name, tags), value in self._series.items():
                    self._m[name].set(value, tags=dict(tags) or None)

    def close(self) -> None:
        """Stop setting the gauges again (they age out of Prometheus as Ray's agent drops them)."""
        self._closed.set()

    def trial(self, result: MeasureResult, task: str) -> None:
        self._m["tunefarm_trials"].inc(1, tags={"status": result.status.value})
        if result.build_secs > 0:
            self._m["tunefarm_build_seconds"].observe(result.build_secs)
        if result.status is MeasureStatus.OK:
            med = result.median_secs
            self._m["tunefarm_run_seconds"].observe(med)
            best = self._best.get(task)
            if best is None or med < best:
                self._best[task] = med
                self._set("tunefarm_best_latency_seconds", med, {"task": task})

    def requeued(self, n: int = 1) -> None:
        self._m["tunefarm_requeued_trials"].inc(n)

    def driver_cpu(self, secs: float) -> None:
        if secs > 0:
            self._m["tunefarm_driver_cpu_seconds"].inc(secs)

    def gauge(self, name: str, value: float) -> None:
        """Set ``tunefarm_candidates_in_flight`` or ``tunefarm_live_workers`` (skipped when unchanged)."""
        if self._series.get((name, ())) != value:
            self._set(name, value)
