"""Find a stochastic schedule function by registered name or by ``"path/to/file.py:function"``.

A file is imported with importlib from its path (it is the user's own code, which they chose to run); a
string is never evaluated. Relative paths are tried from the current directory, then from the repository
root, so ``"search_spaces/matmul.py:stochastic_schedule_mm"`` works from anywhere.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from typing import Callable

from tunefarm.search.space import SpaceError

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> "module:attribute" (modules of this package, imported by name)
REGISTERED: dict[str, str] = {
    "stochastic_schedule_mm": "search_spaces.matmul:stochastic_schedule_mm",
    "multi_level_tiling_mm": "search_spaces.matmul:multi_level_tiling_mm",
    "dense_bias_relu": "search_spaces.dense:dense_bias_relu_space",
    "conv2d": "search_spaces.conv2d:conv2d_space",
    "elementwise": "search_spaces.elementwise:elementwise_space",
}
_EXTRA: dict[str, Callable] = {}


def register_space(name: str, fn: Callable) -> None:
    """Make ``fn`` available as ``space=name`` (in this process)."""
    if not isinstance(name, str) or not name or ":" in name:
        raise SpaceError(f"a space name must be a non-empty string without ':', got {name!r}")
    if not callable(fn):
        raise SpaceError(f"space {name!r} must be callable, got {type(fn).__name__}")
    _EXTRA[name] = fn


def registered_names() -> list[str]:
    return sorted(set(REGISTERED) | set(_EXTRA))


def _resolve_path(path: str) -> str:
    for cand in (path, os.path.join(_REPO_ROOT, path)):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    raise SpaceError(f"no such file {path!r} (looked in {os.getcwd()!r} and {_REPO_ROOT!r})")


def load_attribute(path: str, attr: str, what: str = "space"):
    """Import the Python file at ``path`` (once per absolute path) and return its attribute ``attr``."""
    if not path.endswith(".py"):
        raise SpaceError(f"{what} file must be a .py file, got {path!r}")
    if not attr.isidentifier():
        raise SpaceError(f"{what} name {attr!r} in {path!r} is not a Python identifier")
    full = _resolve_path(path)
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.dirname(full) == here:  # one of ours: import it as part of the package
        module = importlib.import_module(f"search_spaces.{os.path.basename(full)[:-3]}")
        if not hasattr(module, attr):
            raise SpaceError(f"{full!r} has no {attr!r}")
        return getattr(module, attr)
    modname = "tunefarm_user_" + hashlib.sha1(full.encode()).hexdigest()[:12]
    module = sys.modules.get(modname)
    if module is None:
        spec = importlib.util.spec_from_file_location(modname, full)
        if spec is None or spec.loader is None:
            raise SpaceError(f"cannot import {full!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[modname]
            raise
    if not hasattr(module, attr):
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        raise SpaceError(f"{full!r} has no {attr!r} (it defines: {', '.join(public[:20])})")
    return getattr(module, attr)


def load_space(spec: str) -> Callable:
    """The schedule function for a registered name or ``"file.py:function"``."""
    if not isinstance(spec, str) or not spec:
        raise SpaceError(f"a space is given as a name or 'file.py:function', got {spec!r}")
    if spec in _EXTRA:
        return _EXTRA[spec]
    if spec in REGISTERED:
        module, _, attr = REGISTERED[spec].partition(":")
        return getattr(importlib.import_module(module), attr)
    if ":" not in spec:
        raise SpaceError(f"unknown space {spec!r}; registered: {', '.join(registered_names())}; "
                         "or give 'path/to/file.py:function'")
    path, _, attr = spec.rpartition(":")
    fn = load_attribute(path, attr, "space")
    if not callable(fn):
        raise SpaceError(f"{spec!r} is a {type(fn).__name__}, not a schedule function")
    return fn
