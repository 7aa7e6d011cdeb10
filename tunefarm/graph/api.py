"""``tunefarm.compile`` and ``tunefarm.load``: one way to compile what a user has, one way to load what was saved.

``compile`` goes by what it is given:

- a PrimFunc, or an IRModule of PrimFuncs only: a runtime ``Module`` (``runtime.build``; ``lib["name"](*arrays)``,
  destination passing). With ``database=`` every function is built from its best stored schedule
  (``database.best_schedule``), under its own name; a function never tuned there is an error. ``target=None``
  then builds for the target it was tuned for;
- an IRModule with a graph function (``@R.function``, ``BlockBuilder``, ``nn.Module.export``): an ``Executable``
  (``compile.compile_model``) with ``params`` bound as constants: every kernel from its best stored schedule when
  ``database=`` is given, the default schedule otherwise.

``load`` reads back either kind by the file's format (``Module.save`` / ``Executable.save``). The layers that
compile are imported inside ``compile``: ``tunefarm.load`` imports this package and must stay light.
"""
from __future__ import annotations

import os

from ..ir.function import PrimFunc
from ..ir.graph_function import Function
from ..ir.module import IRModule
from ..runtime.module_file import MAGIC
from .executable import load as load_executable


def has_graph_function(mod) -> bool:
    """Whether ``mod`` is a model (an IRModule holding a graph function), not only PrimFuncs."""
    return isinstance(mod, IRModule) and any(isinstance(f, Function) for f in mod.functions.values())


def compile(mod, params: dict | None = None, *, database=None, target=None, pack_weights: bool = True,
            allow_other_versions: bool = False):
    """A runtime Module for PrimFuncs, an Executable for a model (see module doc). ``database``: a path, a
    ``tunefarm.Database`` or a list of them (layered: the first one's record wins a tie). ``pack_weights``
    (models): store constant weights in the order the kernels read them. ``allow_other_versions``: also use
    records another code generator version measured (skipped by default, with a one-line notice)."""
    # the compiler, the database and the schedule layer load here (see the module doc)
    from ..database import open_database
    from ..runtime import build
    from .compile import compile_model

    if has_graph_function(mod):
        return compile_model(mod, params, open_database(database, readonly=True), target, pack_weights,
                             allow_other_versions)
    if not isinstance(mod, (PrimFunc, IRModule)):
        raise TypeError(f"compile takes a PrimFunc or an IRModule, got {type(mod).__name__}")
    if params:
        raise TypeError("params are bound into a model's graph function; this module has only PrimFuncs")
    if database is None:
        return build(mod, target)
    return _build_tuned(mod, open_database(database, readonly=True), target, allow_other_versions)


def _build_tuned(mod, db, target, allow_other_versions: bool):
    """Every PrimFunc of ``mod`` built from its best stored schedule (for the target it was tuned for)."""
    # the compiling layers load here (see the module doc)
    from ..database import best_schedule
    from ..database.code_versions import VersionFilter
    from ..runtime import build
    from ..search.errors import SearchError
    from ..target import Target, as_target

    funcs = ({mod.attrs.get("global_symbol") or mod.name: mod} if isinstance(mod, PrimFunc)
             else mod.prim_funcs())
    scheduled = {}
    versions = VersionFilter(allow_other_versions)
    for name, func in funcs.items():
        best = best_schedule(db, func, target, versions)
        if best is None:
            versions.notice()  # perhaps why: its records are all of another code generator
            where = "" if target is None else f" for target {str(as_target(target))!r}"
            raise SearchError(f"no successful tuning record of {name!r}{where} in {db.path!r}; tune it first")
        scheduled[name] = best.func.with_name(name)
        target = Target(best.record.target) if target is None else target
    versions.notice()
    return build(scheduled, target)


def load(path: str | os.PathLike):
    """A ``Module`` saved by ``Module.save`` or an ``Executable`` saved by ``Executable.save``, by its format
    (no recompilation, no tuning stack)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no saved module or executable at {path!r}")
    with open(path, "rb") as f:
        is_module = f.read(len(MAGIC)) == MAGIC
    if is_module:
        from ..runtime import load_module  # on use, so that importing this package loads no llvmlite

        return load_module(path)
    return load_executable(path)
