"""tunefarm: a distributed auto-tuning farm for CPU tensor programs.

Public names are loaded lazily so that ``import tunefarm`` (and loading a saved executable) never pulls in
the tuning stack (ray, xgboost) unless it is used.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "Schedule": "tunefarm.schedule",
    "ScheduleError": "tunefarm.schedule",
    "Trace": "tunefarm.schedule",
    "structural_equal": "tunefarm.ir.structural",
    "structural_hash": "tunefarm.ir.structural",
    "workload_key": "tunefarm.ir.structural",
    "interpret": "tunefarm.reference",
    "IRModule": "tunefarm.ir",
    "PrimFunc": "tunefarm.ir",
    "build": "tunefarm.runtime",
    "load_module": "tunefarm.runtime",
    "Target": "tunefarm.target",
    "Database": "tunefarm.database",
    "tune": "tunefarm.tune",
    "compile_tir": "tunefarm.tune",
    "tune_model": "tunefarm.graph",
    "compile": "tunefarm.graph",
    "load": "tunefarm.graph",
    "register_func": "tunefarm.graph",
}
_SUBMODULES = {"ir", "script", "te", "schedule", "codegen", "runtime", "reference", "search", "farm", "database",
               "graph", "nn", "target", "cli", "tvm"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"tunefarm.{name}")
    raise AttributeError(f"module 'tunefarm' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY) + list(_SUBMODULES))
