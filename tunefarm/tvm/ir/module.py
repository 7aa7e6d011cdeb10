"""``tvm.ir.module.IRModule`` is tunefarm's IRModule (``from_expr``, ``get_global_var``, ``update_func``)."""
from ...ir.module import GlobalVar, IRModule

__all__ = ["GlobalVar", "IRModule"]
