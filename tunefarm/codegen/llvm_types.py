"""IR dtypes to llvmlite types, and small helpers every emitter needs.

LLVM 22 only understands opaque pointers; llvmlite's ``alloca`` still labels its result with a typed pointer,
so ``alloca`` here retypes it. ``bool`` is ``i1`` as a value and ``i8`` in memory (numpy's layout).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir.dtype import bits

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()

_FLOATS = {"float16": ir.HalfType(), "float32": ir.FloatType(), "float64": ir.DoubleType()}


def value_type(dtype: str) -> ir.Type:
    """The register type of a scalar of ``dtype``."""
    if dtype in _FLOATS:
        return _FLOATS[dtype]
    if dtype == "bool":
        return I1
    return ir.IntType(bits(dtype))


def storage_type(dtype: str) -> ir.Type:
    """The in-memory type of a buffer element of ``dtype``."""
    return I8 if dtype == "bool" else value_type(dtype)


def vec(t: ir.Type, lanes: int) -> ir.Type:
    return t if lanes == 1 else ir.VectorType(t, lanes)


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint") or dtype == "bool"


def intrinsic_suffix(t: ir.Type) -> str:
    """``f32``, ``v8f32``, ``i64``... as LLVM names overloaded intrinsics."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{intrinsic_suffix(t.element)}"
    if isinstance(t, ir.HalfType):
        return "f16"
    if isinstance(t, ir.FloatType):
        return "f32"
    if isinstance(t, ir.DoubleType):
        return "f64"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    raise TypeError(f"no intrinsic suffix for {t}")


def alloca(builder: ir.IRBuilder, typ: ir.Type, align: int = 64, name: str = "") -> ir.Instruction:
    """An aligned alloca whose result is an opaque pointer (what LLVM 22 parses)."""
    inst = builder.alloca(typ, name=name)
    inst.align = align
    inst.type = PTR
    return inst


def declare(module: ir.Module, name: str, ret: ir.Type, args, attrs=()) -> ir.Function:
    """Get or declare an external/intrinsic function."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name)
        for a in attrs:
            fn.attributes.add(a)
    return fn


def size_of(dtype: str) -> int:
    return 1 if dtype == "bool" else max(1, bits(dtype) // 8)
