"""Whole models (layer ``graph``): the Relax subset the course uses, passes, task extraction, and the
compiler that turns a model plus its tuned kernels into one native executable.

Course names map as: ``relax.BlockBuilder`` -> ``BlockBuilder``; ``relax.Var(name, TensorStructInfo(...))``
-> ``Var``/``var``; ``relax.const`` -> ``const``; ``relax.transform.BindParams`` -> ``transform.BindParams``
(also ``BindParams``); ``relax.build`` / ``tvm.compile`` -> ``tunefarm.compile`` (``api.py``: PrimFuncs to a
runtime module, models to an executable; ``compile_model`` is the model compiler);
``relax.VirtualMachine(ex, dev)["main"]`` -> ``VirtualMachine``; ``tvm.register_func`` ->
``tunefarm.register_func``; ``relax.op.*`` -> ``ops``.

The graph IR itself (``GraphVar``, ``Call``, ``Function``, the ops' type rules) lives in ``tunefarm.ir``
(``graph_expr``, ``graph_function``, ``graph_ops``) so that the script parser can build it; this package holds
what is done with it. Its modules import ``te``, ``schedule``, ``codegen``, ``runtime`` and ``database``
inside the functions that use them: ``tunefarm.load`` imports this package, and loading an executable must
not load the compiler or the tuning stack.
"""
from ..ir.graph_expr import Call, Constant, GraphVar, TensorStructInfo, TensorType
from ..ir.graph_function import Binding, DataflowBlock, Function
from ..ir.graph_ops import ShapeError, call_dps_packed, call_tir
from . import ops, passes
from . import passes as transform
from .builder import BlockBuilder, const, var
from .compile import compile_model
from .executable import Executable, ExecutableError
# after ``.compile``: ``compile`` names the function, not the submodule
from .api import compile, has_graph_function, load
from .passes import BindParams, DeadCodeElimination, FuseOps, FuseTIR, LegalizeOps
from .pipeline import prepare
from .registry import get_func, register_func
from .tasks import Task, extract_tasks
from .tune_model import tune_model

Var = GraphVar


def VirtualMachine(exe: Executable, device=None) -> Executable:
    """``VirtualMachine(exe, dev)["main"](x)`` as in the course; the device argument is accepted and ignored."""
    if not isinstance(exe, Executable):
        raise TypeError(f"VirtualMachine takes what tunefarm.compile returns, got {type(exe).__name__}")
    return exe


__all__ = ["BindParams", "BlockBuilder", "Binding", "Call", "Constant", "DataflowBlock", "DeadCodeElimination",
           "Executable", "ExecutableError", "Function", "FuseOps", "FuseTIR", "GraphVar", "LegalizeOps",
           "ShapeError", "Task", "TensorStructInfo", "TensorType", "Var", "VirtualMachine", "call_dps_packed",
           "call_tir", "compile", "compile_model", "const", "extract_tasks", "get_func", "has_graph_function",
           "load", "ops", "passes", "prepare", "register_func", "transform", "tune_model", "var"]
