"""``IRModule.script(show_meta=True)``: bound weights printed as data, and the text parses back to a module that
computes the same; without it a closing comment says they were left out (TVM's wording)."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.graph import BindParams, BlockBuilder, ops, var
from tunefarm.ir.metadata import OMITTED, decode_array, encode_array
from tunefarm.script import ParseError, from_source


def bound_model(rng):
    w = rng.standard_normal((8, 8)).astype("float32")
    b = np.array([np.nan, -np.inf, 1.5, -0.0, 2, 3, 4, 5], dtype="float32")  # exact bits survive, even these
    x, wv, bv = var("x", (2, 8)), var("w", (8, 8)), var("b", (8,))
    bb = BlockBuilder()
    with bb.function("main", [x, wv, bv]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(ops.add(bb.emit(ops.matmul(x, wv)), bv)))
        bb.emit_func_output(gv)
    return BindParams("main", {"w": w, "b": b})(bb.get()), w, b


def test_show_meta_round_trip_is_exact():
    rng = np.random.default_rng(0)
    mod, w, b = bound_model(rng)
    plain = mod.script()
    assert plain.endswith(OMITTED) and "base64" not in plain
    with pytest.raises(ParseError, match="bound constants"):
        from_source(plain)  # the weights are not in that text
    text = mod.script(show_meta=True)
    assert text.startswith('# from tunefarm.script import I, T, ir_module\n\nmetadata = {"relax.expr.Constant": [\n')
    assert OMITTED not in text
    again = from_source(text)
    assert again.script(show_meta=True) == text
    consts = again["main"].metadata()["relax.expr.Constant"]
    np.testing.assert_array_equal(consts[0], w)
    assert consts[1].tobytes() == b.tobytes() and consts[1].dtype == np.float32
    x = rng.standard_normal((2, 8)).astype("float32")
    np.testing.assert_array_equal(tunefarm.compile(again)(x), tunefarm.compile(mod)(x))


def test_a_module_without_constants_prints_no_metadata():
    x = var("x", (3,))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(ops.relu(x)))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert mod.script(show_meta=True) == mod.script() and "metadata" not in mod.script()


def test_metadata_entries_are_checked():
    a = np.arange(6, dtype="int64").reshape(2, 3)
    np.testing.assert_array_equal(decode_array(encode_array(a)), a)
    entry = encode_array(a)
    with pytest.raises(ValueError, match="has keys dtype, shape and base64"):
        decode_array({**entry, "extra": 1})
    with pytest.raises(ValueError, match="has 48 bytes"):
        decode_array({**entry, "shape": [2, 4]})
    with pytest.raises(ValueError, match="numeric"):
        decode_array({**entry, "dtype": "object"})
    bad = '''
metadata = {"relax.expr.Constant": [{"dtype": "float32", "shape": [2], "base64": "AAAA"}]}

@ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        with R.dataflow():
            y = R.add(x, metadata["relax.expr.Constant"][0])
            R.output(y)
        return y
'''
    with pytest.raises(ParseError, match="has 3 bytes"):
        from_source(bad)
    with pytest.raises(ParseError, match="plain literals"):
        from_source(bad.replace('"AAAA"', '"AAAA".lower()'))
