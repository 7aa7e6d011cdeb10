"""BindParams: replace function parameters by constant arrays (the model's weights)."""
from __future__ import annotations

import numpy as np

from ...ir.module import IRModule
from ..expr import Call, Constant, GraphVar
from ..function import Binding, DataflowBlock, Function


def rewrite_args(fn: Function, mapping: dict) -> Function:
    """A copy of ``fn`` where every use of a var in ``mapping`` (by identity) is replaced."""

    def sub(a):
        return mapping.get(a, a) if isinstance(a, GraphVar) else a

    blocks = []
    for blk in fn.blocks:
        bindings = []
        for b in blk.bindings:
            v = b.value
            if isinstance(v, Call):
                v = Call(v.op, [sub(a) for a in v.args], v.attrs, v.type)
            else:
                v = sub(v)
            bindings.append(Binding(b.var, v))
        blocks.append(DataflowBlock(bindings, blk.outputs))
    return fn.replace(blocks=tuple(blocks), ret=sub(fn.ret))


class BindParams:
    """``BindParams(func_name, {param_name: array})(mod)``: named params become constants."""

    def __init__(self, func_name: str, params: dict):
        self.func_name = func_name
        self.params = {k: np.asarray(v) for k, v in params.items()}

    def __call__(self, mod: IRModule) -> IRModule:
        fn = mod[self.func_name]
        by_name = {p.name: p for p in fn.params}
        unknown = sorted(set(self.params) - set(by_name))
        if unknown:
            raise KeyError(f"BindParams: {self.func_name} has no parameters {unknown}; it has {sorted(by_name)}")
        mapping = {}
        for name, arr in self.params.items():
            p = by_name[name]
            if p.type.ndim != arr.ndim or str(arr.dtype) != p.dtype or any(
                    isinstance(d, int) and d != s for d, s in zip(p.type.shape, arr.shape)):
                raise ValueError(f"BindParams: {name} is {p.type!r}, array has shape {arr.shape} {arr.dtype}")
            mapping[p] = Constant(arr, name)
        new = rewrite_args(fn, mapping)
        new = new.replace(params=tuple(p for p in fn.params if p not in mapping))
        return mod.with_function(self.func_name, new)
