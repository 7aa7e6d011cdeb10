"""FuseOps + FuseTIR: fuse an anchor kernel (dense, matmul, conv2d, pooling) with the element-wise kernels
that follow it, and chains of element-wise kernels, into single PrimFuncs.

As in Relax, ``FuseOps`` groups consecutive ``call_tir`` bindings (a value passed inside a group must have
exactly one use and must not be a function output) and moves each group into a graph function of the module
marked ``Primitive`` (``fused_dense_add`` ...), which the caller calls (``call_func``); the module still
prints, parses and compiles. ``FuseTIR`` composes each such function's PrimFuncs into one PrimFunc of the
same name (see ``compose``), calls it with ``call_tir``, and drops the kernels that now live only inside
the fused ones. Fewer kernels means fewer passes over memory and, after tuning, element-wise work done while
the anchor's results are still in registers.
"""
from __future__ import annotations

from collections import Counter

from ...ir.buffer import Buffer
from ...ir.function import PrimFunc
from ...ir.graph_expr import Call, GraphVar, shape_expr_to_ir
from ...ir.graph_function import Binding, DataflowBlock, Function
from ...ir.module import IRModule
from ..builder import unique_name
from ..compose import compose

PRIMITIVE = "Primitive"  # attribute of the graph functions FuseOps creates (Relax's name)


def kernel_kind(func: PrimFunc) -> str:
    """``elementwise`` when no block reduces, else ``anchor``."""
    from ...schedule.tree import all_block_realizes  # on use: see the package docstring of tunefarm.graph

    for realize in all_block_realizes(func):
        blk = realize.block
        if blk.name != "root" and any(iv.iter_type == "R" for iv in blk.iter_vars):
            return "anchor"
    return "elementwise"


def is_primitive(fn) -> bool:
    """Whether ``fn`` is a group FuseOps made (fused by FuseTIR, never fused again)."""
    return isinstance(fn, Function) and bool(fn.attrs.get(PRIMITIVE))


def group_functions(mod: IRModule) -> set:
    """The graph functions FuseTIR turns into kernels: FuseOps' groups, and any graph function another one calls
    (such a call is how the printed form of FuseOps' output reads, with or without the attribute)."""
    called = {c.attrs["func"] for f in mod.functions.values() if isinstance(f, Function)
              for c in f.calls() if c.op == "call_func"}
    return {name for name, f in mod.functions.items()
            if isinstance(f, Function) and (is_primitive(f) or name in called)}


def _uses(fn: Function) -> Counter:
    c: Counter = Counter()
    for call in fn.calls():
        for a in call.args:
            if isinstance(a, GraphVar):
                c[a] += 1
    if isinstance(fn.ret, GraphVar):
        c[fn.ret] += 1
    return c


def _group_function(name: str, group: list[Binding], ext_args: list) -> Function:
    """The graph function of one group: its external values become parameters, its last value the result."""
    used: set = set()
    vmap: dict = {}
    params = []
    for i, a in enumerate(ext_args):
        hint = getattr(a, "name", None)  # a constant may carry its weight's dotted name (``fc.weight``)
        p = GraphVar(unique_name(used, hint if hint and hint.isidentifier() else f"p{i}"), a.type)
        used.add(p.name)
        vmap[a] = p
        params.append(p)
    bindings = []
    for b in group:
        var = GraphVar(unique_name(used, b.var.name), b.var.type)
        used.add(var.name)
        call = b.value
        bindings.append(Binding(var, Call(call.op, [vmap[a] for a in call.args], call.attrs, call.type)))
        vmap[b.var] = var
    ret = bindings[-1].var
    return Function(name, params, [DataflowBlock(bindings, [ret])], ret, {PRIMITIVE: True})


class FuseOps:
    """Group ``call_tir`` chains; each group of two or more becomes a ``Primitive`` function of the module."""

    def __call__(self, mod: IRModule) -> IRModule:
        funcs = dict(mod.functions)
        groups = group_functions(mod)
        for name, fn in mod.functions.items():
            if isinstance(fn, Function) and name not in groups:
                funcs[name] = self._fuse_function(mod, fn, funcs)
        return IRModule(funcs, mod.attrs)

    def _fuse_function(self, mod: IRModule, fn: Function, funcs: dict) -> Function:
        uses = _uses(fn)
        outputs = {o for blk in fn.blocks for o in blk.outputs} | ({fn.ret} if isinstance(fn.ret, GraphVar) else set())
        blocks = []
        for blk in fn.blocks:
            groups: list[list[Binding]] = []
            for b in blk.bindings:
                v = b.value
                if isinstance(v, Call) and v.op == "call_tir" and groups:
                    last = groups[-1][-1]
                    callee = mod[v.attrs["func"]]
                    lv = last.value
                    if (isinstance(lv, Call) and lv.op == "call_tir" and kernel_kind(callee) == "elementwise"
                            and last.var in v.args and uses[last.var] == 1 and last.var not in outputs):
                        groups[-1].append(b)
                        continue
                groups.append([b])
            bindings = []
            for g in groups:
                if len(g) == 1:
                    bindings.append(g[0])
                    continue
                inner = {b.var for b in g}
                ext_args: list = []
                for b in g:
                    for a in b.value.args:
                        if a not in inner and all(a is not e for e in ext_args):
                            ext_args.append(a)
                gname = unique_name(funcs, "fused_" + "_".join(b.value.attrs["func"] for b in g))
                funcs[gname] = _group_function(gname, g, ext_args)
                bindings.append(Binding(g[-1].var, Call("call_func", ext_args, {"func": gname}, g[-1].value.type)))
            blocks.append(DataflowBlock(bindings, blk.outputs))
        return fn.replace(blocks=tuple(blocks))


def _buffer_for(value, name: str) -> Buffer:
    return Buffer(name, tuple(shape_expr_to_ir(d) for d in value.type.shape), value.type.dtype)


def _calls_to_call_tir(fn: Function, fused: set) -> Function:
    blocks = []
    for blk in fn.blocks:
        bindings = []
        for b in blk.bindings:
            v = b.value
            if isinstance(v, Call) and v.op == "call_func" and v.attrs["func"] in fused:
                v = Call("call_tir", v.args, {"func": v.attrs["func"]}, v.type)
            bindings.append(Binding(b.var, v))
        blocks.append(DataflowBlock(bindings, blk.outputs))
    return fn.replace(blocks=tuple(blocks))


class FuseTIR:
    """Turn each group function (``group_functions``) into one composed PrimFunc of the same name, called with
    ``call_tir``; the PrimFuncs it fused are dropped unless something else still calls them."""

    def __call__(self, mod: IRModule) -> IRModule:
        groups = group_functions(mod)
        if not groups:
            return mod
        funcs: dict = {}
        inlined: set = set()
        for name, fn in mod.functions.items():
            if name in groups:
                funcs[name] = self._compose(mod, name, fn)
                inlined.update(c.attrs["func"] for c in fn.calls())
            else:
                funcs[name] = _calls_to_call_tir(fn, groups) if isinstance(fn, Function) else fn
        still_called = {c.attrs.get("func") for f in funcs.values() if isinstance(f, Function) for c in f.calls()}
        for name in inlined - still_called - groups:
            if isinstance(funcs.get(name), PrimFunc):
                del funcs[name]
        return IRModule(funcs, mod.attrs)

    @staticmethod
    def _compose(mod: IRModule, fname: str, fn: Function) -> PrimFunc:
        bufs: dict = {}
        params = []
        names: set = set()

        def fresh(base: str) -> str:  # buffer names stay unique within the fused function
            name = unique_name(names, base if base.isidentifier() else "p")
            names.add(name)
            return name

        for p in fn.params:
            bufs[p] = _buffer_for(p, fresh(p.name))
            params.append(bufs[p])
        intermediates = []
        steps = []
        for b in fn.bindings():
            call = b.value
            if not (isinstance(call, Call) and call.op == "call_tir"):
                raise ValueError(f"FuseTIR: {fname} binds {b.var.name} to something other than a kernel call")
            buf = _buffer_for(b.var, fresh("T_out" if b.var is fn.ret else b.var.name))
            bufs[b.var] = buf
            if b.var is not fn.ret:
                intermediates.append(buf)
            steps.append((mod[call.attrs["func"]], [bufs[a] for a in call.args] + [buf]))
        params.append(bufs[fn.ret])
        return compose(fname, params, steps, intermediates, {"global_symbol": fname, "tir.noalias": True})


__all__ = ["FuseOps", "FuseTIR", "group_functions", "is_primitive", "kernel_kind"]
