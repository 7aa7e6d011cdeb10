"""Import a user's own Python file by path (a space or a workload named ``"path/to/file.py:name"``).

The file is code the user chose to run (as with ``python file.py``); strings are never evaluated. Each file is
imported once per process under a name derived from its absolute path, so the driver and every worker that
loads the same file get the same module. Relative paths are tried from the current directory, then from the
repository root (so ``"search_spaces/matmul.py:stochastic_schedule_mm"`` works from anywhere).
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class UserCodeError(ValueError):
    """A file or a name in it that cannot be loaded (says which and why)."""


def resolve_path(path: str) -> str:
    for cand in (path, os.path.join(_REPO_ROOT, path)):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    raise UserCodeError(f"no such file {path!r} (looked in {os.getcwd()!r} and {_REPO_ROOT!r})")


def load_attribute(path: str, attr: str, what: str = "space"):
    """Import the Python file at ``path`` (once per absolute path) and return its attribute ``attr``."""
    if not path.endswith(".py"):
        raise UserCodeError(f"{what} file must be a .py file, got {path!r}")
    if not attr.isidentifier():
        raise UserCodeError(f"{what} name {attr!r} in {path!r} is not a Python identifier")
    full = resolve_path(path)
    package_dir = os.path.join(_REPO_ROOT, "search_spaces")
    if os.path.dirname(full) == package_dir:  # one of the shipped spaces: import it as part of its package
        module = importlib.import_module(f"search_spaces.{os.path.basename(full)[:-3]}")
    else:
        modname = "tunefarm_user_" + hashlib.sha1(full.encode()).hexdigest()[:12]
        module = sys.modules.get(modname)
        if module is None:
            spec = importlib.util.spec_from_file_location(modname, full)
            if spec is None or spec.loader is None:
                raise UserCodeError(f"cannot import {full!r}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[modname]
                raise
    if not hasattr(module, attr):
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        raise UserCodeError(f"{full!r} has no {attr!r} (it defines: {', '.join(public[:20])})")
    return getattr(module, attr)
