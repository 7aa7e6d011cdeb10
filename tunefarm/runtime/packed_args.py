"""Argument checking and pointer packing for compiled functions.

Generated code trusts its arguments completely (a wrong shape reads out of bounds and may kill the
process), so every call path checks first: numpy arrays (TypeError otherwise), exact dtype (TypeError),
shape including symbolic dimensions consistent across parameters (ValueError), C-contiguous (ValueError),
aligned to at least the element size (ValueError), outputs writable and not overlapping another argument
(ValueError: buffers are ``noalias`` in the generated code). Messages name the function, the parameter and
expected vs given. A function called repeatedly runs the same checks natively first (``native_packed_call``)
and comes here only for what those did not accept, so these messages are the only ones a caller sees.

Packing produces the ``void** args`` array of the packed entry: one data pointer per parameter, then a pointer
to the int64 shape array (all parameter shapes concatenated).
"""
from __future__ import annotations

import ctypes

import numpy as np

_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
        "%": lambda a, b: a % b, "min": min, "max": max}


def eval_dim(spec, values: dict):
    """Value of a shape dimension spec (int, symbolic name, or ``[op, a, b]``) given symbol values."""
    if isinstance(spec, int):
        return spec
    if isinstance(spec, str):
        return values.get(spec)
    op, a, b = spec
    x, y = eval_dim(a, values), eval_dim(b, values)
    if x is None or y is None:
        return None
    return _OPS[op](x, y)


def dim_text(spec) -> str:
    if isinstance(spec, (int, str)):
        return str(spec)
    op, a, b = spec
    if op in ("min", "max"):
        return f"{op}({dim_text(a)}, {dim_text(b)})"
    return f"({dim_text(a)} {op} {dim_text(b)})"


class ParamSpec:
    __slots__ = ("name", "dtype", "shape", "written")

    def __init__(self, d: dict):
        self.name = d["name"]
        self.dtype = np.dtype(d["dtype"])
        self.shape = [s if not isinstance(s, list) else list(s) for s in d["shape"]]
        self.written = bool(d.get("written", False))

    def expected_text(self, values: dict | None = None) -> str:
        dims = []
        for s in self.shape:
            v = eval_dim(s, values or {})
            dims.append(str(v) if v is not None else dim_text(s))
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def check_arrays(func_name: str, specs: list, arrays) -> tuple[np.ndarray, list]:
    """Validate ``arrays`` against ``specs``; returns the int64 shape array for the packed entry and the
    arrays' data addresses."""
    if len(arrays) != len(specs):
        names = ", ".join(s.name for s in specs)
        raise TypeError(f"{func_name}() takes {len(specs)} arrays ({names}: inputs then outputs), "
                        f"got {len(arrays)}")
    values: dict = {}
    for spec, a in zip(specs, arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{func_name}(): parameter {spec.name!r} must be a numpy.ndarray, "
                            f"got {type(a).__name__}")
        if a.dtype != spec.dtype:
            raise TypeError(f"{func_name}(): parameter {spec.name!r} expects dtype {spec.dtype}, got {a.dtype}")
        if a.ndim != len(spec.shape):
            raise ValueError(f"{func_name}(): parameter {spec.name!r} expects shape {spec.expected_text()} "
                             f"({len(spec.shape)} dimensions), got shape {a.shape}")
        for dim, got in zip(spec.shape, a.shape):
            if isinstance(dim, str) and dim not in values:
                values[dim] = int(got)
    addresses = []
    for spec, a in zip(specs, arrays):
        for dim, got in zip(spec.shape, a.shape):
            want = eval_dim(dim, values)
            if want != got:
                raise ValueError(f"{func_name}(): parameter {spec.name!r} expects shape "
                                 f"{spec.expected_text(values)}, got shape {a.shape}"
                                 + (f" (symbolic dimensions: {values})" if values else ""))
        if not a.flags.c_contiguous:
            raise ValueError(f"{func_name}(): parameter {spec.name!r} must be C-contiguous "
                             "(use numpy.ascontiguousarray)")
        addr = a.__array_interface__["data"][0]
        addresses.append(addr)
        if a.size and addr % a.itemsize:
            raise ValueError(f"{func_name}(): parameter {spec.name!r} is misaligned: its data address is not a "
                             f"multiple of its element size ({a.itemsize} bytes)")
        if spec.written and not a.flags.writeable:
            raise ValueError(f"{func_name}(): parameter {spec.name!r} is written by the function but the array "
                             "is read-only")
    for i, (spec, a) in enumerate(zip(specs, arrays)):
        if not spec.written or a.size == 0:
            continue
        for j, b in enumerate(arrays):
            if j != i and b.size and np.may_share_memory(a, b):
                raise ValueError(f"{func_name}(): output parameter {spec.name!r} overlaps the memory of parameter "
                                 f"{specs[j].name!r}; pass separate arrays")
    shape = [d for a in arrays for d in a.shape]
    return np.array(shape if shape else [0], dtype=np.int64), addresses


def pack(addresses, shape_array: np.ndarray):
    """The ``void** args`` array (ctypes) for the packed entry: data pointers, then the shape array."""
    ptrs = (ctypes.c_void_p * (len(addresses) + 1))(*addresses)
    ptrs[len(addresses)] = shape_array.__array_interface__["data"][0]
    return ptrs
