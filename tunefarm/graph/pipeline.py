"""The graph pipeline before code generation: bind weights, fold constants, pre-transform weight layouts,
legalize, specialize symbolic kernels to the static shapes they are called with, fuse, drop dead code.

Bound weights are constants, so work on them happens once at compile time: an op whose operands are all
constants (``permute_dims(W)``, a bias reshaped for broadcasting) is evaluated with numpy, and
``dense(x, W)`` with a constant ``W`` becomes ``matmul(x, W.T)`` with ``W.T`` computed once, so no kernel
transposes at run time and the tuned matmul streams the weight contiguously along its vectorized axis.
"""
from __future__ import annotations

import numpy as np

from ..ir.function import PrimFunc
from ..ir.graph_expr import Call, Constant, GraphVar
from ..ir.graph_function import Binding, Function, map_args, map_blocks
from ..ir.module import IRModule
from . import ops
from .passes import BindParams, DeadCodeElimination, FuseOps, FuseTIR, LegalizeOps, SpecializeShapes
from .passes.fuse import group_functions


class GraphError(ValueError):
    """A graph function that is not well formed (a value used before it is bound, a foreign variable...)."""


def entry_name(mod: IRModule, entry: str | None = None) -> str:
    if not isinstance(mod, IRModule):
        raise TypeError(f"expected an IRModule (from @ir_module, BlockBuilder.get() or Module.export()), got "
                        f"{type(mod).__name__}")
    groups = group_functions(mod)
    graph_fns = [k for k, v in mod.functions.items() if isinstance(v, Function) and k not in groups]
    if entry is not None:
        if entry not in graph_fns:
            raise KeyError(f"module has no graph function {entry!r}; it has {graph_fns}")
        return entry
    if len(graph_fns) == 1:
        return graph_fns[0]
    if "main" in graph_fns:
        return "main"
    if not graph_fns:
        raise ValueError("the module has no graph function (@R.function) to compile; tunefarm.compile builds a "
                         "module of PrimFuncs into a runtime module")
    raise ValueError(f"module has several graph functions {graph_fns}; name the entry")


def check_well_formed(fn: Function) -> None:
    """Every argument is a parameter, an earlier binding or a constant; every binding is a call or a value."""
    known = {id(p) for p in fn.params}
    for b in fn.bindings():
        v = b.value
        args = v.args if isinstance(v, Call) else (v,)
        for a in args:
            if isinstance(a, GraphVar) and id(a) not in known:
                raise GraphError(f"{fn.name}: binding {b.var.name} uses {a.name}, which is neither a parameter "
                                 "nor bound earlier in the function")
            if not isinstance(a, (GraphVar, Constant)):
                raise GraphError(f"{fn.name}: binding {b.var.name} has an argument of type {type(a).__name__}")
        if id(b.var) in known:
            raise GraphError(f"{fn.name}: {b.var.name} is bound twice")
        known.add(id(b.var))
    if isinstance(fn.ret, GraphVar) and id(fn.ret) not in known:
        raise GraphError(f"{fn.name}: the returned value {fn.ret.name} is never bound")


def _map_function(fn: Function, rewrite) -> Function:
    """Rebuild ``fn`` binding by binding: ``rewrite(binding, sub) -> list of bindings`` (``sub`` maps args)."""
    mapping: dict = {}
    changed = False

    def sub(a):
        nonlocal changed
        if isinstance(a, GraphVar) and a in mapping:
            changed = True
            return mapping[a]
        return a

    def rebind(b: Binding):
        nonlocal changed
        b = Binding(b.var, map_args(b.value, sub))
        out = rewrite(b, mapping)
        if out is None:
            return b
        changed = True
        return out

    blocks = map_blocks(fn, rebind)
    ret = sub(fn.ret)
    if not changed:
        return fn
    return fn.replace(blocks=blocks, ret=ret)


class FoldConstant:
    """High-level ops whose operands are all constants become constants (evaluated once with numpy)."""

    def __call__(self, mod: IRModule) -> IRModule:
        def rewrite(b: Binding, mapping: dict):
            if isinstance(b.value, Call):
                c = ops.fold(b.value)
                if c is not None:
                    return [Binding(b.var, c)]
            return None

        return _apply(mod, rewrite)


class FoldConstantWeightLayout:
    """``dense(x, Constant W[, b])`` -> ``matmul(x, Constant W.T)`` (``+ b``)."""

    def __call__(self, mod: IRModule) -> IRModule:
        def rewrite(b: Binding, mapping: dict):
            v = b.value
            if not (isinstance(v, Call) and v.op == "dense" and isinstance(v.args[1], Constant)):
                return None
            w = v.args[1]
            wt = Constant(np.ascontiguousarray(w.data.T), (w.name or "w") + "_T")
            mm = ops.matmul(v.args[0], wt)
            if len(v.args) == 2:
                return [Binding(b.var, mm)]
            tmp = GraphVar(b.var.name + "_mm", mm.type)
            return [Binding(tmp, mm), Binding(b.var, ops.add(tmp, v.args[2]))]

        return _apply(mod, rewrite)


def _apply(mod: IRModule, rewrite) -> IRModule:
    out = mod
    for name, fn in mod.functions.items():
        if isinstance(fn, Function):
            new = _map_function(fn, rewrite)
            if new is not fn:
                out = out.with_function(name, new)
    return out


def _propagate_constants(mod: IRModule) -> IRModule:
    """Uses of a var bound to a constant use the constant directly (so later folds and kernels see it)."""

    def rewrite(b: Binding, mapping: dict):
        if isinstance(b.value, Constant):
            mapping[b.var] = b.value
        return None

    return _apply(mod, rewrite)


def prepare(mod: IRModule, params: dict | None = None, entry: str | None = None, fuse: bool = True) -> IRModule:
    """Bind params, fold constants and weight layouts, legalize, fuse, and drop dead code."""
    entry = entry_name(mod, entry)
    for fn in mod.functions.values():
        if isinstance(fn, Function):
            check_well_formed(fn)
    if params:
        mod = BindParams(entry, params)(mod)
    for _ in range(8):  # folding exposes more constants (reshape of a transpose of a weight...)
        before = mod
        mod = _propagate_constants(FoldConstant()(mod))
        if all(before.functions[k] is mod.functions[k] for k in mod.functions):
            break
    mod = FoldConstantWeightLayout()(mod)
    mod = SpecializeShapes()(LegalizeOps()(mod))
    mod = DeadCodeElimination((entry,))(mod)  # drop folded bindings so fusable calls are adjacent
    if fuse:
        mod = FuseTIR()(FuseOps()(mod))
    return mark_layout_free(DeadCodeElimination((entry,))(mod), entry)


def mark_layout_free(mod: IRModule, entry: str) -> IRModule:
    """Record, as TVM does, which kernel parameters are constant weights (``layout_free_buffers``).

    ``compile`` stores those in the order the scheduled kernel reads them (``layout.rewrite_layout``); the
    attribute tells the tuner the same freedom exists (it is part of the workload, so tuning and compile
    agree on keys).
    """
    fn = mod[entry]
    free: dict = {}
    for call in fn.calls():
        name = call.attrs.get("func")
        if not isinstance(mod.functions.get(name), PrimFunc):
            continue
        idx = {i for i, a in enumerate(call.args) if isinstance(a, Constant)}
        free[name] = idx if name not in free else free[name] & idx
    out = mod
    for name, idx in free.items():
        if idx:
            f = mod[name]
            out = out.with_function(name, PrimFunc(f.params, f.body, {**f.attrs, "layout_free_buffers": sorted(idx)},
                                                   f.name))
    return out


__all__ = ["FoldConstant", "FoldConstantWeightLayout", "GraphError", "check_well_formed", "entry_name",
           "mark_layout_free", "prepare"]
