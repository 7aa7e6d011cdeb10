"""The codegen product: object code plus metadata, a pure function of (PrimFuncs, Target).

An ``Artifact`` is what gets saved, shipped to a worker and loaded by the runtime without recompiling:
``object`` (an ELF object for MCJIT), ``metadata`` (JSON: target, functions with their symbols and parameter
specs, whether libgomp is needed) and ``ll`` (optimized LLVM IR text, for ``get_source``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.function import PrimFunc
from ..ir.module import IRModule
from ..target import as_target
from .llvm_codegen import ModuleIR, emit_module
from .llvm_compile import compile_ir
from .lower import lower

FORMAT_VERSION = 1


@dataclass
class Artifact:
    object: bytes
    metadata: dict
    ll: str


def _named_funcs(funcs) -> dict:
    if isinstance(funcs, PrimFunc):
        return {funcs.attrs.get("global_symbol") or funcs.name: funcs}
    if isinstance(funcs, IRModule):
        prims = funcs.prim_funcs()
        if not prims:
            raise ValueError("the IRModule holds no PrimFunc to build")
        return dict(prims)
    if isinstance(funcs, dict):
        for k, f in funcs.items():
            if not isinstance(f, PrimFunc):
                raise TypeError(f"function {k!r} is a {type(f).__name__}, not a PrimFunc")
        return dict(funcs)
    raise TypeError(f"expected a PrimFunc, an IRModule or a dict of PrimFuncs, got {type(funcs).__name__}")


def lower_and_emit(funcs, target) -> ModuleIR:
    """Lowered LLVM IR (llvmlite module) for the functions, before LLVM optimizes it."""
    target = as_target(target)
    lowered = [lower(f, name) for name, f in _named_funcs(funcs).items()]
    return emit_module(lowered, target)


def compile_funcs(funcs, target=None, keep_ll: bool = True) -> Artifact:
    """PrimFunc / IRModule / {name: PrimFunc} -> Artifact for ``target`` (host when None)."""
    target = as_target(target)
    return artifact_from_ir(lower_and_emit(funcs, target), target, keep_ll)


def artifact_from_ir(mir: ModuleIR, target, keep_ll: bool = True) -> Artifact:
    """Compile a ``ModuleIR`` -- possibly extended by the caller with functions of its own that call the
    typed ``__tf_<name>_compute`` functions (a whole-model entry point) -- into an Artifact. Extra exported
    functions are reachable through ``Module``'s loaded object by symbol; only ``mir.functions`` get
    argument-checked wrappers."""
    target = as_target(target)
    code = compile_ir(str(mir.module), target, keep_ll=keep_ll)
    metadata = {
        "format": FORMAT_VERSION,
        "target": target.to_dict(),
        "uses_gomp": mir.uses_gomp,
        "functions": [f.to_json() for f in mir.functions],
    }
    return Artifact(code.object, metadata, code.ll)
