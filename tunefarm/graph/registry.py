"""Global registry of Python functions callable from graphs with ``call_dps_packed("env.name", ...)``."""
from __future__ import annotations

from typing import Callable

_REGISTRY: dict[str, Callable] = {}


def register_func(name: str, f: Callable | None = None, override: bool = False):
    """Register ``f`` under ``name`` (usable as a decorator, like ``tvm.register_func``).

    Registered functions use destination passing: ``f(*inputs, out)`` with numpy arrays.
    """

    def do(fn: Callable) -> Callable:
        if name in _REGISTRY and not override:
            raise KeyError(f"a function named {name!r} is already registered (pass override=True)")
        _REGISTRY[name] = fn
        return fn

    return do(f) if f is not None else do


def get_func(name: str) -> Callable | None:
    return _REGISTRY.get(name)


def list_funcs() -> list[str]:
    return sorted(_REGISTRY)
