"""``@R.function`` parsing: the course's forms, symbolic dims, printer round trip, and clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.graph import BindParams, Function
from tunefarm.ir.expr import Var
from tunefarm.script import ParseError, R, T, from_source, ir_module
from tunefarm.script.relax_namespace import R_NAMES, R_NN_NAMES
from tunefarm.script.relax_parser import from_source as graph_from_source

from course_programs import MLPModuleWithMain as MyModule, MyModuleMixture


def test_symbolic_dims_are_shared_across_parameters_and_body():
    main = MyModule["main"]
    x, w0, b0, w1, b1 = main.params
    m, n, k = x.type.shape[1], w0.type.shape[0], w1.type.shape[0]
    assert all(isinstance(d, Var) for d in (m, n, k))
    assert w0.type.shape == (n, m) and b0.type.shape == (n,) and w1.type.shape == (k, n) and b1.type.shape == (k,)
    lv0, lv1, out = [b.var for b in main.bindings()]
    assert lv0.type.shape[1] is n and out.type.shape == (1, k) and main.ret is out
    assert [c.op for c in main.calls()] == ["call_dps_packed"] * 3
    assert [c.attrs["func"] for c in main.calls()] == ["linear0", "relu0", "linear0"]


def test_print_parse_print_is_the_identity():
    for mod in (MyModule, MyModuleMixture):
        text = mod.script()
        again = from_source(text)
        assert again.script() == text
        assert isinstance(again["main"], Function)


def test_round_trip_with_bound_constants(mlp_params):
    bound = BindParams("main", mlp_params)(MyModule)
    text = bound.script()
    with pytest.raises(ParseError, match=r"bound constants .*metadata=fn.metadata\(\)"):
        from_source(text)
    again = graph_from_source(text, metadata=bound["main"].metadata())
    assert again.script() == text
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    np.testing.assert_array_equal(tunefarm.compile(again)(x), tunefarm.compile(bound)(x))


def test_call_tir_bare_name_old_spelling_and_high_level_ops():
    @ir_module
    class Mod:
        @T.prim_func
        def relu0(X: T.Buffer((2, 3), "float32"), Y: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")) -> R.Tensor((2, 4), "float32"):
            R.func_attr({"num_input": 1})
            with R.dataflow():
                a = R.call_tir(relu0, (x,), R.Tensor((2, 3), dtype="float32"))
                b = R.call_tir(relu0, (a,), (2, 3), dtype="float32")
                c = R.matmul(b, w, out_dtype="void")
                d = R.nn.relu(c)
                e = R.add(d, R.const(1.5, "float32"))
                f = R.reshape(e, (4, 2))
                g = R.permute_dims(f, axes=None)
                gv: R.Tensor((2, 4), dtype="float32") = g
                R.output(gv)
            return gv

    main = Mod["main"]
    assert main.attrs == {"num_input": 1}
    assert [c.op for c in main.calls()] == ["call_tir", "call_tir", "matmul", "relu", "add", "reshape",
                                            "permute_dims"]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    ref = (np.maximum(np.maximum(x, 0) @ w, 0) + 1.5).reshape(4, 2).T
    np.testing.assert_allclose(tunefarm.compile(Mod)(x, w), ref, rtol=1e-5, atol=1e-6)
    assert from_source(Mod.script()).script() == Mod.script()


def test_conv_net_ops_parse_and_run():
    @R.function
    def net(x: R.Tensor((1, 1, 6, 6), "float32"), w: R.Tensor((2, 1, 3, 3), "float32"),
            fc: R.Tensor((10, 8), "float32")):
        with R.dataflow():
            a = R.nn.conv2d(x, w, strides=1, padding=1)
            b = R.nn.max_pool2d(a, pool_size=(3, 3), strides=(3, 3), padding=0)
            c = R.flatten(b)
            d = R.nn.linear(c, fc)
            R.output(d)
        return d

    assert isinstance(net, Function)
    assert [c.type.shape for c in net.calls()] == [(1, 2, 6, 6), (1, 2, 2, 2), (1, 8), (1, 10)]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 1, 6, 6)).astype(np.float32)
    w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    fc = rng.standard_normal((10, 8)).astype(np.float32)
    from tunefarm.nn import functional as F

    ref = F.linear(F.flatten(F.max_pool2d(F.conv2d(x, w, None, 1, 1), 3, 3)), fc)
    mod = tunefarm.ir.IRModule({"net": net})
    np.testing.assert_allclose(tunefarm.compile(mod)(x, w, fc), ref, rtol=1e-4, atol=1e-4)


def _parse_err(text: str, match: str):
    with pytest.raises(ParseError, match=match) as info:
        from_source(text)
    return info.value


def test_errors_name_the_line_and_the_problem():
    err = _parse_err('''
@ir_module
class M:
    @R.function
    def main(x: R.Tensor((1, 4), "float32")):
        with R.dataflow():
            y = R.call_tir(nothere, (x,), R.Tensor((1, 4), "float32"))
            R.output(y)
        return y
''', "no function `nothere` in the module")
    assert err.lineno == 7
    _parse_err('''
@R.function
def main(x: R.Tensor((1, "n"), "float32")):
    with R.dataflow():
        y = R.nn.relu(x)
        z = R.add(y, q)
        R.output(z)
    return z
''', "undefined tensor `q`")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((5, 3), "float32")):
    with R.dataflow():
        y = R.matmul(x, w)
        R.output(y)
    return y
''', r"R.matmul: matmul: inner dims differ")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, 4), "float32")):
    y = R.nn.relu(x)
    y = R.nn.relu(y)
    return y
''', "bound twice")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, 4), "float32")) -> R.Tensor((1, 5), "float32"):
    y = R.nn.relu(x)
    return y
''', "annotated to return")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, 4), "float32")):
    with R.dataflow():
        y = R.nn.relu(x)
    return
''', "returns a value")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, 4), "float32")):
    with R.dataflow():
        y = R.nn.softmax(x)
        R.output(y)
    return y
''', "R.nn.softmax is not supported")
    _parse_err('''
@R.function
def main(x: R.Tensor((1, m), "float32")):
    return x
''', "expected a literal value")


def test_call_signature_is_checked_against_the_prim_func():
    _parse_err('''
@ir_module
class M:
    @T.prim_func
    def add1(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.spatial(4, i)
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32"), z: R.Tensor((4,), "float32")):
        with R.dataflow():
            y = R.call_tir(add1, (x, z), R.Tensor((4,), "float32"))
            R.output(y)
        return y
''', r"add1 takes 2 buffers \(1 inputs and the output\), the call passes 2 inputs")
    _parse_err('''
@ir_module
class M:
    @T.prim_func
    def add1(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.spatial(4, i)
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((5,), "float32")):
        with R.dataflow():
            y = R.call_tir(add1, (x,), R.Tensor((5,), "float32"))
            R.output(y)
        return y
''', "expects size 4, got 5")


def test_namespace_markers_are_inert_and_complete():
    assert R.Tensor((1, "m"), "float32") is R.Tensor
    with pytest.raises(AttributeError, match="R.softmax is not part"):
        R.softmax
    for name in R_NAMES - {"function", "Tensor", "nn"}:
        getattr(R, name)
    for name in R_NN_NAMES:
        getattr(R.nn, name)
    with pytest.raises(TypeError, match="decorate the class with"):
        class Holder:
            @R.function
            def f(x: R.Tensor((1,), "float32")):
                return x
        Holder.f()
