"""Reference executor: a numpy interpreter for any PrimFunc, used as the oracle for schedules and codegen."""
from .interpreter import ReferenceProgram, compile_reference, interpret

__all__ = ["ReferenceProgram", "compile_reference", "interpret"]
