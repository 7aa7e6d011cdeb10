"""``build``: compile a PrimFunc (or several) for a target and load the result as a ``Module``."""
from __future__ import annotations

from ..codegen import compile_funcs
from ..target import as_target
from .module import Module


def build(func_or_module, target="llvm") -> Module:
    """Compile a PrimFunc, an IRModule (its PrimFuncs) or a ``{name: PrimFunc}`` dict for ``target``."""
    return Module.from_artifact(compile_funcs(func_or_module, as_target(target)))
