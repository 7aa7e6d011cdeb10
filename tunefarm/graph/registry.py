"""Global registry of Python functions callable from graphs with ``call_dps_packed("env.name", ...)``.

The course registers torch or numpy implementations of ``env.linear`` / ``env.relu`` with
``tvm.register_func``; ``tunefarm.register_func`` is the same decorator. Registered functions use
destination passing: ``f(*inputs, out)`` with numpy arrays, writing the result into ``out``.
"""
from __future__ import annotations

from typing import Callable

_REGISTRY: dict[str, Callable] = {}


def register_func(name, f: Callable | None = None, override: bool = False):
    """Register ``f`` under ``name``: ``@register_func("env.linear", override=True)``, ``register_func(name, f)``,
    or bare ``@register_func`` (the function's own name)."""
    if callable(name) and f is None:  # bare decorator
        return register_func(name.__name__, name, override)
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_func needs a non-empty string name, got {name!r}")

    def do(fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"register_func({name!r}) needs a callable, got {type(fn).__name__}")
        if name in _REGISTRY and _REGISTRY[name] is not fn and not override:
            raise KeyError(f"a function named {name!r} is already registered (pass override=True)")
        _REGISTRY[name] = fn
        return fn

    return do(f) if f is not None else do


def get_func(name: str) -> Callable | None:
    """The function registered under ``name``, or None."""
    return _REGISTRY.get(name)


def list_funcs() -> list[str]:
    return sorted(_REGISTRY)


__all__ = ["get_func", "list_funcs", "register_func"]
