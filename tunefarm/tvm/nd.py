"""``tvm.nd``: arrays handed to and returned by compiled code.

``NDArray`` is a numpy array (a subclass, so everything in tunefarm that takes numpy arrays takes it as it
is). ``tvm.nd.array(x)`` copies ``x`` as TVM's does (C order, 64-byte aligned like TVM's allocator), so two
arrays made from one source never share memory and writing one never changes ``x``. Without copies: the
arrays compiled code returns (``vm["main"](...)``), ``.numpy()`` (the same memory seen as a plain numpy array)
and ``from_dlpack``. There is one device, the CPU, so nothing ever moves. ``torch.from_dlpack(a)`` works on it
as on any numpy array.
"""
from __future__ import annotations

import numpy as np

from ..runtime import aligned
from .device import Device, cpu


class NDArray(np.ndarray):
    """A numpy array under TVM's name, with ``.numpy()`` and ``.device``."""

    def numpy(self) -> np.ndarray:
        """The same memory as a plain numpy array (no copy)."""
        return self.view(np.ndarray)

    @property
    def device(self) -> Device:
        return cpu()


def _check_device(device) -> None:
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"device must be a tvm device such as tvm.cpu(), got {type(device).__name__}")


def array(source, device: Device | None = None) -> NDArray:
    """``tvm.nd.array(x, device=tvm.cpu())``: a copy of ``x`` as an NDArray (see the module doc)."""
    _check_device(device)
    src = np.asarray(source)
    if src.dtype == object:
        raise TypeError("tvm.nd.array takes numeric data, got Python objects")
    return aligned.copy(src).view(NDArray)


def from_dlpack(tensor) -> NDArray:
    """A tensor of another framework (``torch``) seen as an NDArray, without a copy (``tvm.nd.from_dlpack``)."""
    return np.from_dlpack(tensor).view(NDArray)


def empty(shape, dtype: str = "float32", device: Device | None = None) -> NDArray:
    """An uninitialized NDArray (``tvm.nd.empty``)."""
    _check_device(device)
    return np.empty(tuple(shape), dtype=dtype).view(NDArray)


__all__ = ["NDArray", "array", "empty", "from_dlpack"]
