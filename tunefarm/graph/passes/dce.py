"""DeadCodeElimination: drop bindings nothing uses and PrimFuncs no graph function calls."""
from __future__ import annotations

from ...ir.function import PrimFunc
from ...ir.graph_expr import Call, GraphVar
from ...ir.graph_function import DataflowBlock, Function
from ...ir.module import IRModule


def _used_vars(fn: Function) -> set:
    used = {fn.ret} if isinstance(fn.ret, GraphVar) else set()
    for b in reversed(list(fn.bindings())):
        if b.var in used and isinstance(b.value, Call):
            used.update(a for a in b.value.args if isinstance(a, GraphVar))
        elif b.var in used and isinstance(b.value, GraphVar):
            used.add(b.value)
    return used


class DeadCodeElimination:
    def __init__(self, entry_functions=("main",)):
        self.entries = tuple(entry_functions)

    def __call__(self, mod: IRModule) -> IRModule:
        funcs = {}
        called: set = set()
        for name, fn in mod.functions.items():
            if isinstance(fn, Function):
                used = _used_vars(fn)
                blocks = []
                for blk in fn.blocks:
                    keep = [b for b in blk.bindings if b.var in used]
                    if keep:
                        blocks.append(DataflowBlock(keep, [o for o in blk.outputs if o in used]))
                fn = fn.replace(blocks=tuple(blocks))
                for c in fn.calls():
                    if "func" in c.attrs:
                        called.add(c.attrs["func"])
            funcs[name] = fn
        has_graph = any(isinstance(f, Function) for f in funcs.values())
        if has_graph:
            funcs = {k: v for k, v in funcs.items() if not isinstance(v, PrimFunc) or k in called
                     or k in self.entries}
        return IRModule(funcs, mod.attrs)
