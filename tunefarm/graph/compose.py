"""Compose a sequence of kernel calls into one PrimFunc (FuseTIR, and the whole-model build).

Each callee's body is copied with its parameter buffers replaced by the caller's buffers; values passed
between the calls become allocations of the new root block; symbolic dims of each callee are bound to the
caller's dims. Block names are made unique. The result is an ordinary PrimFunc: schedules already applied
to the callees are kept, and one LLVM function runs the whole sequence.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.call_signature import bind_dims
from ..ir.function import PrimFunc, wrap_root
from ..ir.functor import IRMutator, substitute
from ..ir.graph_expr import TensorType


class _Renamer(IRMutator):
    """Gives blocks unique names and fresh loop/iter vars so composed bodies never share variables."""

    def __init__(self, used: set):
        self.used = used
        self.vmap: dict = {}

    def _fresh(self, v: E.Var) -> E.Var:
        nv = E.Var(v.name, v.dtype)
        self.vmap[v] = nv
        return nv

    def visit_Var(self, v):
        return self.vmap.get(v, v)

    def visit_For(self, node):
        nv = self._fresh(node.loop_var)
        return S.For(nv, self.visit(node.min), self.visit(node.extent), node.kind, self.visit(node.body),
                     node.annotations)

    def visit_Block(self, node):
        ivs = []
        for iv in node.iter_vars:
            ivs.append(S.IterVar(self._fresh(iv.var), S.Range(self.visit(iv.dom.min), self.visit(iv.dom.extent)),
                                 iv.iter_type))
        name = node.name
        k = 1
        while name in self.used:
            name = f"{node.name}_{k}"
            k += 1
        self.used.add(name)
        if node.alloc_buffers:  # a callee used twice must not share its scratch buffers
            bmap = {b: Buffer(b.name, b.shape, b.dtype, b.scope) for b in node.alloc_buffers}
            node = substitute(node, {}, bmap)
        new = self.generic_visit(node)
        return new.replace(name=name, iter_vars=tuple(ivs))


def inline_body(callee: PrimFunc, buffers: list[Buffer], dim_map: dict, used_names: set):
    """The callee's root body and allocations, rewritten onto ``buffers`` (one per callee parameter)."""
    bmap = dict(zip(callee.params, buffers))
    root = callee.root_block
    allocs = []
    for b in root.alloc_buffers:
        nb = Buffer(b.name, tuple(substitute(s, dim_map) for s in b.shape), b.dtype, b.scope)
        bmap[b] = nb
        allocs.append(nb)
    body = substitute(root.body, dim_map, bmap)
    body = _Renamer(used_names).visit(body)
    return body, allocs


def compose(name: str, params: list[Buffer], steps, intermediates: list[Buffer], attrs: dict | None = None) -> PrimFunc:
    """One PrimFunc running ``steps`` in order.

    ``steps`` is a list of ``(callee PrimFunc, [Buffer per callee param])`` where the buffers are drawn from
    ``params`` and ``intermediates``; intermediates become root allocations.
    """
    used: set = set()
    bodies = []
    allocs = list(intermediates)
    for callee, bufs in steps:
        dim_map = bind_dims(callee, [TensorType(tuple(s.value if isinstance(s, E.IntImm) else s for s in b.shape),
                                                 b.dtype) for b in bufs], name)
        body, inner_allocs = inline_body(callee, bufs, dim_map, used)
        bodies.append(body)
        allocs.extend(inner_allocs)
    return PrimFunc(params, wrap_root(S.seq(bodies), allocs), dict(attrs or {"global_symbol": name}), name)
