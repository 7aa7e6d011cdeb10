"""Loading object code into the process with MCJIT, and the native libraries it links against.

One MCJIT engine per loaded module: its code lives as long as the engine, and the engine is closed when the
``LoadedObject`` is garbage collected (after every Python object that could call into it is gone).
``clock_gettime``, ``aligned_alloc``, ``free`` and libm functions resolve from the process itself; libgomp
(``GOMP_parallel``, for parallel loops) is loaded once with RTLD_GLOBAL and ``load_library_permanently`` so
JIT code can call it: the system's ``libgomp.so.1`` first, xgboost's bundled copy as a fallback (found
without importing xgboost).

Memory, measured with ``benchmarks/bench_compile_memory.py`` (2000 tiled 64^3 matmuls with varying tiles
compiled, loaded, called and dropped in one process): RSS went from 119 MB (after 100 warm-up modules) to
280 MB after 2000, about 87 KB per module, growing linearly. Compiling alone (lowering + LLVM O2 + object
emission, no loading) accounts for ~90 KB of it -- LLVM's optimizer leaks that much per pass-manager run --
while loading and closing an engine costs ~2 KB. A process that compiles many modules (a tuning worker)
should therefore be recycled every ~1000 modules (~90 MB).

A segfault in JIT code kills the whole process; argument checks in ``packed_args`` exist so that bad
arguments raise instead.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
import threading

import llvmlite.binding as llvm

_lock = threading.Lock()
_initialized = False
_gomp_path: str | None = None
GOMP_SYMBOLS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads")


def _init() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


def find_libgomp() -> str | None:
    """Path (or soname) of a libgomp: the system's, else the copy bundled in xgboost's wheel."""
    name = ctypes.util.find_library("gomp")
    if name:
        return name
    spec = importlib.util.find_spec("xgboost")  # finds the package without importing it
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        found = sorted(glob.glob(os.path.join(site, "xgboost.libs", "libgomp*.so*")))
        if found:
            return found[0]
    return None


def ensure_libgomp() -> str:
    """Load libgomp into the process so JIT code can call ``GOMP_parallel`` (idempotent)."""
    global _gomp_path
    with _lock:
        if _gomp_path is not None:
            return _gomp_path
        path = find_libgomp()
        if path is None:
            raise RuntimeError("parallel loops need libgomp (GNU OpenMP runtime), which was not found; install "
                               "libgomp1 or build with num_cores=1")
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        llvm.load_library_permanently(path)
        for sym in GOMP_SYMBOLS:  # explicit, so resolution never depends on the dynamic loader's search order
            llvm.add_symbol(sym, ctypes.cast(getattr(lib, sym), ctypes.c_void_p).value)
        _gomp_path = path
        return path


def host_target_machine(cpu: str, features: str) -> llvm.TargetMachine:
    """A fresh TargetMachine (an execution engine takes ownership of the one it is given)."""
    _init()
    return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        cpu=cpu, features=features, opt=3, reloc="default", codemodel="jitdefault", jit=True)


class LoadedObject:
    """Object code loaded into an MCJIT engine; ``address(symbol)`` gives callable function addresses."""

    def __init__(self, object_code: bytes, cpu: str, features: str, needs_gomp: bool = False):
        if needs_gomp:
            ensure_libgomp()
        _init()
        tm = host_target_machine(cpu, features)
        empty = llvm.parse_assembly("", context=llvm.create_context())  # the global context is not thread-safe
        empty.triple = llvm.get_process_triple()
        self._engine = llvm.create_mcjit_compiler(empty, tm)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
        self._engine.finalize_object()

    def address(self, symbol: str) -> int:
        addr = self._engine.get_function_address(symbol)
        if not addr:
            raise RuntimeError(f"symbol {symbol!r} not found in the loaded object code")
        return addr

    def close(self) -> None:
        engine, self._engine = getattr(self, "_engine", None), None
        if engine is not None:
            engine.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: llvmlite may already be gone
            pass
