"""``tvm.ir.assert_structural_equal`` / ``structural_equal`` with TVM's rule for block names.

TVM's structural equality ignores a block's name (``BlockNode::SEqualReduce`` compares iteration variables,
buffers, regions, body, init and annotations only); tunefarm's keeps it, because a trace addresses blocks by
name, so two programs whose blocks are named differently do not replay the same trace and must not share a
workload key. The facade answers as TVM does: programs equal up to block names are equal here. A function
without ``global_symbol`` compares as if it had its own name there, as every function TVM's parser reads has.
"""
from __future__ import annotations

from ...ir import stmt as S
from ...ir import structural as _core
from ...ir.function import PrimFunc
from ...ir.module import IRModule
from ...ir.stmt_functor import StmtMutator


class _Unnamed(StmtMutator):
    def visit_Block(self, s: S.Block):
        return self.generic_visit(s).replace(name="")


def _unnamed(node):
    if isinstance(node, PrimFunc):
        func = node.with_body(_Unnamed().visit(node.body))
        # TVM's parser gives every (public) prim_func the attribute global_symbol = its name
        return func if "global_symbol" in func.attrs else func.with_attr("global_symbol", func.name)
    if isinstance(node, IRModule):
        return IRModule({k: _unnamed(f) for k, f in node.functions.items()}, node.attrs)
    if isinstance(node, S.Stmt):
        return _Unnamed().visit(node)
    return node


def structural_equal(a, b, map_free_vars: bool = True) -> bool:
    return _core.structural_equal(_unnamed(a), _unnamed(b), map_free_vars)


def assert_structural_equal(a, b, map_free_vars: bool = True) -> None:
    """Raises tunefarm's report of the first difference (with the real block names) when the programs differ
    in more than block names."""
    if not _core.structural_equal(_unnamed(a), _unnamed(b), map_free_vars):
        _core.assert_structural_equal(a, b, map_free_vars)
        _core.assert_structural_equal(_unnamed(a), _unnamed(b), map_free_vars)


__all__ = ["assert_structural_equal", "structural_equal"]
