"""``tvm.build`` and ``tvm.compile``: TVM's two entry points onto tunefarm's compilers.

A module of PrimFuncs (or one PrimFunc) is built by ``runtime.build`` into a runtime module
(``lib["main"](a, b, c)``, ``lib.time_evaluator(...)``); a module with a graph function (``@R.function``,
``BlockBuilder``, ``export_tvm``) is compiled by ``tunefarm.compile`` into an executable that
``relax.VirtualMachine`` runs. ``tvm.compile`` picks by what the module holds, as TVM's and tunefarm's do.
"""
from __future__ import annotations

from .. import graph
from ..ir.function import PrimFunc
from ..ir.module import IRModule
from ..runtime import build as build_tir


def build(mod, target="llvm"):
    """``tvm.build(mod, target="llvm")``: the PrimFuncs of ``mod`` (or one PrimFunc) as a runtime module."""
    if graph.has_graph_function(mod):
        raise TypeError("tvm.build compiles PrimFuncs; a module with @R.function is built with relax.build or "
                        "tvm.compile")
    if not isinstance(mod, (IRModule, PrimFunc)):
        raise TypeError(f"tvm.build takes an IRModule or a PrimFunc, got {type(mod).__name__}")
    return build_tir(mod, target)


def compile(mod, target="llvm"):
    """``tvm.compile(mod, target)``: a relax executable for a model, a runtime module for PrimFuncs only."""
    return graph.compile(mod, target=target)


__all__ = ["build", "compile"]
