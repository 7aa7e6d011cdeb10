"""The script front end's entry points: ``@T.prim_func``, ``@ir_module`` and the namespaces ``T``, ``I``.

The decorators call the parser, so they live here, above it (as TVM's ``parser/ir/entry.py``), and make the
namespaces and register them with the parser under the names scripts use (``T``, ``I``, ``ir_module``,
``tvm`` and ``from tvm.script import tir``); the parser itself knows only the namespace classes. The decorators
call the parser's functions through its module, so a wrapper installed there (TVM's ported tests defer
programs the front end refuses) is what they call.
"""
from __future__ import annotations

import sys

from .namespace import DeferredScriptFunction, IRNamespace, ScriptNamespace, TIRNamespace, _caller_locals, _in_class_body
from . import parser


def prim_func(func=None, *, private: bool = False, check_well_formed: bool = True):
    """``@T.prim_func`` (or ``@T.prim_func(private=True)``): parse the function's source into a PrimFunc."""

    def decorate(f, frame=None):
        frame = frame or sys._getframe(1)
        if _in_class_body(frame):
            return DeferredScriptFunction("tir.prim_func", f, {"private": private})
        return parser.parse_python_function(f, "tir.prim_func", _caller_locals(frame), {"private": private})

    decorate._script_key = "tir.prim_func"
    if func is None:
        return decorate
    return decorate(func, sys._getframe(1))


prim_func._script_key = "tir.prim_func"


def ir_module(cls):
    """``@ir_module`` on a class whose methods are script functions: an ``IRModule`` of them."""
    frame = sys._getframe(1)
    return parser.parse_python_class(cls, _caller_locals(frame), frame.f_lineno)


ir_module._script_key = "ir.ir_module"

T = TIRNamespace(prim_func)
I = IRNamespace(ir_module)  # noqa: E741 - the name TVMScript uses


class _TVMScriptCompat(ScriptNamespace):
    """``tvm.script`` as seen by ``from_source``: lets pasted course code keep ``@tvm.script.ir_module``."""

    _script_namespace = "tvm.script"
    tir = T
    ir = I
    ir_module = staticmethod(ir_module)


class _TVMCompat(ScriptNamespace):
    _script_namespace = "tvm"
    script = _TVMScriptCompat()


parser.register_namespace("T", T, tvm_name="tir")
parser.register_namespace("I", I, tvm_name="ir")
parser.register_namespace("ir_module", ir_module, tvm_name="ir_module")
parser.register_namespace("tvm", _TVMCompat())
