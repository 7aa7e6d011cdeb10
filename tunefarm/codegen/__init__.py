"""Code generation: PrimFuncs to native object code for a Target.

``compile_funcs({name: PrimFunc}, target) -> Artifact`` is a pure function: object code (bytes) plus JSON
metadata describing each function's entry points and parameters. The runtime (``tunefarm.runtime``) loads
artifacts and calls them; nothing here executes generated code.

A whole-model compiler puts several PrimFuncs in one LLVM module: ``lower_and_emit(funcs, target)`` returns
the llvmlite module with, per function, an internal typed ``__tf_<name>_compute(ptr noalias..., i64 dims...)``
and the exported packed entry ``void name(void** args)`` (see ``llvm_codegen``); add a function of your own
that calls the typed ones and compile everything with ``artifact_from_ir``.
"""
from __future__ import annotations

from .artifact import Artifact, artifact_from_ir, compile_funcs, lower_and_emit
from .code_size import CodeSizeError
from .lower import LoweredFunc, lower
from .lower_blocks import LoweringError

__all__ = ["Artifact", "CodeSizeError", "LoweredFunc", "LoweringError", "artifact_from_ir", "compile_funcs", "lower",
           "lower_and_emit"]
