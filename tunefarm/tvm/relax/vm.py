"""``relax.build`` (also ``relax.vm.build``) and ``relax.VirtualMachine``: a model compiled by
``tunefarm.compile`` and run on NDArrays.

``vm["main"](*arrays)`` returns an NDArray; ``vm.module.time_evaluator("main", dev, number=100)(*arrays)``
times calls of the compiled model (``.mean`` seconds per call), as the course measures a model before and after
swapping in a tuned kernel.
"""
from __future__ import annotations

from ...graph import compile_model
from ...graph.executable import Executable
from ..device import Device
from ..nd import NDArray


def build(mod, target="llvm", params: dict | None = None) -> Executable:
    """``relax.build(mod, target="llvm")``: compile a module with a graph function (``params`` are bound)."""
    return compile_model(mod, params, target=target)


def _check_device(device) -> None:
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"the device is tvm.cpu(), got {type(device).__name__}")


class _EntryFunction:
    """``vm["main"]``: calls the executable and returns its result as an NDArray."""

    __slots__ = ("_exe",)

    def __init__(self, exe: Executable):
        self._exe = exe

    def __call__(self, *inputs) -> NDArray:
        return self._exe(*inputs).view(NDArray)


class _VMModule:
    """``vm.module``: the compiled model's timer."""

    __slots__ = ("_exe",)

    def __init__(self, exe: Executable):
        self._exe = exe

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0.0):
        """``f(*inputs) -> BenchmarkResult`` timing ``number`` calls per repeat of entry ``func_name``."""
        _check_device(dev)
        self._exe[func_name]  # raises KeyError naming the entry
        return self._exe.time_evaluator(number, repeat, min_repeat_ms)


class VirtualMachine:
    """``relax.VirtualMachine(ex, tvm.cpu())``: ``vm["main"](*arrays)``, ``vm.module.time_evaluator(...)``."""

    def __init__(self, exe: Executable, device=None):
        if not isinstance(exe, Executable):
            raise TypeError(f"VirtualMachine takes what relax.build / tvm.compile returns for a model, got "
                            f"{type(exe).__name__}")
        _check_device(device)
        self._exe = exe
        self.module = _VMModule(exe)

    def __getitem__(self, func_name: str) -> _EntryFunction:
        self._exe[func_name]  # raises KeyError naming the entry
        return _EntryFunction(self._exe)


__all__ = ["VirtualMachine", "build"]
