"""Loop IDs (``!llvm.loop``) for llvmlite modules: ``distinct !{!self, !{!"llvm.loop.unroll.full"}}``.

LLVM identifies a loop's properties by a *distinct* metadata node whose first operand is the node itself,
attached to the loop's back-edge branch. llvmlite's ``Module.add_metadata`` makes only uniqued nodes without
self-reference, so ``LoopID`` is a small ``MDValue`` that prints itself that way: the module text is right
wherever it is printed, with no rewriting of the IR text afterwards. One LoopID per loop (never shared): when
LLVM unrolls an outer loop it must still be able to tell the inner loops' copies from other loops.
"""
from __future__ import annotations

import re

import llvmlite.ir as ir
from llvmlite.ir.values import MDValue

UNROLL_FULL = "llvm.loop.unroll.full"


class LoopID(MDValue):
    """A distinct, self-referencing loop ID node with the given property nodes."""

    def __init__(self, module: ir.Module, properties):
        super().__init__(module, list(properties), name=str(len(module.metadata)))

    def descr(self, buf):
        refs = ", ".join([self.get_reference()] + [p.get_reference() for p in self.operands])
        buf += (f"distinct !{{ {refs} }}", "\n")

    # identity semantics: two loops with the same properties still have different IDs
    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return id(self)


def unroll_full_loop_id(module: ir.Module) -> LoopID:
    """A new loop ID asking LLVM to unroll the loop completely (its trip count must be a constant)."""
    return LoopID(module, [module.add_metadata([ir.MetaDataString(module, UNROLL_FULL)])])


def mark_back_edge(branch: ir.Instruction, loop_id: LoopID) -> None:
    """Attach ``loop_id`` to a loop's latch branch (where LLVM looks for it)."""
    branch.set_metadata("llvm.loop", loop_id)


def loops_left_to_unroll(ll_text: str) -> int:
    """How many loops in (optimized) LLVM IR text still carry ``llvm.loop.unroll.full``: loops LLVM did not
    unroll (a trip count it could not compute, or a body over its size limit). For tests and benchmarks."""
    node = re.search(r'^(!\d+) = !\{!"' + re.escape(UNROLL_FULL) + r'"\}', ll_text, re.M)
    if node is None:
        return 0
    return len(re.findall(r"^!\d+ = distinct !\{[^\n]*" + re.escape(node.group(1)) + r"\b", ll_text, re.M))
