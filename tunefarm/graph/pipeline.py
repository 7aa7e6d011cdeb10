"""The graph pipeline before code generation: bind weights, pre-transform their layout, legalize, fuse.

Bound weights are constants, so their layout is chosen at compile time: ``dense(x, W)`` with a constant
``W`` becomes ``matmul(x, W.T)`` with ``W.T`` computed once, so no kernel transposes at run time and the
tuned matmul streams the weight contiguously along its vectorized axis.
"""
from __future__ import annotations

import numpy as np

from ..ir.module import IRModule
from .expr import Call, Constant
from .function import Binding, DataflowBlock, Function
from .passes import BindParams, DeadCodeElimination, FuseOps, FuseTIR, LegalizeOps


def entry_name(mod: IRModule, entry: str | None = None) -> str:
    graph_fns = [k for k, v in mod.functions.items() if isinstance(v, Function)]
    if entry is not None:
        if entry not in graph_fns:
            raise KeyError(f"module has no graph function {entry!r}; it has {graph_fns}")
        return entry
    if len(graph_fns) == 1:
        return graph_fns[0]
    if "main" in graph_fns:
        return "main"
    raise ValueError(f"module has several graph functions {graph_fns}; name the entry")


class FoldConstantWeightLayout:
    """``dense(x, Constant W[, b])`` -> ``matmul(x, Constant W.T)`` (``+ b``)."""

    def __call__(self, mod: IRModule) -> IRModule:
        from . import ops

        out = mod
        for name, fn in mod.functions.items():
            if not isinstance(fn, Function):
                continue
            blocks = []
            changed = False
            for blk in fn.blocks:
                bindings = []
                for b in blk.bindings:
                    v = b.value
                    if isinstance(v, Call) and v.op == "dense" and isinstance(v.args[1], Constant):
                        w = v.args[1]
                        wt = Constant(np.ascontiguousarray(w.data.T), (w.name or "w") + "_T")
                        mm = ops.matmul(v.args[0], wt)
                        if len(v.args) == 3:
                            from .expr import GraphVar

                            tmp = GraphVar(b.var.name + "_mm", mm.type)
                            bindings.append(Binding(tmp, mm))
                            v = ops.add(tmp, v.args[2])
                        else:
                            v = mm
                        changed = True
                    bindings.append(Binding(b.var, v))
                blocks.append(DataflowBlock(bindings, blk.outputs))
            if changed:
                out = out.with_function(name, fn.replace(blocks=tuple(blocks)))
        return out


def prepare(mod: IRModule, params: dict | None = None, entry: str | None = None, fuse: bool = True) -> IRModule:
    """Bind params, fold weight layouts, legalize, fuse, and drop dead code."""
    entry = entry_name(mod, entry)
    if params:
        mod = BindParams(entry, params)(mod)
    mod = FoldConstantWeightLayout()(mod)
    mod = LegalizeOps()(mod)
    if fuse:
        mod = FuseTIR()(FuseOps()(mod))
    return DeadCodeElimination((entry,))(mod)
