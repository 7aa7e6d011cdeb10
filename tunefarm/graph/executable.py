"""Executables: what ``tunefarm.compile`` returns, callable on numpy arrays, saved and loaded as one file.

A model without Python calls compiles to a *native* executable: every kernel and intermediate buffer in
one LLVM function, so a call crosses into native code once. A model that calls registered Python
functions (``call_dps_packed("env.x")``) runs as a *graph* executable: the bindings run in order, kernels
from one native module, Python functions in between (the course's mixed modules).

Loading never imports the tuning stack (ray, xgboost): only numpy, llvmlite and the runtime.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import zipfile

import numpy as np

FORMAT_VERSION = 1


def _resolve(shape_spec, env: dict) -> tuple:
    out = []
    for d in shape_spec:
        if isinstance(d, int):
            out.append(d)
        else:
            out.append(env[d["sym"]])
    return tuple(out)


def _bind_inputs(specs, arrays, where: str) -> dict:
    """Check inputs against their specs and bind symbolic dims (``{"sym": name}``) from their shapes."""
    if len(arrays) != len(specs):
        raise TypeError(f"{where} takes {len(specs)} inputs ({', '.join(s['name'] for s in specs)}), "
                        f"got {len(arrays)}")
    env: dict = {}
    for spec, a in zip(specs, arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{where}: input {spec['name']} must be a numpy array, got {type(a).__name__}")
        if str(a.dtype) != spec["dtype"]:
            raise TypeError(f"{where}: input {spec['name']} must be {spec['dtype']}, got {a.dtype}")
        shape = spec["shape"]
        ok = a.ndim == len(shape)
        if ok:
            for d, n in zip(shape, a.shape):
                if isinstance(d, int):
                    ok = ok and d == n
                else:
                    ok = ok and env.setdefault(d["sym"], n) == n
        if not ok:
            shown = tuple(d if isinstance(d, int) else d["sym"] for d in shape)
            raise ValueError(f"{where}: input {spec['name']} must have shape {shown}, got {a.shape}")
    return env


class Executable:
    """A compiled model: ``exe(*inputs) -> numpy array``."""

    def __init__(self, module, meta: dict, constants: list[np.ndarray]):
        self.module = module
        self.meta = meta
        self.constants = [np.ascontiguousarray(c) for c in constants]
        self._kernels: dict = {}
        if meta["kind"] == "native":
            self._entry = module[meta["entry_symbol"]]

    @property
    def kind(self) -> str:
        return self.meta["kind"]

    @property
    def input_specs(self):
        return self.meta["inputs"]

    def __call__(self, *inputs: np.ndarray) -> np.ndarray:
        env = _bind_inputs(self.meta["inputs"], inputs, "executable")
        out_spec = self.meta["output"]
        out = np.empty(_resolve(out_spec["shape"], env), dtype=out_spec["dtype"])
        if self.meta["kind"] == "native":
            self._entry(*inputs, *self.constants, out)
            return out
        return self._run_graph(inputs, env, out)

    # ------------------------------------------------------------------ graph (VM) mode
    def _kernel(self, name: str):
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = self.module[name]
        return k

    def _run_graph(self, inputs, env: dict, out: np.ndarray) -> np.ndarray:
        from .registry import get_func

        values: dict = {}
        for spec, a in zip(self.meta["inputs"], inputs):
            values[spec["name"]] = a
        for i, c in enumerate(self.constants):
            values[f"const{i}"] = c
        steps = self.meta["steps"]
        for n, step in enumerate(steps):
            args = [values[a] for a in step["args"]]
            dst = out if n == len(steps) - 1 and step["var"] == self.meta["ret"] else np.empty(
                _resolve(step["shape"], env), dtype=step["dtype"])
            if step["kind"] == "kernel":
                self._kernel(step["func"])(*args, dst)
            else:
                fn = get_func(step["func"])
                if fn is None:
                    raise KeyError(f"the model calls {step['func']!r}, which is not registered in this process "
                                   "(tunefarm.register_func)")
                fn(*args, dst)
            values[step["var"]] = dst
        result = values[self.meta["ret"]]
        if result is not out:
            out[...] = result
        return out

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
            self.module.save(os.path.join(tmp, "module"))
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                for root, _, files in os.walk(tmp):
                    for f in files:
                        full = os.path.join(root, f)
                        z.write(full, os.path.relpath(full, tmp))
                buf = io.BytesIO()
                np.savez(buf, *self.constants)
                z.writestr("constants.npz", buf.getvalue())
                z.writestr("meta.json", json.dumps({**self.meta, "format_version": FORMAT_VERSION}))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def load(path: str | os.PathLike) -> Executable:
    """Load an executable saved with ``Executable.save`` (no recompilation, no tuning stack)."""
    from ..runtime import load_module

    tmp = tempfile.mkdtemp(prefix="tunefarm-exe-")
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.startswith("/") or ".." in name.split("/"):
                    raise ValueError(f"{path}: unsafe member name {name!r}")
            z.extractall(tmp)
        with open(os.path.join(tmp, "meta.json")) as f:
            meta = json.load(f)
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{path}: executable format {meta.get('format_version')} is not {FORMAT_VERSION}")
        with np.load(os.path.join(tmp, "constants.npz"), allow_pickle=False) as npz:
            constants = [npz[f"arr_{i}"] for i in range(len(npz.files))]
        module = load_module(os.path.join(tmp, "module"))
        return Executable(module, meta, constants)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["Executable", "load"]
