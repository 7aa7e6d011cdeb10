"""LegalizeOps: high-level graph ops become ``call_tir`` to PrimFuncs built from the te op library.

Identical PrimFuncs are shared (one kernel, several calls), which is what task extraction counts as weight.
"""
from __future__ import annotations

from ...ir.graph_expr import Call
from ...ir.graph_function import Binding, DataflowBlock, Function
from ...ir.module import IRModule
from ..builder import BlockBuilder
from ..ops import OPS


def legalize_call(bb: BlockBuilder, call: Call) -> Call:
    if call.op in ("call_tir", "call_dps_packed", "call_func"):
        return call
    op = OPS.get(call.op)
    if op is None:
        raise ValueError(f"LegalizeOps: no lowering for graph op {call.op!r}")
    new = bb.call_te(op.te, *call.args, primfunc_name_hint=call.op, **call.attrs)
    if new.type != call.type:
        raise AssertionError(f"LegalizeOps: {call.op} lowered to {new.type}, expected {call.type}")
    return new


class LegalizeOps:
    def __call__(self, mod: IRModule) -> IRModule:
        bb = BlockBuilder(mod)
        out = {}
        for name, fn in mod.functions.items():
            if not isinstance(fn, Function):
                continue
            blocks = []
            for blk in fn.blocks:
                bindings = [Binding(b.var, legalize_call(bb, b.value) if isinstance(b.value, Call) else b.value)
                            for b in blk.bindings]
                blocks.append(DataflowBlock(bindings, blk.outputs))
            out[name] = fn.replace(blocks=tuple(blocks))
        new = bb.get()
        for name, fn in out.items():
            new = new.with_function(name, fn)
        return new
