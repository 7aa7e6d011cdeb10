"""Executables: what ``tunefarm.compile`` returns, callable on numpy arrays, saved and loaded as one file.

A model without Python calls compiles to a *native* executable: every kernel and intermediate buffer in
one LLVM function, so a call crosses into native code once. Its call path is built for batch-1 latency
(``runtime.fastcall``): ``exe(x)`` is a JIT-compiled builtin installed as the instance's ``__call__`` that checks
the arrays, allocates the output with numpy's C API (or takes ``out=``), fills the packed arguments (the
constants' pointers are fixed at load time) and runs the model, ~0.25 us of overhead in all. Anything it
does not accept goes to the Python path below, which raises a clear error (wrong number of inputs, not an
array, wrong dtype or shape, ``out=`` overlapping an input) or runs the call on contiguous copies. Where
the builtin cannot be used, the same checks run in a ctypes-called gate.

A model that calls registered Python functions (``call_dps_packed("env.x")``) runs as a *graph*
executable: the bindings run in order, kernels from one native module, Python functions in between (the
course's mixed modules).

Loading never imports the tuning stack (ray, xgboost): only numpy, llvmlite and the runtime.
"""
from __future__ import annotations

import ctypes
import functools
import io
import json
import logging
import os
import shutil
import tempfile
import zipfile

import numpy as np

from .. import runtime  # its names load on first use
from .registry import get_func

FORMAT_VERSION = 1
log = logging.getLogger("tunefarm.executable")


class ExecutableError(ValueError):
    """A saved executable that cannot be loaded (wrong format, missing parts)."""


def _shape_text(shape_spec) -> tuple:
    return tuple(d if isinstance(d, int) else d["sym"] for d in shape_spec)


def _resolve(shape_spec, env: dict) -> tuple:
    return tuple(d if isinstance(d, int) else env[d["sym"]] for d in shape_spec)


def bind_inputs(specs, arrays, where: str) -> dict:
    """Check inputs against their specs and bind symbolic dims (``{"sym": name}``) from their shapes."""
    if len(arrays) != len(specs):
        raise TypeError(f"{where} takes {len(specs)} input(s) ({', '.join(s['name'] for s in specs)}), "
                        f"got {len(arrays)}")
    env: dict = {}
    for spec, a in zip(specs, arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{where}: input {spec['name']!r} must be a numpy array, got {type(a).__name__}")
        if a.dtype != np.dtype(spec["dtype"]):
            raise TypeError(f"{where}: input {spec['name']!r} must have dtype {spec['dtype']}, got {a.dtype}")
        shape = spec["shape"]
        ok = a.ndim == len(shape)
        if ok:
            for d, n in zip(shape, a.shape):
                if isinstance(d, int):
                    ok = ok and d == n
                else:
                    ok = ok and env.setdefault(d["sym"], n) == n
        if not ok:
            raise ValueError(f"{where}: input {spec['name']!r} must have shape {_shape_text(shape)}, got {a.shape}"
                             + (f" (symbolic dims bound so far: {env})" if env else ""))
    return env


def _usable(a: np.ndarray) -> np.ndarray:
    """``a`` itself when native code can read it directly, else a contiguous aligned copy."""
    if a.flags.c_contiguous and a.flags.aligned:
        return a
    return np.array(a, order="C", copy=True)


class Executable:
    """A compiled model: ``exe(*inputs, out=None) -> numpy array``."""

    def __init__(self, module, meta: dict, constants: list[np.ndarray]):
        self.module = module
        self.meta = meta
        self.constants = []
        for c in constants:
            c = np.array(c, order="C", copy=True)  # our own copy (0-d stays 0-d, unlike ascontiguousarray)
            c.flags.writeable = False  # the compiled code's weights: nobody may change them behind its back
            self.constants.append(c)
        self._kernels: dict = {}
        self._gate = None
        self._n_inputs = len(meta["inputs"])
        out_shape = meta["output"]["shape"]
        self._out_dtype = np.dtype(meta["output"]["dtype"])
        self._static_out = tuple(out_shape) if all(isinstance(d, int) for d in out_shape) else None
        self._out_from_inputs = self._output_shape_plan() if self._static_out is None else None
        self._entry = None
        self._new_out = None
        if meta["kind"] == "native":
            self._entry = module[meta["entry_symbol"]]
            self._gate = self._make_gate()
            if self._gate is not None and self._static_out is not None:
                self._new_out = functools.partial(np.empty, self._static_out, self._out_dtype)
            self._install_native_call()

    # ------------------------------------------------------------------ introspection
    @property
    def kind(self) -> str:
        return self.meta["kind"]

    @property
    def input_specs(self) -> list[dict]:
        return self.meta["inputs"]

    @property
    def kernels(self) -> dict:
        """Kernel name -> where its schedule came from (``tuned`` / ``default``)."""
        return dict(self.meta.get("kernels", {}))

    def __repr__(self) -> str:
        ins = ", ".join(f"{s['name']}: {_shape_text(s['shape'])} {s['dtype']}" for s in self.meta["inputs"])
        return f"<tunefarm.Executable {self.kind} {self.meta['entry']}({ins})>"

    # ------------------------------------------------------------------ calling
    def __call__(self, *inputs, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            new = self._new_out
            if new is not None:  # native, static output shape: the whole fast path is these lines
                result = new()
                try:
                    if self._gate(*inputs, result) == 0:
                        return result
                except (TypeError, ctypes.ArgumentError):  # wrong number of arguments: the checked path says so
                    pass
        return self._call_slow(inputs, out)

    def _call_slow(self, inputs, out) -> np.ndarray:
        """Symbolic output shapes, ``out=``, and everything the gate rejected."""
        gate = self._gate
        if gate is not None and len(inputs) == self._n_inputs:
            result = out
            if result is None:
                try:
                    shape = tuple(inputs[i].shape[j] if j >= 0 else i for i, j in self._out_from_inputs)
                    result = np.empty(shape, self._out_dtype)
                except (AttributeError, IndexError, TypeError, ValueError):
                    result = None
            elif any(np.may_share_memory(result, a) for a in inputs if isinstance(a, np.ndarray)):
                raise ValueError("out= must not share memory with an input")
            if result is not None and gate(*inputs, result) == 0:
                return result
        return self._checked_call(inputs, out)

    def _checked_call(self, inputs, out) -> np.ndarray:
        env = bind_inputs(self.meta["inputs"], inputs, "executable")
        inputs = [_usable(a) for a in inputs]
        out_spec = self.meta["output"]
        want = _resolve(out_spec["shape"], env)
        if out is None:
            out = np.empty(want, dtype=out_spec["dtype"])
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out= must be a numpy array, got {type(out).__name__}")
            if out.shape != want or out.dtype != np.dtype(out_spec["dtype"]):
                raise ValueError(f"out= must have shape {want} and dtype {out_spec['dtype']}, got {out.shape} "
                                 f"{out.dtype}")
            if not (out.flags.c_contiguous and out.flags.aligned and out.flags.writeable):
                raise ValueError("out= must be a writable, C-contiguous, aligned array")
            if any(np.may_share_memory(out, a) for a in inputs):
                raise ValueError("out= must not share memory with an input")
        if self.meta["kind"] == "native":
            args = []
            for kind, i in self.meta["param_order"]:
                args.append(inputs[i] if kind == "input" else self.constants[i] if kind == "const" else out)
            self._entry(*args)
            return out
        return self._run_graph(inputs, env, out)

    def _output_shape_plan(self):
        """For a symbolic output shape: ``(input index, dim index)`` per output dim (``(value, -1)`` if const)."""
        where: dict = {}
        for i, spec in enumerate(self.meta["inputs"]):
            for j, d in enumerate(spec["shape"]):
                if not isinstance(d, int):
                    where.setdefault(d["sym"], (i, j))
        plan = []
        for d in self.meta["output"]["shape"]:
            if isinstance(d, int):
                plan.append((d, -1))
            elif d["sym"] in where:
                plan.append(where[d["sym"]])
            else:
                return None
        return plan

    def _make_gate(self):
        from ..runtime import fastcall  # on use: see the package docstring

        if not fastcall.struct_layout_ok() or (self._static_out is None and self._out_from_inputs is None):
            return None
        try:
            self._gate_owner = fastcall.Gate(self._entry_address(), self._gate_params(), self._n_inputs + 1,
                                             keepalive=(self.module,))
            return self._gate_owner.call
        except Exception as e:  # the gate is an accelerator: without it calls take the checked path
            log.warning("native call gate unavailable (%s); calls use the checked path", e)
            return None

    def _gate_params(self):
        from ..runtime import fastcall  # on use: see the package docstring

        params = []
        specs = self.meta["inputs"]
        for kind, i in self.meta["param_order"]:
            if kind == "const":
                c = self.constants[i]
                params.append(fastcall.GateParam(c.shape, str(c.dtype), const=c))
            elif kind == "input":
                params.append(fastcall.GateParam(_shape_text(specs[i]["shape"]), specs[i]["dtype"], arg=i))
            else:
                o = self.meta["output"]
                params.append(fastcall.GateParam(_shape_text(o["shape"]), o["dtype"], arg=len(specs), written=True))
        return params

    def _install_native_call(self) -> None:
        """Make ``exe(*inputs)`` one builtin call (``fastcall.NativeCall``) when this process allows it."""
        from ..runtime import fastcall  # on use: see the package docstring

        if self._gate is None or not fastcall.native_call_ok():
            return
        out_plan = [d if isinstance(d, int) else d["sym"] for d in self.meta["output"]["shape"]]
        try:
            self._native = fastcall.NativeCall(self._entry_address(), self._gate_params(), self._n_inputs, out_plan,
                                               self.meta["output"]["dtype"], self._call_from_native,
                                               keepalive=(self.module,))
        except Exception as e:  # an accelerator only: the Python path stays correct
            log.warning("native call path unavailable (%s); calls go through Python", e)
            return
        cls = type(self)
        self.__class__ = type(cls.__name__, (cls,), {"__call__": self._native.function, "__doc__": cls.__doc__,
                                                      "__module__": cls.__module__, "__qualname__": cls.__qualname__})

    def _call_from_native(self, *inputs, out: np.ndarray | None = None) -> np.ndarray:
        """What the native ``__call__`` hands over: keywords, and arguments it did not accept."""
        return Executable.__call__(self, *inputs, out=out)

    def _entry_address(self) -> int:
        return self.module._loaded.address(self._entry.symbol)

    # ------------------------------------------------------------------ graph (VM) mode
    def _kernel(self, name: str):
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = self.module[name]
        return k

    def _run_graph(self, inputs, env: dict, out: np.ndarray) -> np.ndarray:
        values: dict = {}
        for spec, a in zip(self.meta["inputs"], inputs):
            values[spec["name"]] = a
        for i, c in enumerate(self.constants):
            values[f"const{i}"] = c
        steps = self.meta["steps"]
        ret = self.meta["ret"]
        for step in steps:
            args = [values[a] for a in step["args"]]
            dst = out if step["var"] == ret else np.empty(_resolve(step["shape"], env), dtype=step["dtype"])
            if step["kind"] == "kernel":
                self._kernel(step["func"])(*args, dst)
            else:
                fn = get_func(step["func"])
                if fn is None:
                    raise KeyError(f"the model calls {step['func']!r}, which is not registered in this process "
                                   "(register it with tunefarm.register_func before calling the executable)")
                fn(*args, dst)
            values[step["var"]] = dst
        result = values[ret]
        if result is not out:
            out[...] = result
        return out

    def time_evaluator(self, number: int = 10, repeat: int = 1, min_repeat_ms: float = 0.0):
        """``f(*inputs) -> BenchmarkResult``: seconds per call of this executable (``number`` calls per repeat,
        into one preallocated output), as the course times a model with ``vm.module.time_evaluator``."""
        from ..runtime.evaluator import time_python_calls  # on use: see the package docstring

        def timed(*inputs):
            out = self(*inputs)  # checks the inputs once and gives the output buffer every timed call reuses
            return time_python_calls(functools.partial(self, *inputs, out=out), number, repeat, min_repeat_ms)

        return timed

    def __getitem__(self, name: str):
        """``vm["main"]``-style access, as with the course's ``relax.VirtualMachine``."""
        if name != self.meta["entry"]:
            raise KeyError(f"executable has entry {self.meta['entry']!r}, not {name!r}")
        return self

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> None:
        """One zip file: the compiled native module, the constants (npz, no pickle) and the metadata."""
        tmp = tempfile.mkdtemp(prefix="tunefarm-exe-")
        try:
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                if self.module is not None:
                    self.module.save(os.path.join(tmp, "module"))
                    z.write(os.path.join(tmp, "module"), "module")
                buf = io.BytesIO()
                np.savez(buf, *self.constants)
                z.writestr("constants.npz", buf.getvalue())
                z.writestr("meta.json", json.dumps({**self.meta, "format_version": FORMAT_VERSION}))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    export_library = save  # TVM's name


def load(path: str | os.PathLike) -> Executable:
    """Load an executable saved with ``Executable.save`` (no recompilation, no tuning stack)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no executable file at {path!r}")
    tmp = tempfile.mkdtemp(prefix="tunefarm-exe-")
    try:
        try:
            z = zipfile.ZipFile(path)
        except zipfile.BadZipFile:
            raise ExecutableError(f"{path!r} is not a tunefarm executable (not a zip file)") from None
        with z:
            names = set(z.namelist())
            if not {"meta.json", "constants.npz"} <= names:
                raise ExecutableError(f"{path!r} is not a tunefarm executable (missing meta.json/constants.npz)")
            meta = json.loads(z.read("meta.json").decode("utf-8"))
            if meta.get("format_version") != FORMAT_VERSION:
                raise ExecutableError(f"{path!r}: executable format {meta.get('format_version')} is not "
                                      f"{FORMAT_VERSION}; recompile it with this tunefarm")
            with np.load(io.BytesIO(z.read("constants.npz")), allow_pickle=False) as npz:
                constants = [npz[f"arr_{i}"] for i in range(len(npz.files))]
            module = None
            if "module" in names:
                mpath = os.path.join(tmp, "module")
                with open(mpath, "wb") as f:
                    f.write(z.read("module"))
                module = runtime.load_module(mpath)
        return Executable(module, meta, constants)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["Executable", "ExecutableError", "bind_inputs", "load"]
