"""Spellings of older Relax printers that course material still shows: ``Tensor(...)`` without ``R.``, result
types ``Tensor(None, "float32", ndim = 2)``, ``R.call_tir(f, args, shape, dtype=...)`` and
``meta[relay.Constant][i]``. They parse into the same functions as today's spellings."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm.script import ParseError
from tunefarm.script.relax_parser import from_source

OLD = '''
@ir_module
class Module:
    @T.prim_func
    def double(A: T.Buffer[(1, 4), "float32"], B: T.Buffer[(1, 4), "float32"]) -> None:
        for i0, i1 in T.grid(1, 4):
            with T.block("B"):
                i, j = T.axis.remap("SS", [i0, i1])
                B[i, j] = A[i, j] * T.float32(2)

    @R.function
    def main(x: Tensor((1, 4), "float32")) -> Tensor(None, "float32", ndim = 2):
        # block 0
        with R.dataflow():
            lv = R.call_tir(double, (x,), (1, 4), dtype="float32")
            lv1: Tensor((1, 4), "float32") = relax_add
            gv: Tensor((1, 4), "float32") = lv1
            R.output(gv)
        return gv
'''


def parse(text, metadata=None):
    return from_source(text, metadata=metadata)


def test_the_older_spellings_parse_into_todays_function():
    text = OLD.replace("relax_add", "R.add(lv, meta[relay.Constant][0])")
    c = np.arange(4, dtype="float32").reshape(1, 4)
    old = parse(text, {"relax.expr.Constant": [c]})
    new = parse(old.script(), old["main"].metadata())
    assert new.script() == old.script()
    assert 'def main(x: R.Tensor((1, 4), dtype="float32")) -> R.Tensor((1, 4), dtype="float32"):' in old.script()
    x = np.ones((1, 4), "float32")
    np.testing.assert_array_equal(tunefarm.compile(old)(x), x * 2 + c)


def test_an_unknown_shape_is_only_an_annotation():
    text = OLD.replace("relax_add", "lv")
    with pytest.raises(ParseError, match="annotated to return R.Tensor\\(None, \"float32\", ndim=3\\)"):
        parse(text.replace("ndim = 2", "ndim = 3"))
    with pytest.raises(ParseError, match="needs a shape"):
        parse(text.replace('def main(x: Tensor((1, 4), "float32"))', 'def main(x: Tensor(None, "float32", ndim=2))'))
    with pytest.raises(ParseError, match="ndim= only with a None shape"):
        parse(text.replace('-> Tensor(None, "float32", ndim = 2)', '-> Tensor((1, 4), "float32", ndim = 2)'))
    assert parse(text.replace(', ndim = 2', ''))["main"].ret.type.shape == (1, 4)  # no ndim: any rank


def test_a_name_tensor_defined_by_the_user_is_not_taken_for_r_tensor():
    from tunefarm.script import from_source as parse_text

    with pytest.raises(ParseError, match="expected an R.Tensor"):
        parse_text(OLD.replace("relax_add", "lv"), constants={"Tensor": 3})
