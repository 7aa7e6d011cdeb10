"""SpecializeShapes: a PrimFunc with symbolic dims called with static shapes becomes a static PrimFunc.

The course's ``linear0`` is written for any ``(1, m) x (n, m)``; once ``BindParams`` fixed the weights, the
graph calls it with known sizes. Substituting them gives the tuner a workload it can tile (tiling needs
constant extents), the default schedule constant vector loops, and LLVM constant trip counts. A kernel
called with one static signature is replaced under its own name; several signatures give ``name_1``,
``name_2``, ...; calls whose shapes are still symbolic keep the original.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.buffer import Buffer
from ...ir.call_signature import SignatureError, check_signature
from ...ir.function import PrimFunc
from ...ir.functor import substitute
from ...ir.graph_expr import Call
from ...ir.graph_function import Binding, Function, map_blocks
from ...ir.module import IRModule
from ..builder import unique_name


def specialize(func: PrimFunc, dims: dict) -> PrimFunc:
    """``func`` with its symbolic dims replaced (``Var -> IntImm``) in buffer shapes, loops and blocks."""
    from ...schedule.tree import iter_paths  # on use: see the package docstring of tunefarm.graph

    bmap: dict = {}

    def remap(b: Buffer) -> Buffer:
        if b not in bmap:
            bmap[b] = Buffer(b.name, tuple(substitute(s, dims) for s in b.shape), b.dtype, b.scope)
        return bmap[b]

    params = [remap(p) for p in func.params]
    for path in iter_paths(func.body):
        node = path[-1]
        if isinstance(node, S.BlockRealize):
            for b in node.block.alloc_buffers:
                remap(b)
    body = substitute(func.body, dims, bmap)
    return PrimFunc(params, body, dict(func.attrs), func.name)


def _static_dims(callee: PrimFunc, call: Call) -> dict | None:
    """The callee's symbolic dims as constants for this call, or None when some stay symbolic."""
    syms = callee.symbolic_vars()
    if not syms:
        return None
    try:
        bound = check_signature(callee, [a.type for a in call.args], call.type, callee.name)
    except SignatureError:
        return None
    if any(not isinstance(bound.get(v), E.IntImm) for v in syms):
        return None
    return {v: bound[v] for v in syms}


class SpecializeShapes:
    def __call__(self, mod: IRModule) -> IRModule:
        plans: dict = {}  # callee name -> {signature: (dims, calls)}
        symbolic_calls: set = set()
        for fn in mod.functions.values():
            if not isinstance(fn, Function):
                continue
            for call in fn.calls():
                name = call.attrs.get("func")
                callee = mod.functions.get(name) if name else None
                if not isinstance(callee, PrimFunc) or not callee.symbolic_vars():
                    continue
                dims = _static_dims(callee, call)
                if dims is None:
                    symbolic_calls.add(name)
                    continue
                sig = tuple(dims[v].value for v in callee.symbolic_vars())
                plans.setdefault(name, {}).setdefault(sig, (dims, []))[1].append(call)
        if not plans:
            return mod
        funcs = dict(mod.functions)
        rename: dict = {}  # id(call) -> new callee name
        for name, sigs in plans.items():
            callee = mod.functions[name]
            for k, (sig, (dims, calls)) in enumerate(sigs.items()):
                if len(sigs) == 1 and name not in symbolic_calls:
                    new_name = name
                else:
                    new_name = unique_name(funcs, f"{name}_{k + 1}")
                funcs[new_name] = specialize(callee, dims).with_name(new_name)
                for c in calls:
                    rename[id(c)] = new_name
        for fname, fn in mod.functions.items():
            if isinstance(fn, Function):
                funcs[fname] = _rename_calls(fn, rename)
        return IRModule(funcs, mod.attrs)


def _rename_calls(fn: Function, rename: dict) -> Function:
    if not any(id(c) in rename for c in fn.calls()):
        return fn
    def rebind(b: Binding) -> Binding:
        v = b.value
        if isinstance(v, Call) and id(v) in rename:
            return Binding(b.var, Call(v.op, v.args, {**v.attrs, "func": rename[id(v)]}, v.type))
        return b

    return fn.replace(blocks=map_blocks(fn, rebind))


__all__ = ["SpecializeShapes", "specialize"]
