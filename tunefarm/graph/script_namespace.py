"""``R``: the graph-function script namespace (``@R.function``, ``R.Tensor``, ``R.dataflow``, ``R.call_tir`` ...).

Like ``T``, nothing here runs a script: ``@R.function`` hands the function's source to the parser
(``script_parser``), which reads it as a syntax tree. Python does evaluate decorators and parameter/return
annotations when a function is defined, so ``R.Tensor((1, "m"), "float32")`` must be harmless at run time;
every other ``R.*`` name is an inert marker that explains itself if used from plain Python.

Creating ``R`` registers the parser (``"relax.function"``) and the ``R`` alias with ``tunefarm.script``, so
``from tunefarm.script import T, R, ir_module`` and ``from_source`` both know it.

Import order: ``tunefarm.script`` imports ``R`` from here, and ``R``'s class derives from
``tunefarm.script``'s ``ScriptNamespace``. When this module is imported first, importing the script package
re-enters it before ``R`` exists; the module ``__getattr__`` below then builds ``R`` on demand (the script
package's own modules are loaded by that point), so either import order works.
"""
from __future__ import annotations

import sys

# Every name after ``R.`` the parser understands (tests check the parser handles each one).
R_NAMES = frozenset({
    "function", "Tensor", "dataflow", "output", "call_tir", "call_dps_packed", "func_attr", "const",
    "matmul", "add", "flatten", "reshape", "permute_dims", "nn",
})
R_NN_NAMES = frozenset({"relu", "linear", "dense", "conv2d", "max_pool2d"})
FUNCTION_KWARGS = {"private", "pure"}

_built: dict = {}


def function(func=None, *, private: bool = False, pure: bool = True):
    """``@R.function``: parse the function's source into a graph ``Function`` (deferred inside a class)."""
    from ..script.namespace import DeferredScriptFunction, _caller_locals, _in_class_body

    kwargs = {"private": private, "pure": pure}

    def decorate(f, frame):
        if _in_class_body(frame):
            return DeferredScriptFunction("relax.function", f, kwargs)
        from ..script.parser import parse_python_function

        return parse_python_function(f, "relax.function", _caller_locals(frame), kwargs)

    if func is None:
        def deco(f):
            return decorate(f, sys._getframe(1))

        deco._script_key = "relax.function"
        return deco
    return decorate(func, sys._getframe(1))


function._script_key = "relax.function"


class _TensorAnnotation:
    """What ``R.Tensor(...)`` evaluates to: a ``TensorType`` when the shape is concrete, so plain Python may use
    it as a type (``relax.Var("x", R.Tensor((1, 784), "float32"))``), else a marker (``(1, "m")`` in an
    annotation: the parser reads the source, never this value)."""

    def __call__(self, shape=None, dtype: str = "float32", *args, **kwargs):
        from .expr import TensorType

        if args or kwargs or not isinstance(shape, (tuple, list)):
            return self
        try:
            return TensorType(shape, dtype)
        except (TypeError, ValueError):
            return self

    def __getitem__(self, item):
        return self

    def __repr__(self) -> str:
        return "R.Tensor"


def _build():
    """Define the namespace classes (they need ``tunefarm.script``'s base class) and register the parser."""
    from ..script.namespace import ScriptNamespace, ScriptOnly
    from ..script.parser import register_function_parser, register_namespace

    class RelaxNNNamespace(ScriptNamespace):
        """``R.nn``: ``relu``, ``linear``, ``conv2d``, ``max_pool2d``."""

        _script_namespace = "relax.nn"

        def __getattr__(self, name: str):
            if name in R_NN_NAMES:
                return ScriptOnly(f"R.nn.{name}")
            raise AttributeError(f"R.nn.{name} is not part of the graph script subset tunefarm supports "
                                 f"(known: {', '.join(sorted(R_NN_NAMES))})")

        def __repr__(self) -> str:
            return "<tunefarm R.nn>"

    class RelaxNamespace(ScriptNamespace):
        """``R``: graph functions in script form (the Relax subset of the MLC course)."""

        _script_namespace = "relax"
        function = staticmethod(function)
        Tensor = _TensorAnnotation()
        nn = RelaxNNNamespace()

        def __getattr__(self, name: str):
            if name in R_NAMES:
                return ScriptOnly(f"R.{name}")
            raise AttributeError(f"R.{name} is not part of the graph script subset tunefarm supports "
                                 f"(known: {', '.join(sorted(R_NAMES))})")

        def __repr__(self) -> str:
            return "<tunefarm.script.R>"

    r = RelaxNamespace()
    register_function_parser("relax.function", _parse, FUNCTION_KWARGS)
    register_namespace("R", r, tvm_name="relax")
    _built.update(R=r, RelaxNamespace=RelaxNamespace)
    return r


def _parse(ctx, fdef, kwargs):
    """The ``"relax.function"`` parser (imported on first use: ``script_parser`` itself imports the script
    package, which may be initializing right now)."""
    from .script_parser import parse_relax_function

    return parse_relax_function(ctx, fdef, kwargs)


def __getattr__(name: str):
    if name in ("R", "RelaxNamespace"):
        if not _built:
            _build()
        return _built[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


import tunefarm.script  # noqa: E402,F401 - may re-enter this module (see the docstring); R exists after it

R = __getattr__("R")
RelaxNamespace = __getattr__("RelaxNamespace")

__all__ = ["R", "RelaxNamespace", "function"]
