"""``R``: the graph-function script namespace (``@R.function``, ``R.Tensor``, ``R.dataflow``, ``R.call_tir`` ...).

Like ``T``, nothing here runs a script: ``@R.function`` hands the function's source to the parser
(``relax_parser``), which reads it as a syntax tree. Python does evaluate decorators and parameter/return
annotations when a function is defined, so ``R.Tensor((1, "m"), "float32")`` must be harmless at run time;
every other ``R.*`` name is an inert marker that explains itself if used from plain Python.

Importing this module registers the parser (``"relax.function"``) and the ``R`` alias with the script front
end, so ``from tunefarm.script import T, R, ir_module`` and ``from_source`` both know it.
"""
from __future__ import annotations

import sys

from ..ir.graph_expr import TensorType
from .namespace import DeferredScriptFunction, ScriptNamespace, ScriptOnly, _caller_locals, _in_class_body
from .parser import parse_python_function, register_function_parser, register_namespace
from .relax_parser import parse_relax_function

# Every name after ``R.`` the parser understands (tests check the parser handles each one).
R_NAMES = frozenset({
    "function", "Tensor", "dataflow", "output", "call_tir", "call_dps_packed", "func_attr", "const",
    "matmul", "add", "flatten", "reshape", "permute_dims", "nn",
})
R_NN_NAMES = frozenset({"relu", "linear", "dense", "conv2d", "max_pool2d"})
FUNCTION_KWARGS = {"private", "pure"}


def function(func=None, *, private: bool = False, pure: bool = True):
    """``@R.function``: parse the function's source into a graph ``Function`` (deferred inside a class)."""
    kwargs = {"private": private, "pure": pure}

    def decorate(f, frame):
        if _in_class_body(frame):
            return DeferredScriptFunction("relax.function", f, kwargs)
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


R = RelaxNamespace()
register_function_parser("relax.function", parse_relax_function, FUNCTION_KWARGS)
register_namespace("R", R, tvm_name="relax")

__all__ = ["R", "RelaxNamespace", "function"]
