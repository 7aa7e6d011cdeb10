"""The farm's Ray metrics (``ray.util.metrics``), exported by Ray's metrics agent to Prometheus.

Names start with ``tunefarm_``; Ray's exporter adds the ``ray_`` prefix, counters gain ``_total`` and
histograms ``_bucket`` / ``_sum`` / ``_count`` (see ``exported_names``, which the Grafana dashboard in
``dashboards/grafana_tunefarm.json`` is checked against). They are recorded by the driver from the results it
receives, so a worker never pays for them and a lost worker loses none.
"""
from __future__ import annotations

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
        self._last_gauges: dict[str, float] = {}

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
                self._m["tunefarm_best_latency_seconds"].set(med, tags={"task": task})

    def requeued(self, n: int = 1) -> None:
        self._m["tunefarm_requeued_trials"].inc(n)

    def driver_cpu(self, secs: float) -> None:
        if secs > 0:
            self._m["tunefarm_driver_cpu_seconds"].inc(secs)

    def gauge(self, name: str, value: float) -> None:
        """Set ``tunefarm_candidates_in_flight`` or ``tunefarm_live_workers`` (skipped when unchanged)."""
        if self._last_gauges.get(name) != value:
            self._last_gauges[name] = value
            self._m[name].set(value)
