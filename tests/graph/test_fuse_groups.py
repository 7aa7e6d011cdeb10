"""FuseOps' groups are graph functions of the module (as in Relax): the module prints, parses back and
compiles between FuseOps and FuseTIR, and FuseTIR drops the kernels it fused into others."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.graph import (BindParams, BlockBuilder, FuseOps, FuseTIR, LegalizeOps, Function, ops, var)
from tunefarm.graph.passes.fuse import group_functions, is_primitive
from tunefarm.ir.function import PrimFunc
from tunefarm.script import R, T, ir_module
from tunefarm.script.relax_parser import from_source


def mlp(rng):
    w0, b0 = rng.standard_normal((16, 8)).astype("float32"), rng.standard_normal(16).astype("float32")
    w1 = rng.standard_normal((4, 16)).astype("float32")
    x = var("x", (2, 8))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(ops.add(bb.emit(ops.matmul(x, tunefarm.graph.const(w0.T.copy()))), tunefarm.graph.const(b0)))
            h = bb.emit(ops.relu(h))
            out = bb.emit_output(bb.emit(ops.matmul(h, tunefarm.graph.const(w1.T.copy()))))
        bb.emit_func_output(out)
    ref = lambda a: np.maximum(a @ w0.T + b0, 0) @ w1.T  # noqa: E731
    return LegalizeOps()(bb.get()), ref


def test_fuse_ops_makes_primitive_functions_that_print_parse_and_compile():
    rng = np.random.default_rng(0)
    legal, ref = mlp(rng)
    grouped = FuseOps()(legal)
    groups = [k for k, f in grouped.functions.items() if is_primitive(f)]
    assert groups == ["fused_matmul_add_relu"]
    group = grouped["fused_matmul_add_relu"]
    assert [c.attrs["func"] for c in group.calls()] == ["matmul", "add", "relu"]
    assert [c.op for c in grouped["main"].calls()] == ["call_func", "call_tir"]
    text = grouped.script()
    assert "R.func_attr({'Primitive': True})" in text
    assert 'lv2: R.Tensor((2, 16), dtype="float32") = fused_matmul_add_relu(x, metadata["relax.expr.Constant"][0], ' \
           'metadata["relax.expr.Constant"][1])' in text
    again = from_source(text, metadata=grouped["main"].metadata())
    assert again.script() == text
    x = rng.standard_normal((2, 8)).astype("float32")
    for mod in (grouped, again):
        np.testing.assert_allclose(tunefarm.compile(mod)(x), ref(x), rtol=1e-5, atol=1e-5)
    # FuseOps leaves its groups alone when it runs again (compile runs it on every module)
    assert FuseOps()(grouped).script() == text


def test_fuse_tir_drops_the_kernels_it_fused_and_keeps_those_still_called():
    rng = np.random.default_rng(1)
    legal, ref = mlp(rng)
    fused = FuseTIR()(FuseOps()(legal))
    assert list(fused) == ["main", "matmul1", "fused_matmul_add_relu"]  # matmul, add, relu went into the group
    assert isinstance(fused["fused_matmul_add_relu"], PrimFunc)  # the group became a kernel of the same name
    assert [c.attrs["func"] for c in fused["main"].calls()] == ["fused_matmul_add_relu", "matmul1"]
    assert not group_functions(fused)
    x = rng.standard_normal((2, 8)).astype("float32")
    np.testing.assert_allclose(tunefarm.compile(fused)(x), ref(x), rtol=1e-5, atol=1e-5)


@ir_module
class HandWrittenGroup:
    @T.prim_func
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2)

    @R.function
    def twice_double(a: R.Tensor((4,), "float32")):
        with R.dataflow():
            b = R.call_tir(double, (a,), out_sinfo=R.Tensor((4,), "float32"))
            c = R.call_tir(double, (b,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(c)
        return c

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            y = twice_double(x)
            z = R.call_tir(double, (y,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(z)
        return z


def test_a_called_graph_function_is_a_group_even_without_the_attribute():
    assert group_functions(HandWrittenGroup) == {"twice_double"}
    fused = FuseTIR()(HandWrittenGroup)
    assert sorted(fused) == ["double", "main", "twice_double"]  # double is still called by main
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(tunefarm.compile(HandWrittenGroup)(x), x * 8)


def test_calls_of_graph_functions_are_checked():
    with pytest.raises(tunefarm.script.ParseError, match="needs its result type"):
        @ir_module
        class Untyped:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                with R.dataflow():
                    y = helper(x)
                    R.output(y)
                return y

            @R.function
            def helper(a: R.Tensor((4,), "float32")):
                with R.dataflow():
                    b = R.nn.relu(a)
                    R.output(b)
                return b

    with pytest.raises(tunefarm.script.ParseError, match="calls 'helper', which is not a graph function"):
        @ir_module
        class WrongArity:
            @R.function
            def helper(a: R.Tensor((4,), "float32")):
                with R.dataflow():
                    b = R.nn.relu(a)
                    R.output(b)
                return b

            @R.function
            def main(x: R.Tensor((4,), "float32")):
                with R.dataflow():
                    y: R.Tensor((4,), "float32") = helper(x, x)
                    R.output(y)
                return y


def test_a_weight_with_a_dotted_name_becomes_a_plain_parameter_of_its_group():
    rng = np.random.default_rng(3)
    w = tunefarm.graph.Constant(rng.standard_normal((8, 8)).astype("float32"), "fc.weight")
    x = var("x", (2, 8))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(ops.relu(bb.emit(ops.matmul(x, w)))))
        bb.emit_func_output(gv)
    grouped = FuseOps()(LegalizeOps()(bb.get()))
    assert [p.name for p in grouped["fused_matmul_relu"].params] == ["x", "p1"]
    a = rng.standard_normal((2, 8)).astype("float32")
    np.testing.assert_allclose(tunefarm.compile(grouped)(a), np.maximum(a @ w.data, 0), rtol=1e-5, atol=1e-5)


def test_fuse_tir_refuses_a_group_that_calls_python():
    x = var("x", (4,))
    inner = var("a", (4,))
    group = Function("g", [inner], [tunefarm.graph.DataflowBlock(
        [tunefarm.graph.Binding(var("b", (4,)), ops.call_dps_packed("env.f", [inner], inner.type))], [])],
        inner, {"Primitive": True})
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(tunefarm.graph.Call("call_func", [x], {"func": "g"}, x.type))
        bb.emit_func_output(gv)
    mod = bb.get().with_function("g", group)
    with pytest.raises(ValueError, match="FuseTIR: g binds b to something other than a kernel call"):
        FuseTIR()(mod)


def test_bind_params_then_fuse_keeps_constants_numbered_module_wide():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 8)).astype("float32")
    x = var("x", (2, 8))
    wv = var("w", (8, 8))
    bb = BlockBuilder()
    with bb.function("main", [x, wv]):
        with bb.dataflow():
            h = bb.emit(ops.relu(bb.emit(ops.matmul(x, wv))))
            gv = bb.emit_output(bb.emit(ops.add(h, x)))
        bb.emit_func_output(gv)
    grouped = FuseOps()(LegalizeOps()(BindParams("main", {"w": w})(bb.get())))
    text = grouped.script()
    assert text.count('metadata["relax.expr.Constant"][0]') == 1 and "[1]" not in text
    assert "def fused_matmul_relu_add(x: R.Tensor((2, 8), dtype=\"float32\"), w: " in text
    a = rng.standard_normal((2, 8)).astype("float32")
    np.testing.assert_allclose(tunefarm.compile(grouped)(a), np.maximum(a @ w, 0) + a, rtol=1e-5, atol=1e-5)
