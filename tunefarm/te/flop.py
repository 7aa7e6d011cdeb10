"""FLOP count of a PrimFunc, for GFLOP/s figures in the database and the report.

The count multiplies, for every store, the arithmetic operations of the stored value by the extents of the
loops around it (the way TVM's ``estimate_tir_flops`` does), so a 128^3 matmul ``C += A * B`` counts
2 * 128^3. Only *data* arithmetic counts: operations on floats, or on integers derived from loaded values;
index arithmetic, casts, selects and ``init`` stores of constants do not. Math intrinsics count one each.
Meant for workloads as written; on a scheduled program, iterations masked off by a block predicate (a split
by a non-divisor) are counted too, like TVM does.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import simplify
from ..ir.dtype import is_float
from ..ir.function import PrimFunc
from ..ir.functor import substitute
from ..ir.stmt_functor import StmtFunctor

_ARITH = frozenset({"+", "-", "*", "/", "//", "%", "min", "max"})


def _expr_ops(e) -> tuple[int, bool]:
    """(operation count, whether the value depends on data) of an expression."""
    if isinstance(e, E.BufferLoad):
        return 0, True
    if isinstance(e, (E.Var, E.IntImm, E.FloatImm)):
        return 0, is_float(e.dtype)
    if isinstance(e, E.Binary):
        na, da = _expr_ops(e.a)
        nb, db = _expr_ops(e.b)
        data = da or db or is_float(e.dtype)
        counts = data and (e.op in _ARITH or e.op in E.COMPARE_OPS)
        return na + nb + (1 if counts else 0), data
    if isinstance(e, E.Call):
        n = 0
        for a in e.args:
            n += _expr_ops(a)[0]
        return n + 1, True
    if isinstance(e, E.Select):
        nt, dt = _expr_ops(e.true_value)
        nf, df = _expr_ops(e.false_value)
        return max(nt, nf), dt or df
    if isinstance(e, E.Cast):
        n, d = _expr_ops(e.value)
        return n, d or is_float(e.dtype)
    if isinstance(e, E.Not):
        return _expr_ops(e.a)[0], False
    return 0, False


class _Counter(StmtFunctor):
    """Operations of one run of a statement (``vmap`` sizes the symbolic dimensions)."""

    def __init__(self, vmap: dict):
        self.vmap = vmap

    def extent(self, loop: S.For) -> int:
        ext = simplify(substitute(loop.extent, self.vmap)) if self.vmap else loop.extent
        if not isinstance(ext, E.IntImm):
            raise ValueError(f"loop {loop.loop_var.name!r} has symbolic extent {loop.extent!r}; pass "
                             "dims={'name': size} for the symbolic dimensions to estimate_flop")
        return ext.value

    def visit_BufferStore(self, s: S.BufferStore) -> int:
        return _expr_ops(s.value)[0]

    visit_Evaluate = visit_BufferStore

    def visit_SeqStmt(self, s: S.SeqStmt) -> int:
        return sum(self.visit(x) for x in s.seq)

    def visit_For(self, s: S.For) -> int:
        return self.extent(s) * self.visit(s.body)

    def visit_BlockRealize(self, s: S.BlockRealize) -> int:
        return self.visit(s.block)

    def visit_Block(self, s: S.Block) -> int:
        return self.visit(s.body)  # init stores identities: no arithmetic worth counting

    def visit_IfThenElse(self, s: S.IfThenElse) -> int:
        return max(self.visit(s.then_case), self.visit(s.else_case) or 0)

    def visit_Allocate(self, s: S.Allocate) -> int:
        return self.visit(s.body)

    def generic_visit(self, s):
        raise TypeError(f"estimate_flop: unexpected statement {type(s).__name__}")


def _dims_map(func: PrimFunc, dims: Mapping | None) -> dict:
    if not dims:
        return {}
    by_name = {v.name: v for v in func.symbolic_vars()}
    vmap = {}
    for k, v in dims.items():
        var = by_name.get(k) if isinstance(k, str) else k
        if var is None:
            raise ValueError(f"estimate_flop: function {func.name!r} has no symbolic dimension {k!r} "
                             f"(it has {sorted(by_name)})")
        vmap[var] = E.const(int(v), var.dtype)
    return vmap


def estimate_flop(func, dims: Mapping | None = None) -> float:
    """Floating-point operations one call of ``func`` performs (multiply-add counts 2).

    ``dims`` gives sizes for symbolic dimensions, by name or ``Var`` (e.g. ``{"n": 1}``). An IRModule counts
    all of its PrimFuncs (each takes the ``dims`` entries naming its own symbolic dimensions).
    """
    if isinstance(func, PrimFunc):
        return float(_Counter(_dims_map(func, dims)).visit(func.body))
    if isinstance(func, Mapping) and hasattr(func, "prim_funcs"):
        total = 0.0
        for f in func.prim_funcs().values():
            names = {v.name for v in f.symbolic_vars()}
            mine = {k: v for k, v in (dims or {}).items() if (k in names if isinstance(k, str) else True)}
            total += estimate_flop(f, mine)
        return total
    raise TypeError(f"estimate_flop expects a PrimFunc or an IRModule, got {type(func).__name__}")
