"""``tvm.script``: ``from tunefarm.tvm.script import tir as T`` (and ``relax as R``, ``ir as I``) and the
``@tvm.script.ir_module`` decorator are tunefarm's script namespaces, so scripts parse exactly as with
``from tunefarm.script import T, R, ir_module``."""
from ..script import I as ir
from ..script import R as relax
from ..script import T as tir
from ..script import ir_module

__all__ = ["ir", "ir_module", "relax", "tir"]
