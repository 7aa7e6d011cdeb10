"""``tvm.relax``: whole models, on tunefarm's graph layer.

``BlockBuilder``, ``Var`` / ``DataflowVar`` (what ``emit`` binds inside ``bb.dataflow()``; a ``Var`` too) /
``TensorStructInfo`` / ``const``, ``Function`` and the passes of ``transform``
are tunefarm's own (``tunefarm.graph``); ``op`` holds the high-level ops; ``build`` / ``vm.build`` compile a
module with ``tunefarm.compile`` and ``VirtualMachine(ex, tvm.cpu())`` runs it on NDArrays; ``frontend.nn``
is ``tunefarm.nn`` with TVM's ``export_tvm``. The older spellings the course still shows
(``relax.Var(name, shape, relax.DynTensorType(ndim, dtype))``) are accepted.
"""
from ...graph import BlockBuilder, Function, TensorStructInfo
from ...ir.graph_expr import DataflowVar
from . import frontend, op, transform, vm
from .expr import DynTensorType, Var, const
from .vm import VirtualMachine, build

# In graph scripts this module reads as ``R``: older Relax printers wrote ops as ``relax.nn.dense(...)``.
_script_namespace = "relax"

__all__ = ["BlockBuilder", "DataflowVar", "DynTensorType", "Function", "TensorStructInfo", "Var", "VirtualMachine", "build", "const",
           "frontend", "op", "transform", "vm"]
