"""The lowering pipeline: a scheduled PrimFunc to a flat loop program the LLVM code generator consumes.

Steps, in order (each its own module):
1. ``compact_buffer_allocations`` from the schedule layer (shrinks ``local`` accumulators to the tile so
   they fit in registers);
2. ``lower_blocks``: blocks to loops (bindings substituted, predicates to ``if``, init guarded);
3. ``alloc_plan``: each intermediate allocated at the lowest common ancestor of its accesses;
4. ``unroll``: the loops to unroll (``unrolled`` ones and ``pragma_auto_unroll_max_step``) decided; they stay
   loops of kind ``unrolled`` that LLVM unrolls completely (a few that the vectorizer needs as constants are
   copied here, see ``unroll.py``);
5. ``flatten``: 1-D buffers, indices simplified under loop bounds, dead branches and unit loops removed.
Loop kinds ``vectorized``, ``parallel`` and ``unrolled`` survive to code generation (``vectorize.py``,
``parallel.py``, ``loop_metadata.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from ..ir.functor import FreeVarVisitor
from ..schedule.primitives.compact import compact_buffer_allocations
from .alloc_plan import plan_allocations
from .code_size import check_code_size
from .flatten import flatten
from .lower_blocks import LoweringError, lower_blocks
from .unroll import unroll_loops

@dataclass
class ShapeBinding:
    """Where the packed entry reads a symbolic dimension: ``shape[param][dim]``."""

    var: E.Var  # the int64 variable used in the lowered body
    name: str
    param: int
    dim: int


@dataclass
class LoweredFunc:
    name: str
    params: tuple  # original Buffers (shapes, dtypes, names for argument checks)
    flat_params: tuple  # their 1-D versions, as used in ``body``
    sym_vars: tuple  # ShapeBinding per symbolic dimension, in ``PrimFunc.symbolic_vars()`` order
    body: S.Stmt


def _shape_bindings(func: PrimFunc, sym_map: dict) -> tuple:
    out = []
    for v in func.symbolic_vars():
        where = None
        for pi, p in enumerate(func.params):
            for di, d in enumerate(p.shape):
                if d is v or (isinstance(d, E.Cast) and d.value is v):
                    where = (pi, di)
                    break
            if where:
                break
        if where is None:
            raise LoweringError(f"function {func.name!r}: symbolic dimension {v.name!r} appears only inside a "
                                "shape expression; it must also be a whole dimension of some parameter so its "
                                "value can be read from the arguments")
        out.append(ShapeBinding(sym_map[v], v.name, where[0], where[1]))
    return tuple(out)


class _FreeVarCheck(FreeVarVisitor):
    def __init__(self, bound: set, fname: str):
        super().__init__(bound)
        self.fname = fname

    def free(self, v: E.Var):
        raise LoweringError(f"function {self.fname!r} uses variable {v.name!r}, which is neither a loop "
                                "variable, a block variable nor a symbolic dimension of a parameter")


def lower(func: PrimFunc, name: str | None = None, unroll_in_ir: bool = False) -> LoweredFunc:
    """Lower one PrimFunc (see the module docstring for the steps). ``unroll_in_ir`` copies every unrolled
    loop's body here instead of leaving it to LLVM (the old, slower pipeline; for comparisons)."""
    if not isinstance(func, PrimFunc):
        raise TypeError(f"lower() takes a PrimFunc, got {type(func).__name__}")
    name = name or func.attrs.get("global_symbol") or func.name
    check_code_size(func, name)  # before anything copies loops: lowering and LLVM would take minutes
    func = compact_buffer_allocations(func, infer_regions=False)  # nothing below reads block regions
    blocks = lower_blocks(func.body, func.symbolic_vars())
    body = plan_allocations(blocks.body, [b for b in blocks.allocations if b not in func.params])
    body = unroll_loops(body, in_ir=unroll_in_ir)
    body, flat_params = flatten(body, func.params, blocks.sym_map)
    bindings = _shape_bindings(func, blocks.sym_map)
    _FreeVarCheck({b.var for b in bindings}, name).visit(body)
    return LoweredFunc(name, tuple(func.params), tuple(flat_params), bindings, body)
