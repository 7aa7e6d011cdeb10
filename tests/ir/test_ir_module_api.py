"""The pieces of TVM's IRModule / PrimFunc API the course uses to swap a tuned kernel into a model:
``PrimFunc.with_attr``, ``IRModule.from_expr``, ``get_global_var`` and ``update_func``."""
from __future__ import annotations

import pytest

import course_programs as cp
from tunefarm.ir.module import GlobalVar, IRModule
from tunefarm.ir.structural import structural_equal, workload_key


def test_with_attr_sets_one_attribute_and_global_symbol_renames():
    f = cp.PRIM_FUNCS["mm_relu"]
    g = f.with_attr("global_symbol", "main")
    assert g.name == "main" and g.attrs["global_symbol"] == "main" and f.name == "mm_relu"
    assert f.attrs["global_symbol"] == "mm_relu"  # the original is untouched
    assert structural_equal(g.body, f.body) and workload_key(g) == workload_key(f)
    h = g.with_attr("tir.noalias", False)
    assert h.attrs == {"global_symbol": "main", "tir.noalias": False} and h.name == "main"
    both = f.with_attr({"global_symbol": "k", "tir.noalias": False})
    assert both.name == "k" and both.attrs == {"global_symbol": "k", "tir.noalias": False}
    with pytest.raises(ValueError, match="global_symbol must be an identifier"):
        f.with_attr("global_symbol", "not a name")
    with pytest.raises(TypeError, match="attribute names are strings"):
        f.with_attr(1, 2)


def test_from_expr_names_the_function_by_its_global_symbol_or_main():
    f = cp.PRIM_FUNCS["mm_relu"]
    mod = IRModule.from_expr(f.with_attr("global_symbol", "main"))
    assert list(mod) == ["main"] and mod["main"].name == "main"
    assert list(IRModule.from_expr(f)) == ["mm_relu"]
    anonymous = f.with_attr("global_symbol", "x")
    anonymous.attrs.pop("global_symbol")
    assert list(IRModule.from_expr(anonymous)) == ["main"] and IRModule.from_expr(anonymous)["main"].name == "main"


def test_update_func_replaces_in_place_and_only_in_that_module():
    f = cp.PRIM_FUNCS["mm_relu"]
    mod = IRModule({"a": f.with_attr("global_symbol", "a"), "b": f.with_attr("global_symbol", "b")})
    copy = mod.with_function("c", f)
    gv = mod.get_global_var("a")
    assert isinstance(gv, GlobalVar) and gv == "a" and gv.name_hint == "a"
    new = f.with_attr("global_symbol", "a").with_attr("tir.noalias", False)
    mod.update_func(gv, new)
    assert mod["a"] is new
    assert copy["a"] is not new  # modules made from it before keep their own function
    other = f.with_attr("global_symbol", "elsewhere")
    mod.update_func("b", other)  # a plain name works too; the function takes the module's name for it
    assert mod["b"].name == "b" and mod["b"].attrs["global_symbol"] == "b"
    with pytest.raises(KeyError, match="module has no function 'z'"):
        mod.get_global_var("z")
    with pytest.raises(KeyError, match="no function 'z' to update"):
        mod.update_func("z", f)


def test_main_prim_func_is_main_else_the_only_prim_func():
    f, g = cp.PRIM_FUNCS["mm_relu"], cp.PRIM_FUNCS["mm_relu"].with_attr("global_symbol", "other")
    assert IRModule({"x": g}).main_prim_func() is g
    assert IRModule({"x": g, "main": f}).main_prim_func() is f
    assert IRModule({"x": g, "y": f}).main_prim_func() is None
    assert IRModule({}).main_prim_func() is None
