"""The Grafana dashboard queries only series the farm's metrics code emits (with Ray's exporter naming)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tunefarm.farm import metrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "dashboards" / "grafana_tunefarm.json"
SERIES = re.compile(r"\bray_tunefarm_[a-z0-9_]+")


def _queried_series() -> set[str]:
    d = json.loads(DASHBOARD.read_text())
    texts = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    for var in d.get("templating", {}).get("list", []):
        q = var.get("query")
        texts.append(q.get("query", "") if isinstance(q, dict) else str(q or ""))
    return {m for t in texts for m in SERIES.findall(t)}


def test_every_queried_series_is_emitted_by_the_code():
    queried = _queried_series()
    assert queried, "the dashboard queries no tunefarm series"
    unknown = queried - metrics.exported_names()
    assert not unknown, f"dashboard queries series the code never emits: {sorted(unknown)}"


def test_every_metric_of_the_code_is_on_the_dashboard():
    queried = _queried_series()
    for name, (kind, _, _) in metrics.METRICS.items():
        base = "ray_" + name
        assert any(q.startswith(base) for q in queried), f"{name} ({kind}) has no panel"


def test_metric_names_follow_the_convention_and_ray_suffixes():
    assert all(n.startswith("tunefarm_") for n in metrics.METRICS)
    names = metrics.exported_names()
    assert "ray_tunefarm_trials_total" in names
    assert {"ray_tunefarm_build_seconds_bucket", "ray_tunefarm_build_seconds_sum",
            "ray_tunefarm_build_seconds_count"} <= names
    assert "ray_tunefarm_live_workers" in names


def test_metrics_source_names_match_the_table():
    """metrics.py registers exactly the names in METRICS (no metric created outside the table)."""
    src = (ROOT / "tunefarm" / "farm" / "metrics.py").read_text()
    literal = set(re.findall(r'"(tunefarm_[a-z0-9_]+)"', src))
    assert literal == set(metrics.METRICS)


def test_dashboard_is_valid_grafana_json():
    d = json.loads(DASHBOARD.read_text())
    assert d["title"] and d["uid"] and d["panels"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    for p in d["panels"]:
        assert set(p["gridPos"]) == {"h", "w", "x", "y"}
        assert p["targets"] and all(t["refId"] for t in p["targets"])
