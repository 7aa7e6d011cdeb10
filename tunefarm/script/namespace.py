"""What the script namespaces are made of: ``T``'s and ``I``'s classes, the inert ``ScriptOnly`` markers, and
the names the TensorIR parser understands. The namespaces themselves, with the decorators that call the
parser, are made in ``entry.py`` above the parser (as TVM's ``parser/ir/entry.py``); the parser reads these
classes and never the decorators.

Script bodies are never executed: the parser reads them as syntax trees. Python does evaluate decorators and
parameter annotations when it defines a function, so ``T.Buffer((128, 128), "float32")``,
``T.Buffer[(1, T.int64(128)), "float32"]`` and ``T.handle`` must be harmless at run time; every other
script name is a ``ScriptOnly`` marker that does nothing and explains itself if used from plain Python.
"""
from __future__ import annotations

from ..ir.dtype import ALL_TYPES
from ..ir.expr import INTRINSICS

# Every name the TensorIR script parser understands after ``T.`` (checked by tests against the parser).
TIR_NAMES = frozenset({
    "prim_func", "Buffer", "handle", "match_buffer", "alloc_buffer", "allocate", "grid", "serial", "parallel",
    "vectorized", "unroll", "unrolled", "block", "axis", "init", "reads", "writes", "where", "block_attr",
    "func_attr", "evaluate", "max", "min", "Select", "if_then_else", "Cast", "cast", "floordiv", "floormod",
    "min_value", "max_value",
    *ALL_TYPES, *INTRINSICS,
})
AXIS_NAMES = frozenset({"spatial", "reduce", "S", "R", "remap"})
IR_NAMES = frozenset({"ir_module", "module_attrs"})


class ScriptNamespace:
    """Base of script namespaces; ``_script_namespace`` names it for the parser (``"tir"``, ``"ir"``...)."""

    _script_namespace = ""


class ScriptOnly:
    """A script construct referenced from plain Python: callable and indexable, but inert."""

    def __init__(self, name: str):
        self._name = name

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, item):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return ScriptOnly(f"{self._name}.{name}")

    def __iter__(self):
        raise TypeError(f"{self._name} only has a meaning inside a @T.prim_func body (which tunefarm parses, "
                        "never runs)")

    def __repr__(self) -> str:
        return f"<script construct {self._name}>"


class DeferredScriptFunction:
    """A script function defined in a class body: ``ir_module`` parses it with the whole class.

    Decorators inside a class cannot see the class yet, so they return this marker holding the Python
    function (for its closure variables); ``ir_module`` then parses the class source in one go.
    """

    def __init__(self, key: str, func, kwargs: dict):
        self.key = key
        self.__script_source_function__ = func
        self.kwargs = kwargs
        self.__name__ = getattr(func, "__name__", "?")

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a script function inside a class; decorate the class with "
                        "@ir_module (or @I.ir_module) to build an IRModule from it")

    def __repr__(self) -> str:
        return f"<{self.key} {self.__name__} awaiting @ir_module>"


def _in_class_body(frame) -> bool:
    loc = frame.f_locals
    return "__module__" in loc and "__qualname__" in loc and frame.f_code.co_name != "<module>"


def _caller_locals(frame) -> list[dict]:
    """Locals of the scope that applied a decorator (and of the function around a class body)."""
    out = [dict(frame.f_locals)] if frame.f_code.co_name != "<module>" else []
    if _in_class_body(frame) and frame.f_back is not None and frame.f_back.f_code.co_name != "<module>":
        out.append(dict(frame.f_back.f_locals))
    return out


class _BufferAnnotation:
    """What ``T.Buffer(...)`` / ``T.Buffer[...]`` evaluate to in a parameter annotation (only a marker)."""

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, item):
        return self

    def __repr__(self) -> str:
        return "T.Buffer"


class TIRNamespace(ScriptNamespace):
    """``T``: the TensorIR script namespace (``T.prim_func``, ``T.Buffer``, ``T.grid``, ``T.block``, ...)."""

    _script_namespace = "tir"
    Buffer = _BufferAnnotation()

    def __init__(self, prim_func):
        self.prim_func = prim_func  # the decorator: it calls the parser, so it comes from ``entry.py`` above it

    def __getattr__(self, name: str):
        if name in TIR_NAMES:
            return ScriptOnly(f"T.{name}")
        raise AttributeError(f"T.{name} is not part of the TensorIR script subset tunefarm supports")

    def __repr__(self) -> str:
        return "<tunefarm.script.T>"


class IRNamespace(ScriptNamespace):
    """``I``: module-level script names (``I.ir_module``, ``I.module_attrs``)."""

    _script_namespace = "ir"

    def __init__(self, ir_module):
        self.ir_module = ir_module  # the decorator, from ``entry.py`` (as ``TIRNamespace.prim_func``)

    def __getattr__(self, name: str):
        if name in IR_NAMES:
            return ScriptOnly(f"I.{name}")
        raise AttributeError(f"I.{name} is not a module-level script name tunefarm supports")

    def __repr__(self) -> str:
        return "<tunefarm.script.I>"
