"""``create_prim_func``: turn a tensor-expression program into a TensorIR PrimFunc.

The result has the shape the course shows for TVM: a root block; per compute, a loop nest over its axes
(spatial then reduction) around one block named after the compute, whose iteration variables are bound
one-to-one to the loops ("S" for compute axes, "R" for reduce axes), with read/write regions (inferred by
``ir.regions.infer_block_regions``, the rule every block in the system follows) and,
for reductions, an ``init`` storing the reducer's identity. Tensors that are computed but not passed in
the argument list become ``alloc_buffers`` of the root block (the fused matmul + relu example).
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.function import PrimFunc, wrap_root
from ..ir.regions import infer_block_regions
from ..ir.stmt import TRUE, Block, BlockRealize, BufferStore, For, IfThenElse, IterVar, seq
from .reduce import Reduce
from .tensor import ComputeOp, PlaceholderOp, Tensor
from .walk import Rewriter


def _topo_order(outputs) -> list[Tensor]:
    """Tensors reachable from ``outputs``, producers before consumers (post-order DFS)."""
    order: list[Tensor] = []
    seen: set = set()
    for root in outputs:
        if root in seen:
            continue
        stack = [(root, iter(root.op.input_tensors))]
        seen.add(root)
        while stack:
            t, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                order.append(t)
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(nxt.op.input_tensors)))
    return order


def _unique(name: str, used: set) -> str:
    out, k = name, 1
    while out in used:
        out = f"{name}_{k}"
        k += 1
    used.add(out)
    return out


def _block_nest(t: Tensor, bmap: dict, block_name: str):
    op: ComputeOp = t.op
    out = bmap[t.buffer]
    axes = list(op.axis) + list(op.reduce_axis)
    iter_vars = [IterVar(E.Var(a.name, a.dtype), a.dom, a.iter_type) for a in axes]
    vmap = {a: iv.var for a, iv in zip(axes, iter_vars)}
    rw = Rewriter(vmap, bmap)
    out_idx = tuple(iv.var for iv in iter_vars[:len(op.axis)])
    body = op.body
    if isinstance(body, Reduce):
        source = rw.visit(body.source)
        where = rw.visit(body.where) if body.where is not None else None
        update = body.combiner.combine(E.BufferLoad(out, out_idx), source)
        stmt = BufferStore(out, update, out_idx)
        if where is not None:
            stmt = IfThenElse(where, stmt)
        init = BufferStore(out, E.cast(t.dtype, body.combiner.identity(t.dtype)), out_idx)
    else:
        stmt = BufferStore(out, rw.visit(body), out_idx)
        init = None
    block = Block(block_name, iter_vars, (), (), stmt, init)
    reads, writes = infer_block_regions(block)
    block = block.replace(reads=reads, writes=writes)
    loop_vars = [E.Var(f"i{n}", a.dtype) for n, a in enumerate(axes)]
    nest = BlockRealize(tuple(loop_vars), TRUE, block)
    for lv, a in zip(reversed(loop_vars), reversed(axes)):
        nest = For(lv, a.dom.min, a.dom.extent, "serial", nest)
    return nest


def create_prim_func(args, name: str = "main") -> PrimFunc:
    """A PrimFunc taking ``args`` (tensors: inputs, then outputs) that computes the outputs.

    Every placeholder the outputs depend on must be in ``args``; computed tensors not in ``args`` are
    allocated inside the function.
    """
    args = list(args)
    for a in args:
        if not isinstance(a, Tensor):
            raise TypeError(f"create_prim_func arguments must be te Tensors, got {type(a).__name__}: {a!r}")
    if len(set(args)) != len(args):
        raise ValueError("create_prim_func: the same tensor appears twice in the argument list")
    order = _topo_order(args)
    arg_set = set(args)
    for t in order:
        if isinstance(t.op, PlaceholderOp) and t not in arg_set:
            raise ValueError(f"create_prim_func: placeholder {t.name!r} is used by the computation but missing "
                             "from the argument list")
    bmap = {t.buffer: Buffer(t.name, t.buffer.shape, t.dtype) for t in order}
    used_names: set = set()
    nests = [_block_nest(t, bmap, _unique(t.op.name, used_names))
             for t in order if isinstance(t.op, ComputeOp)]
    allocs = [bmap[t.buffer] for t in order if isinstance(t.op, ComputeOp) and t not in arg_set]
    body = wrap_root(seq(*nests) if nests else seq(), allocs)
    return PrimFunc([bmap[t.buffer] for t in args], body, {"global_symbol": name, "tir.noalias": True}, name)
