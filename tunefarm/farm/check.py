"""Checking a candidate's output: deterministic inputs from the workload key and a dtype-aware comparison.

Inputs are derived from the workload key only (a SHA-256 seed, not Python's salted ``hash``), so every
worker on every machine checks a workload against the same numbers. Outputs are pre-filled with deterministic
noise before a run, so a program that forgets to write part of an output differs from the reference there.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..ir.functor import collect_buffer_accesses

# (rtol, atol) per float dtype; atol is scaled by max(1, max |reference|) so large outputs of long reductions
# (whose rounding error grows with their magnitude) are not flagged, while a wrong index or a missing
# accumulation (errors of the order of the values themselves) always is. Integers and bools compare exactly.
FLOAT_TOLERANCE = {"float16": (1e-2, 1e-2), "float32": (1e-3, 1e-4), "float64": (1e-7, 1e-9)}


def workload_seed(workload_key: str) -> int:
    """A seed derived from the workload key only (same on every machine; Python's ``hash`` is salted)."""
    return int.from_bytes(hashlib.sha256(workload_key.encode()).digest()[:8], "little")


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Floats uniform in [-1, 1); integers in [0, 8) (safe as small indices); bools fair coins."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("float"):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    return rng.integers(0, 8, size=shape).astype(dtype)


def output_params(func) -> list[int]:
    """Indices of the parameters the function writes (destination passing: its outputs)."""
    _, writes = collect_buffer_accesses(func.body)
    written = set(writes)
    return [i for i, p in enumerate(func.params) if p in written]


def make_arrays(func, workload_key: str) -> list[np.ndarray]:
    """One array per parameter, deterministic in the workload key: inputs, then outputs pre-filled with noise."""
    rng = np.random.default_rng(workload_seed(workload_key))
    arrays = []
    for p in func.params:
        shape = p.const_shape()
        if shape is None:
            raise ValueError(f"parameter {p.name} has a symbolic shape; the farm measures concrete workloads only")
        arrays.append(random_array(rng, shape, p.dtype))
    return arrays


def tolerance(dtype: str, reference: np.ndarray) -> tuple[float, float] | None:
    """``(rtol, atol)`` for float dtypes (atol scaled by the reference's magnitude); None means exact."""
    if dtype not in FLOAT_TOLERANCE:
        return None
    rtol, atol = FLOAT_TOLERANCE[dtype]
    finite = reference[np.isfinite(reference)]
    scale = float(np.max(np.abs(finite))) if finite.size else 1.0
    return rtol, atol * max(1.0, scale)


def compare_output(name: str, got: np.ndarray, expected: np.ndarray,
                   against: str = "the unscheduled program") -> str | None:
    """None when ``got`` matches ``expected`` within the dtype's tolerance, else a message saying where not."""
    if got.shape != expected.shape:
        return f"output {name}: shape {got.shape} != reference shape {expected.shape}"
    tol = tolerance(str(expected.dtype), expected)
    if tol is None:
        bad = got != expected
    else:
        rtol, atol = tol
        bad = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    nbad = int(np.count_nonzero(bad))
    if nbad == 0:
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    text = (f"output {name}: {nbad} of {expected.size} elements differ from {against}; first at "
            f"{idx}: got {got[idx].item()!r}, expected {expected[idx].item()!r}")
    if tol is not None:
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        text += f"; max abs error {float(np.nanmax(diff)):.3g} (rtol={tol[0]:g}, atol={tol[1]:.3g})"
    return text
