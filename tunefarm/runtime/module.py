"""Compiled modules called on numpy arrays (destination passing: inputs, then preallocated outputs).

``mod["name"](*arrays)`` checks every argument (``packed_args``) and calls the native packed entry once; a
function called repeatedly switches to a builtin that runs the same checks natively (``native_packed_call``:
~0.5 us instead of ~25 us per call) and hands anything it does not accept to the Python checks.
``mod["name"].bind(*arrays)`` checks once and returns a zero-argument callable that makes one ctypes call with
a prebuilt pointer array (the arrays are kept alive by it). ``mod.time_evaluator(...)`` times with the native
loop (``evaluator``). ``mod.save(path)`` / ``load_module(path)`` store and reload the object code without
recompiling; loading is numpy + llvmlite only (no ray, no xgboost, no code generator).

Load time (``benchmarks/bench_codegen.py``, "load_module"): a saved tiled matmul loads in about 1 ms
(file read + MCJIT ``add_object_file`` + symbol lookup) against ~20-30 ms to compile it.
"""
from __future__ import annotations

import ctypes
import functools
import logging
import os

from ..target import Target
from .evaluator import TimeEvaluator
from .jit import LoadedObject
from .module_file import read_module_file, write_module_file
from .native_packed_call import NativePackedCall, native_packed_call_ok
from .packed_args import ParamSpec, check_arrays, pack

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Calls from Python before a function gets its native path: building it costs ~15-20 ms (an MCJIT module), as
# much as several hundred checked calls, so a function called once or twice (a tuning candidate's check run)
# never pays for it, and one called in a loop gets it after a few calls.
NATIVE_AFTER_CALLS = 16
log = logging.getLogger(__name__)


class BoundCall(functools.partial):
    """A function with its arguments fixed: ``f()`` is one native call (no checks, no packing).

    A ``functools.partial`` of the ctypes entry point and the address of a prebuilt ``void*`` array, so the
    call runs without a Python frame (~0.2-0.3 us here); it keeps the arrays and the pointer array alive.
    """

    __slots__ = ("function", "arrays", "_shape", "_ptrs")

    def __new__(cls, function: "PackedFunction", arrays):
        arrays = tuple(arrays)
        shape, addresses = check_arrays(function.name, function.params, arrays)
        ptrs = pack(addresses, shape)
        self = super().__new__(cls, function._entry, ctypes.addressof(ptrs))
        self.function = function
        self.arrays = arrays
        self._shape = shape
        self._ptrs = ptrs
        return self

    @property
    def _args(self) -> int:
        """Address of the ``void*`` argument array (what the native timer takes)."""
        return self.args[0]


class PackedFunction:
    """One compiled PrimFunc of a Module."""

    def __init__(self, module: "Module", info: dict):
        self.module = module  # keeps the code alive as long as this function is reachable
        self.name = info["name"]
        self.symbol = info["symbol"]
        self.params = [ParamSpec(p) for p in info["params"]]
        self.sym_vars = list(info["sym_vars"])
        self.entry_address = module._loaded.address(info["symbol"])
        self._entry = _PACKED(self.entry_address)
        self._calls = 0
        self._native = None

    def __call__(self, *arrays) -> None:
        self._checked_call(*arrays)
        self._calls += 1
        if self._calls == NATIVE_AFTER_CALLS:
            self._install_native_call()

    def _checked_call(self, *arrays) -> None:
        """The Python path: ``check_arrays`` (its errors), then the entry. The native path hands it every call
        it does not accept."""
        shape, addresses = check_arrays(self.name, self.params, arrays)
        self._entry(pack(addresses, shape))

    def _install_native_call(self) -> None:
        """Make ``f(*arrays)`` one builtin call (``native_packed_call``) when this process and ``f`` allow it."""
        if not native_packed_call_ok(self.params):
            return
        try:
            self._native = NativePackedCall(self.entry_address, self.params, self._checked_call,
                                            keepalive=(self.module,))
        except Exception as e:  # an accelerator only: the Python path stays correct
            log.warning("native call path of %s unavailable (%s); calls go through Python", self.name, e)
            return
        cls = type(self)
        self.__class__ = type(cls.__name__, (cls,), {"__call__": self._native.function, "__doc__": cls.__doc__,
                                                      "__module__": cls.__module__, "__qualname__": cls.__qualname__})

    def bind(self, *arrays) -> BoundCall:
        return BoundCall(self, arrays)

    def time_evaluator(self, number: int = 10, repeat: int = 1, min_repeat_ms: float = 0.0,
                       flush_cache: bool = False) -> TimeEvaluator:
        return TimeEvaluator(self, number, repeat, min_repeat_ms, flush_cache)

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.name}: {p.dtype}{p.expected_text()}" for p in self.params)
        return f"<compiled function {self.name}({sig})>"


class Module:
    """A loaded set of compiled functions (one object file, one MCJIT engine)."""

    def __init__(self, object_code: bytes, metadata: dict, ll: str = ""):
        self.metadata = metadata
        self.target = Target.from_dict(metadata["target"])
        if not self.target.is_host_compatible():
            raise RuntimeError(f"this module was built for {self.target} and may use instructions this CPU "
                               f"({Target.host()}) lacks; rebuild it for the host target ('llvm') to run it here")
        self._object = object_code
        self._ll = ll
        tdict = metadata["target"]
        self._loaded = LoadedObject(object_code, tdict["mcpu"], ",".join(tdict.get("mattr", [])),
                                    needs_gomp=bool(metadata.get("uses_gomp")))
        self._functions = {info["name"]: PackedFunction(self, info) for info in metadata["functions"]}

    @staticmethod
    def from_artifact(artifact) -> "Module":
        return Module(artifact.object, artifact.metadata, artifact.ll)

    # ------------------------------------------------------------------ access
    @property
    def function_names(self) -> list[str]:
        return list(self._functions)

    def __getitem__(self, name: str) -> PackedFunction:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"module has no function {name!r}; it has {self.function_names}") from None

    def __contains__(self, name) -> bool:
        return name in self._functions

    get_function = __getitem__

    def symbol_address(self, symbol: str) -> int:
        """Native address of any exported symbol (e.g. a whole-model entry added with ``artifact_from_ir``)."""
        return self._loaded.address(symbol)

    def _single(self) -> PackedFunction:
        if len(self._functions) != 1:
            raise TypeError(f"module has {len(self._functions)} functions {self.function_names}; "
                            "call one by name: mod[name](*arrays)")
        return next(iter(self._functions.values()))

    def __call__(self, *arrays) -> None:
        self._single()(*arrays)

    def time_evaluator(self, name: str, dev=None, number: int = 10, repeat: int = 1, min_repeat_ms: float = 0.0,
                       flush_cache: bool = False) -> TimeEvaluator:
        """TVM's signature; ``dev`` is accepted and ignored (always the CPU)."""
        return self[name].time_evaluator(number, repeat, min_repeat_ms, flush_cache)

    # ------------------------------------------------------------------ persistence / inspection
    def save(self, path) -> None:
        write_module_file(path, self._object, self.metadata, self._ll)

    def export_library(self, path) -> None:  # TVM's name
        self.save(path)

    def get_source(self, fmt: str = "ll") -> str:
        """``"ll"``: optimized LLVM IR; ``"asm"``: the target assembly of it."""
        if fmt in ("ll", "llvm"):
            return self._ll
        if fmt in ("asm", "s"):
            if not self._ll:
                raise ValueError("this module was built without its LLVM IR; rebuild to inspect assembly")
            from ..codegen.llvm_compile import assembly  # on use: a loaded module runs without the compiler

            return assembly(self._ll, self.target)
        raise ValueError(f"unknown source format {fmt!r}; use 'll' or 'asm'")

    def __repr__(self) -> str:
        return f"<tunefarm.runtime.Module {self.function_names} for {self.target.label()}>"


def load_module(path) -> Module:
    """Load a module written by ``Module.save`` (no recompilation)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no module file at {os.fspath(path)!r}")
    object_code, metadata, ll = read_module_file(path)
    return Module(object_code, metadata, ll)
