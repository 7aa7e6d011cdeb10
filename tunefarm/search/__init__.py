"""The search layer: spaces, postprocessors, mutators, strategies, features, the XGBoost cost model, the task
scheduler and the tuning driver (see ARCHITECTURE.md, layer ``search``).

Import cost matters (``import tunefarm`` must stay light), so names are loaded on first use.
"""
from __future__ import annotations

import importlib

from .errors import SearchError

_LAZY = {
    "AutoSpace": "space", "ScheduleFn": "space", "SpaceGenerator": "space", "SpaceError": "space",
    "default_postprocs": "postprocs", "PostprocError": "postprocs",
    "default_mutators": "mutators",
    "SearchStrategy": "strategy", "EvolutionarySearch": "strategy", "RandomSearch": "strategy",
    "EvolutionConfig": "strategy",
    "CostModel": "cost_model", "XGBCostModel": "cost_model", "CostModelError": "cost_model",
    "extract_features": "features",
    "RoundRobin": "task_scheduler", "GradientScheduler": "task_scheduler",
    "TuneTask": "task", "Program": "program",
    "builtin_workload": "workloads", "load_workload": "workloads", "WorkloadError": "workloads",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"tunefarm.search.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tunefarm.search' has no attribute {name!r}")


__all__ = ["SearchError", *_LAZY]
