"""Arrays whose data starts on a 64-byte boundary (a cache line), like TVM's NDArray allocator.

numpy only promises 16-byte alignment. A vectorized kernel reading 32-byte AVX2 vectors from an array that
starts 16 bytes off a 32-byte boundary splits every other load across two cache lines: the same matmul
128^3 program measured 49 us on 32-aligned arrays and 55-65 us on 16-mod-32 ones. Arrays that kernels are
timed on are therefore allocated here, so a measurement depends on the program, not on where malloc happened
to put the copies.
"""
from __future__ import annotations

import numpy as np

ALIGNMENT = 64


def empty(shape, dtype, alignment: int = ALIGNMENT) -> np.ndarray:
    """An uninitialized C-contiguous array whose data address is a multiple of ``alignment`` bytes."""
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"alignment must be a positive power of two, got {alignment!r}")
    dt = np.dtype(dtype)
    shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start:start + nbytes].view(dt).reshape(shape)


def copy(a: np.ndarray, alignment: int = ALIGNMENT) -> np.ndarray:
    """A C-contiguous copy of ``a`` at an aligned address."""
    out = empty(a.shape, a.dtype, alignment)
    np.copyto(out, a)
    return out


def is_aligned(a: np.ndarray, alignment: int = ALIGNMENT) -> bool:
    return a.ctypes.data % alignment == 0
