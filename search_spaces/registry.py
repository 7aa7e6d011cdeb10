"""Find a stochastic schedule function by registered name or by ``"path/to/file.py:function"``.

A file is imported from its path by ``tunefarm.search.user_code`` (it is the user's own code, which they chose
to run); a string is never evaluated. ``create(name, target)`` makes the space a name selects: ``"auto"`` (the
rule-based ``AutoSpace`` for the target), a registered name or ``"file.py:function"`` (a ``ScheduleFn`` that
remembers where its function came from, so the farm's workers can import the same function to sample the space
themselves). ``resolve_space`` turns whatever a user passes as ``space=`` into a ``SpaceGenerator``.
"""
from __future__ import annotations

import importlib
from typing import Callable

from tunefarm.search.space import AutoSpace, ScheduleFn, SpaceError, SpaceGenerator
from tunefarm.search.user_code import UserCodeError, load_attribute, resolve_path

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


def _find(spec: str) -> tuple[Callable, tuple | None]:
    """The schedule function of a name or ``"file.py:function"``, and where a worker can import it from."""
    if not isinstance(spec, str) or not spec:
        raise SpaceError(f"a space is given as a name or 'file.py:function', got {spec!r}")
    if spec in _EXTRA:
        return _EXTRA[spec], None
    if spec in REGISTERED:
        module, _, attr = REGISTERED[spec].partition(":")
        return getattr(importlib.import_module(module), attr), ("module", module, attr)
    if ":" not in spec:
        raise SpaceError(f"unknown space {spec!r}; registered: {', '.join(registered_names())}; "
                         "or give 'path/to/file.py:function'")
    path, _, attr = spec.rpartition(":")
    try:
        fn = load_attribute(path, attr, "space")
    except UserCodeError as e:
        raise SpaceError(str(e)) from None
    if not callable(fn):
        raise SpaceError(f"{spec!r} is a {type(fn).__name__}, not a schedule function")
    module = getattr(fn, "__module__", "") or ""
    if module.startswith("search_spaces."):
        return fn, ("module", module, fn.__qualname__)
    return fn, ("file", resolve_path(path), attr)


def load_space(spec: str) -> Callable:
    """The schedule function for a registered name or ``"file.py:function"``."""
    return _find(spec)[0]


def create(kind: str = "auto", target=None) -> SpaceGenerator:
    """The space named ``kind``: ``"auto"`` (``AutoSpace`` for ``target``), a registered name or
    ``"path/to/file.py:function"`` (a ``ScheduleFn``)."""
    if kind == "auto":
        return AutoSpace.for_target(target)
    fn, origin = _find(kind)
    return ScheduleFn(fn, name=kind, origin=origin)


def resolve_space(space, target=None) -> SpaceGenerator:
    """``None`` -> the auto space for the target; a name -> ``create(name, target)``; a SpaceGenerator as is; a
    callable -> ScheduleFn."""
    if space is None or isinstance(space, str):
        return create("auto" if space is None else space, target)
    if isinstance(space, SpaceGenerator):
        return space
    if callable(space):
        return ScheduleFn(space)
    raise SpaceError(f"space must be None, 'auto', a schedule function, a SpaceGenerator or 'file.py:function', "
                     f"got {type(space).__name__}")
