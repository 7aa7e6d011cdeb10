"""The objects users import, decorator dispatch, and the extension points other front ends use."""
from __future__ import annotations

import ast

import pytest

import tunefarm
from tunefarm.ir.function import PrimFunc
from tunefarm.ir.module import IRModule
from tunefarm.ir.structural import structural_equal
from tunefarm.script import I, ParseError, T, from_source, ir_module
from tunefarm.script import parser as script_parser
from tunefarm.script.expr_parser import _EXPR_CALLS
from tunefarm.script.namespace import AXIS_NAMES, TIR_NAMES, DeferredScriptFunction, ScriptNamespace
from tunefarm.script.tir_parser import _DIRECTIVES, _LOOP_KINDS


def test_annotations_are_inert_at_definition_time():
    # Python evaluates these when it defines a function; they must not fail or do anything
    assert T.Buffer((128, 128), "float32") is T.Buffer
    assert T.Buffer[(1, T.int64(128)), "float32"] is T.Buffer
    assert repr(T.handle) == "<script construct T.handle>"
    with pytest.raises(TypeError, match="only has a meaning inside a @T.prim_func"):
        list(T.grid(4, 4))
    with pytest.raises(AttributeError, match="not part of the TensorIR script subset"):
        T.thread_binding


def test_every_documented_t_name_is_handled_by_the_parser():
    from tunefarm.ir.dtype import ALL_TYPES
    from tunefarm.ir.expr import INTRINSICS

    handled = (set(_EXPR_CALLS) | set(_DIRECTIVES) | set(_LOOP_KINDS) | set(ALL_TYPES) | set(INTRINSICS)
               | {"prim_func", "Buffer", "handle", "match_buffer", "alloc_buffer", "allocate", "grid", "block",
                  "axis", "init"})
    assert TIR_NAMES <= handled, TIR_NAMES - handled
    assert AXIS_NAMES == {"spatial", "reduce", "S", "R", "remap"}


def test_prim_func_in_a_plain_class_is_deferred_until_ir_module():
    class Holder:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

    assert isinstance(Holder.__dict__["f"], DeferredScriptFunction)
    with pytest.raises(TypeError, match="decorate the class with @ir_module"):
        Holder.__dict__["f"]()


def test_i_ir_module_and_module_attrs():
    @I.ir_module
    class Mod:
        I.module_attrs({"system_lib_prefix": "lib_"})

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

    assert isinstance(Mod, IRModule) and Mod.attrs == {"system_lib_prefix": "lib_"}
    assert isinstance(Mod["f"], PrimFunc)
    again = from_source(Mod.script())
    assert structural_equal(Mod, again) and again.attrs == Mod.attrs


def test_ir_module_reports_undecorated_method_at_its_line():
    with pytest.raises(ParseError, match="has no script decorator") as info:
        @ir_module
        class Mod:
            def helper(self):
                return 1

    assert info.value.filename == __file__


def test_from_source_imports_and_aliases():
    text = """
from tunefarm.script import T as tir, ir_module as module
import tvm

@module
class A:
    @tir.prim_func
    def f(X: tir.Buffer((4,), "float32")):
        X[0] = tir.float32(1)
"""
    mod = from_source(text)
    assert list(mod) == ["f"]
    tvm_text = """
from tvm.script import tir as T
from tvm.script import ir as I

@tvm.script.ir_module
class A:
    @T.prim_func
    def f(X: T.Buffer((4,), "float32")):
        X[0] = T.float32(1)
"""
    assert structural_equal(from_source(tvm_text), mod)
    assert structural_equal(from_source(tvm_text.replace("@tvm.script.ir_module", "@I.ir_module")), mod)


def test_fully_qualified_decorators():
    import tunefarm.script

    @tunefarm.script.ir_module
    class Mod:
        @tunefarm.script.T.prim_func
        def f(X: tunefarm.script.T.Buffer((4,), "float32")):
            for i in tunefarm.script.T.serial(4):
                X[i] = tunefarm.script.T.float32(1)

    text = """
@tunefarm.script.ir_module
class Mod:
    @tunefarm.script.T.prim_func
    def f(X: tunefarm.script.T.Buffer((4,), "float32")):
        for i in tunefarm.script.T.serial(4):
            X[i] = tunefarm.script.T.float32(1)
"""
    assert structural_equal(Mod, from_source(text))
    assert Mod["f"].root_block.body.kind == "serial"


def test_from_source_picks_a_definition_by_name_and_takes_constants():
    text = """
@T.prim_func
def f(X: T.Buffer((n,), "float32")):
    X[0] = T.float32(1)

@T.prim_func
def g(X: T.Buffer((n,), "float32")):
    X[1] = T.float32(2)
"""
    g = from_source(text, name="g", constants={"n": 8})
    assert g.name == "g" and g.params[0].const_shape() == (8,)
    with pytest.raises(TypeError, match="plain data"):
        from_source(text, name="g", constants={"n": object()})
    with pytest.raises(ParseError, match="no definition named"):
        from_source(text, name="h", constants={"n": 8})


def test_from_source_never_executes_code(tmp_path):
    marker = tmp_path / "ran"
    text = f"""
@T.prim_func
def f(X: T.Buffer((__import__("os").system("touch {marker}"),), "float32")):
    X[0] = T.float32(1)
"""
    with pytest.raises(ParseError):
        from_source(text)
    assert not marker.exists()


class _KernelNamespace(ScriptNamespace):
    _script_namespace = "kernel"

    def function(self, f):  # pragma: no cover - decorator-mode use is not exercised here
        return f


_KernelNamespace.function._script_key = "test.kernel"


def test_new_function_kinds_plug_into_the_dispatch():
    seen = []

    def parse_kernel(ctx, fdef: ast.FunctionDef, kwargs):
        seen.append((fdef.name, kwargs, ctx.module_names))
        return ("kernel", fdef.name)

    K = _KernelNamespace()
    script_parser.register_function_parser("test.kernel", parse_kernel, kwargs={"pure"})
    script_parser.register_namespace("K", K, tvm_name="kernel_ns")
    try:
        mod = from_source("""
from tvm.script import kernel_ns as KK

@ir_module
class M:
    @T.prim_func
    def f(X: T.Buffer((4,), "float32")):
        X[0] = T.float32(1)

    @K.function(pure=True)
    def main(x):
        return x

    @KK.function
    def other(x):
        return x
""")
        assert mod["main"] == ("kernel", "main") and mod["other"] == ("kernel", "other")
        assert isinstance(mod["f"], PrimFunc)
        assert seen[0] == ("main", {"pure": True}, ("f", "main", "other"))
        with pytest.raises(ParseError, match="unsupported argument `impure`"):
            from_source("@K.function(impure=True)\ndef main(x):\n    return x\n")
    finally:
        script_parser.FUNCTION_PARSERS.pop("test.kernel")
        script_parser.DEFAULT_ALIASES.pop("K")
        script_parser._TVM_SCRIPT_NAMES.pop("kernel_ns")


def test_lazy_top_level_names_reach_structural_services():
    assert tunefarm.structural_equal is structural_equal
    assert callable(tunefarm.workload_key)


def test_a_class_name_defined_twice_parses_the_definition_being_decorated():
    """Two printed modules pasted one after the other are both ``class Module``; each decorator must parse its
    own class, not the first one of that name in the file (what ``inspect`` would return)."""
    @ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] + T.float32(1)

    first = Module

    @ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)

    assert "A[vi] + T.float32(1)" in first.script()
    assert "A[vi] * T.float32(2)" in Module.script()
