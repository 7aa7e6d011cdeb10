"""``tvm.ir``: ``IRModule`` (also importable as ``tvm.ir.module.IRModule``) and structural equality, which the
course uses to check a transformed program against the expected one (as TVM's, blind to block names)."""
from ...ir.structural import structural_hash
from .structural import assert_structural_equal, structural_equal
from . import module
from .module import GlobalVar, IRModule

__all__ = ["GlobalVar", "IRModule", "assert_structural_equal", "module", "structural_equal", "structural_hash"]
