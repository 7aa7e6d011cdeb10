"""What a worker needs to search a task, as JSON: the space and the postprocessors by name, never as code.

Search work runs on the farm's workers, so a task must be rebuilt there from plain data: the workload travels
as its JSON text (sent once per worker), the space and the postprocessors as *specs*:

- ``AutoSpace`` and the built-in postprocessors by class name and constructor arguments;
- a user's stochastic schedule function by where it can be imported from: its module and qualified name
  (a function of an importable module), or the ``.py`` file it was loaded from (``"file.py:function"`` on the
  command line). The worker imports that module or file, exactly as the driver did; nothing is pickled.

A function a worker cannot import (defined in ``__main__``, in a notebook, or as a closure) has no spec:
``space_spec`` returns None and the driver samples its designs itself, while workers still replay,
postprocess, hash, featurize, mutate and measure them.
"""
from __future__ import annotations

import hashlib
import importlib
import json

from .postprocs import (Postproc, RewriteParallelVectorizeUnroll, RewriteReductionBlock, VerifyCodeSize,
                        VerifyProgram)
from .space import AutoSpace, ScheduleFn, SpaceError, SpaceGenerator
from .user_code import load_attribute

_POSTPROCS = {cls.__name__: cls for cls in (RewriteReductionBlock, RewriteParallelVectorizeUnroll, VerifyProgram,
                                            VerifyCodeSize)}


class SpecError(ValueError):
    """A spec that cannot be turned back into a space or postprocessors on this worker."""


def space_spec(space: SpaceGenerator) -> dict | None:
    """A JSON description of ``space`` a worker can rebuild it from, or None when it has none."""
    if type(space) is AutoSpace:
        return {"kind": "auto", "args": space.init_args()}
    if type(space) is ScheduleFn:
        origin = space.origin
        if origin is not None:
            return {"kind": "fn", "origin": list(origin), "name": space.name}
        fn = space.fn
        module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if not module or module == "__main__" or "<" in qualname:
            return None
        try:
            if _attribute(importlib.import_module(module), qualname) is not fn:
                return None
        except (ImportError, AttributeError):
            return None
        return {"kind": "fn", "origin": ["module", module, qualname], "name": space.name}
    return None


def space_from_spec(spec: dict) -> SpaceGenerator:
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind == "auto":
        return AutoSpace(**spec["args"])
    if kind == "fn":
        where, a, b = spec["origin"]
        if where == "module":
            fn = _attribute(importlib.import_module(a), b)
        elif where == "file":
            fn = load_attribute(a, b)
        else:
            raise SpecError(f"unknown schedule function origin {where!r}")
        return ScheduleFn(fn, name=spec.get("name"), origin=(where, a, b))
    raise SpecError(f"unknown space spec {spec!r:.200}")


def postprocs_spec(postprocs: list[Postproc]) -> list | None:
    """``[[class name, constructor arguments], ...]`` for built-in postprocessors, else None."""
    out = []
    for p in postprocs:
        if _POSTPROCS.get(type(p).__name__) is not type(p):
            return None
        out.append([type(p).__name__, dict(vars(p))])
    return out


def postprocs_from_spec(spec: list) -> list[Postproc]:
    try:
        return [_POSTPROCS[name](**args) for name, args in spec]
    except (KeyError, TypeError, ValueError) as e:
        raise SpecError(f"bad postprocessor spec: {e}") from None


def spec_digest(spec: dict) -> str:
    """A short stable name of a task spec (workers cache rebuilt tasks under it)."""
    return hashlib.sha1(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def _attribute(module, qualname: str):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


__all__ = ["SpecError", "SpaceError", "space_spec", "space_from_spec", "postprocs_spec", "postprocs_from_spec",
           "spec_digest"]
