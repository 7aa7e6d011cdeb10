"""FuseOps + FuseTIR: fuse an anchor kernel (dense, matmul, conv2d, pooling) with the element-wise kernels
that follow it, and chains of element-wise kernels, into single PrimFuncs.

``FuseOps`` groups consecutive ``call_tir`` bindings (a value passed inside a group must have exactly one
use and must not be a function output) and records each group as a ``fused`` call; ``FuseTIR`` composes
the group's PrimFuncs into one (see ``compose``). Fewer kernels means fewer passes over memory and, after
tuning, element-wise work done while the anchor's results are still in registers.
"""
from __future__ import annotations

from collections import Counter

from ...ir.buffer import Buffer
from ...ir.function import PrimFunc
from ...ir.module import IRModule
from ..builder import unique_name
from ..compose import compose
from ..expr import Call, GraphVar, shape_expr_to_ir
from ..function import Binding, DataflowBlock, Function


def kernel_kind(func: PrimFunc) -> str:
    """``elementwise`` when no block reduces, else ``anchor``."""
    from ...schedule.tree import all_block_realizes

    for realize in all_block_realizes(func):
        blk = realize.block
        if blk.name != "root" and any(iv.iter_type == "R" for iv in blk.iter_vars):
            return "anchor"
    return "elementwise"


def _uses(fn: Function) -> Counter:
    c: Counter = Counter()
    for call in fn.calls():
        for a in call.args:
            if isinstance(a, GraphVar):
                c[a] += 1
    if isinstance(fn.ret, GraphVar):
        c[fn.ret] += 1
    return c


class FuseOps:
    """Group ``call_tir`` chains; each group of two or more becomes one ``fused`` call."""

    def __call__(self, mod: IRModule) -> IRModule:
        out = mod
        for name, fn in mod.functions.items():
            if isinstance(fn, Function):
                out = out.with_function(name, self._fuse_function(mod, fn))
        return out

    def _fuse_function(self, mod: IRModule, fn: Function) -> Function:
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
                steps = [(b.value.attrs["func"], b.value.args, b.var) for b in g]
                call = Call("fused", ext_args, {"steps": steps}, g[-1].value.type)
                bindings.append(Binding(g[-1].var, call))
            blocks.append(DataflowBlock(bindings, blk.outputs))
        return fn.replace(blocks=tuple(blocks))


def _buffer_for(value, name: str) -> Buffer:
    return Buffer(name, tuple(shape_expr_to_ir(d) for d in value.type.shape), value.type.dtype)


class FuseTIR:
    """Compose each ``fused`` group's PrimFuncs into one PrimFunc and call it with ``call_tir``."""

    def __call__(self, mod: IRModule) -> IRModule:
        funcs = dict(mod.functions)
        for name, fn in mod.functions.items():
            if not isinstance(fn, Function):
                continue
            blocks = []
            for blk in fn.blocks:
                bindings = []
                for b in blk.bindings:
                    v = b.value
                    if isinstance(v, Call) and v.op == "fused":
                        fname = unique_name(funcs, "fused_" + "_".join(s[0] for s in v.attrs["steps"]))
                        funcs[fname] = self._compose(mod, fname, v, b.var)
                        v = Call("call_tir", v.args, {"func": fname}, v.type)
                    bindings.append(Binding(b.var, v))
                blocks.append(DataflowBlock(bindings, blk.outputs))
            funcs[name] = fn.replace(blocks=tuple(blocks))
        return IRModule(funcs, mod.attrs)

    @staticmethod
    def _compose(mod: IRModule, fname: str, call: Call, out_var: GraphVar) -> PrimFunc:
        bufs: dict = {}
        params = []
        names: set = set()

        def fresh(base: str) -> str:  # buffer names stay unique within the fused function
            name = unique_name(names, base if base.isidentifier() else "p")
            names.add(name)
            return name

        for i, a in enumerate(call.args):
            bufs[a] = _buffer_for(a, fresh(getattr(a, "name", None) or f"p{i}"))
            params.append(bufs[a])
        intermediates = []
        steps = []
        for callee_name, args, var in call.attrs["steps"]:
            if var is out_var:
                buf = _buffer_for(var, fresh("T_out"))
                bufs[var] = buf
            else:
                buf = _buffer_for(var, fresh(var.name))
                bufs[var] = buf
                intermediates.append(buf)
            steps.append((mod[callee_name], [bufs[a] for a in args] + [buf]))
        params.append(bufs[out_var])
        return compose(fname, params, steps, intermediates, {"global_symbol": fname, "tir.noalias": True})


__all__ = ["FuseOps", "FuseTIR", "kernel_kind"]
