"""Runtime: build PrimFuncs into native modules and call them on numpy arrays.

``build(func_or_module, target="llvm")`` compiles (``tunefarm.codegen``) and loads the result;
``load_module(path)`` reloads a saved module without the code generator.
"""
from __future__ import annotations

from .evaluator import BenchmarkResult, TimeEvaluator
from .module import BoundCall, Module, PackedFunction, load_module


def build(func_or_module, target="llvm") -> Module:
    """Compile a PrimFunc, an IRModule (its PrimFuncs) or a ``{name: PrimFunc}`` dict for ``target``."""
    from ..codegen import compile_funcs
    from ..target import as_target

    return Module.from_artifact(compile_funcs(func_or_module, as_target(target)))


__all__ = ["BenchmarkResult", "BoundCall", "Module", "PackedFunction", "TimeEvaluator", "build", "load_module"]
