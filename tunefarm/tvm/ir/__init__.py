"""``tvm.ir``: ``IRModule`` (also importable as ``tvm.ir.module.IRModule``) and structural equality, which the
course uses to check a transformed program against the expected one."""
from ...ir.structural import assert_structural_equal, structural_equal, structural_hash
from . import module
from .module import GlobalVar, IRModule

__all__ = ["GlobalVar", "IRModule", "assert_structural_equal", "module", "structural_equal", "structural_hash"]
