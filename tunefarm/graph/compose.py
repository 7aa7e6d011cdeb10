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
from ..ir.function import PrimFunc, wrap_root
from ..ir.functor import IRMutator, substitute
from .expr import TensorType


class ComposeError(ValueError):
    """The calls cannot be composed (arity, shape or dtype mismatch)."""


def _dim_expr(d, dtype: str = "int64"):
    return E.const(d, dtype) if isinstance(d, int) else d


def _bind_dims(callee: PrimFunc, arg_types: list[TensorType], where: str) -> dict:
    """Map the callee's symbolic dims to the caller's dims by matching parameter shapes."""
    vmap: dict = {}
    if len(arg_types) != len(callee.params):
        raise ComposeError(f"{where}: {callee.name} takes {len(callee.params)} buffers, got {len(arg_types)}")
    for p, t in zip(callee.params, arg_types):
        if len(p.shape) != len(t.shape):
            raise ComposeError(f"{where}: {callee.name} parameter {p.name} has {len(p.shape)} dims, "
                               f"argument has {len(t.shape)}")
        if p.dtype != t.dtype:
            raise ComposeError(f"{where}: {callee.name} parameter {p.name} is {p.dtype}, argument is {t.dtype}")
        for pd, ad in zip(p.shape, t.shape):
            if isinstance(pd, E.Var):
                prev = vmap.get(pd)
                new = _dim_expr(ad, pd.dtype)
                if prev is not None and not _same_dim(prev, new):
                    raise ComposeError(f"{where}: dim {pd.name} of {callee.name} bound to two sizes")
                vmap[pd] = new
            elif isinstance(pd, E.IntImm) and isinstance(ad, int) and pd.value != ad:
                raise ComposeError(f"{where}: {callee.name} parameter {p.name} expects size {pd.value}, got {ad}")
            elif isinstance(pd, E.IntImm) and not isinstance(ad, int):
                raise ComposeError(f"{where}: {callee.name} parameter {p.name} expects size {pd.value}, got the "
                                   f"symbolic dim {getattr(ad, 'name', ad)}")
    return vmap


def check_signature(callee: PrimFunc, arg_types: list[TensorType], out_type: TensorType, where: str) -> dict:
    """Check a destination-passing call ``callee(*args, out)``; returns the callee's dims bound to the caller's.

    Raises ``ComposeError`` naming the call for a wrong number of arguments, a dtype or rank mismatch, a
    size that differs from a constant dimension, or a symbolic dimension bound to two different sizes.
    """
    if len(arg_types) + 1 != len(callee.params):
        raise ComposeError(f"{where}: {callee.name} takes {len(callee.params)} buffers ({len(callee.params) - 1} "
                           f"inputs and the output), the call passes {len(arg_types)} inputs")
    return _bind_dims(callee, list(arg_types) + [out_type], where)


def _same_dim(a, b) -> bool:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    return a is b


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
        dim_map = _bind_dims(callee, [TensorType(tuple(s.value if isinstance(s, E.IntImm) else s for s in b.shape),
                                                 b.dtype) for b in bufs], name)
        body, inner_allocs = inline_body(callee, bufs, dim_map, used)
        bodies.append(body)
        allocs.extend(inner_allocs)
    return PrimFunc(params, wrap_root(S.seq(bodies), allocs), dict(attrs or {"global_symbol": name}), name)
