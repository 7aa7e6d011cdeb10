"""The metadata section of a printed module: the arrays bound into it (``BindParams``' weights) as data.

``IRModule.script(show_meta=True)`` prints ``metadata = {"relax.expr.Constant": [entry, ...]}`` before the
module, one entry ``{"dtype": ..., "shape": [...], "base64": ...}`` per array: exact (the raw bytes), compact,
and plain literals, so the text both runs as a Python file and parses back (``from_source``) without
executing or unpickling anything. Without ``show_meta`` a closing comment says the constants were left out.
"""
from __future__ import annotations

import base64

import numpy as np

KEY = "relax.expr.Constant"
OMITTED = "# Metadata omitted. Use show_meta=True in script() method to show it."


def encode_array(a) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "base64": base64.b64encode(a.tobytes()).decode("ascii")}


def decode_array(entry) -> np.ndarray:
    """An array from ``encode_array``'s dict (anything else is returned as an array of itself)."""
    if not isinstance(entry, dict):
        return np.asarray(entry)
    if set(entry) != {"dtype", "shape", "base64"}:
        raise ValueError(f"a metadata entry has keys dtype, shape and base64, got {sorted(entry)}")
    dtype = np.dtype(entry["dtype"])
    if dtype.kind not in "biuf":
        raise ValueError(f"metadata arrays are numeric, got dtype {dtype}")
    data = base64.b64decode(entry["base64"], validate=True)
    shape = tuple(int(d) for d in entry["shape"])
    if len(data) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"metadata entry of shape {shape} and dtype {dtype} has {len(data)} bytes")
    return np.frombuffer(data, dtype).reshape(shape).copy()


def metadata_lines(arrays) -> list[str]:
    lines = [f'metadata = {{"{KEY}": [']
    for a in arrays:
        e = encode_array(a)
        lines.append(f'    {{"dtype": "{e["dtype"]}", "shape": {e["shape"]}, "base64": "{e["base64"]}"}},')
    lines.append("]}")
    return lines


__all__ = ["KEY", "OMITTED", "decode_array", "encode_array", "metadata_lines"]
