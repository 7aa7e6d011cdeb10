"""Whole models (layer ``graph``): the Relax subset the course uses, passes, task extraction, and the
compiler that turns a model plus its tuned kernels into one native executable."""
from . import ops, passes
from .builder import BlockBuilder, const, var
from .compile import compile
from .executable import Executable, load
from .expr import Call, Constant, GraphVar, TensorType
from .function import Binding, DataflowBlock, Function
from .pipeline import prepare
from .registry import get_func, register_func
from .tasks import Task, extract_tasks
from .tune_model import tune_model


def VirtualMachine(exe: Executable, device=None) -> Executable:
    """``VirtualMachine(exe)["main"](x)`` as in the course; the device argument is accepted and ignored."""
    return exe


__all__ = ["BlockBuilder", "Binding", "Call", "Constant", "DataflowBlock", "Executable", "Function", "GraphVar",
           "Task", "TensorType", "VirtualMachine", "compile", "const", "extract_tasks", "get_func", "load", "ops",
           "passes", "prepare", "register_func", "tune_model", "var"]
