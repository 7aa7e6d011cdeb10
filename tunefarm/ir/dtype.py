"""Scalar data types, spelled as strings the way numpy and TVMScript spell them."""
from __future__ import annotations

DType = str

FLOAT_TYPES = ("float16", "float32", "float64")
INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
ALL_TYPES = FLOAT_TYPES + INT_TYPES + ("bool",)

_BITS = {"bool": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "float16": 16, "int32": 32, "uint32": 32,
         "float32": 32, "int64": 64, "uint64": 64, "float64": 64}


def check_dtype(dtype: str) -> str:
    if dtype not in _BITS:
        raise TypeError(f"unsupported dtype {dtype!r}; supported: {', '.join(ALL_TYPES)}")
    return dtype


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def bits(dtype: str) -> int:
    return _BITS[check_dtype(dtype)]


def nbytes(dtype: str) -> int:
    return max(1, bits(dtype) // 8)


def result_dtype(a: str, b: str) -> str:
    """Type of a binary arithmetic result: floats win, then the wider integer."""
    if a == b:
        return a
    if is_float(a) or is_float(b):
        fa = bits(a) if is_float(a) else 0
        fb = bits(b) if is_float(b) else 0
        return a if fa >= fb else b
    if a == "bool":
        return b
    if b == "bool":
        return a
    return a if bits(a) >= bits(b) else b
