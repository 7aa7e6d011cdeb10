"""Devices: tunefarm compiles for the CPU it runs on, so ``tvm.cpu()`` is the only device there is."""
from __future__ import annotations


class Device:
    """``tvm.cpu(0)``: accepted wherever TVM takes a device; anything else is refused with a clear error."""

    __slots__ = ("device_id",)

    def __init__(self, device_id: int = 0):
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"device ids are integers >= 0, got {device_id!r}")
        self.device_id = device_id

    @property
    def device_type(self) -> int:
        return 1  # kDLCPU

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.device_id == self.device_id

    def __hash__(self) -> int:
        return hash(("cpu", self.device_id))

    def __repr__(self) -> str:
        return f"cpu({self.device_id})"


def cpu(dev_id: int = 0) -> Device:
    return Device(dev_id)


def device(dev_type="cpu", dev_id: int = 0) -> Device:
    """``tvm.device("cpu")`` / ``tvm.device("llvm")``; tunefarm generates code for CPUs only."""
    if dev_type not in ("cpu", "llvm", 1):
        raise ValueError(f"tunefarm runs on the CPU only; there is no {dev_type!r} device")
    return Device(dev_id)


__all__ = ["Device", "cpu", "device"]
