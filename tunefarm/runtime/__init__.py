"""Runtime: build PrimFuncs into native modules and call them on numpy arrays.

``build(func_or_module, target="llvm")`` compiles (``tunefarm.codegen``) and loads the result;
``load_module(path)`` reloads a saved module without the code generator. ``measure_result`` (the outcome of
measuring a program) is plain data that the database and the farm share; so that importing it never loads
llvmlite, the names below are loaded on first use.
"""
from __future__ import annotations

import importlib

_LAZY = {"BenchmarkResult": "evaluator", "TimeEvaluator": "evaluator", "BoundCall": "module", "Module": "module",
         "PackedFunction": "module", "load_module": "module", "build": "build_module"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_LAZY)
