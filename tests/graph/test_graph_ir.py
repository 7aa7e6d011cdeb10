"""Building graphs: BlockBuilder scoping rules, well-formedness, the printer, the native call gate and registered
functions (the graph IR's own type rules are tested in tests/ir/test_ir_graph.py)."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import te
from tunefarm.graph import BlockBuilder, const, ops, var
from tunefarm.graph.pipeline import GraphError, check_well_formed
from tunefarm.ir.expr import Var
from tunefarm.runtime.fastcall import struct_layout_ok


def test_block_builder_scoping_errors():
    x = var("x", (2,))
    bb = BlockBuilder()
    with pytest.raises(RuntimeError, match="inside function"):
        bb.emit(ops.relu(x))
    with pytest.raises(RuntimeError, match="without emit_func_output"):
        with bb.function("f", [x]):
            pass
    with pytest.raises(RuntimeError, match="no parameter list"):
        with bb.function("g"):
            with bb.dataflow():
                gv = bb.emit_output(bb.emit(ops.relu(x)))
            bb.emit_func_output(gv)
    with pytest.raises(RuntimeError, match="inside dataflow"):
        with bb.function("h", [x]):
            bb.emit_output(x)
    with pytest.raises(TypeError, match="graph value"):
        with bb.function("k", [x]):
            bb.emit(np.zeros(2))
    with pytest.raises(TypeError, match="must return a te.Tensor"):
        with bb.function("m", [x]):
            bb.emit_te(lambda a: 3, x)


def test_bindings_outside_dataflow_and_well_formedness():
    x = var("x", (2, 2))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(ops.relu(x))  # outside any dataflow block (allowed, as in Relax)
        with bb.dataflow():
            z = bb.emit_output(bb.emit_te(te.ops.add, y, const(np.ones((2, 2), np.float32))))
        bb.emit_func_output(z)
    mod = bb.get()
    check_well_formed(mod["main"])
    a = np.array([[-1, 2], [3, -4]], np.float32)
    np.testing.assert_array_equal(tunefarm.compile(mod)(a), np.maximum(a, 0) + 1)
    stray = var("stray", (2, 2))
    bb2 = BlockBuilder()
    with bb2.function("main", [x]):
        with bb2.dataflow():
            gv = bb2.emit_output(bb2.emit(ops.relu(stray)))
        bb2.emit_func_output(gv)
    with pytest.raises(GraphError, match="uses stray, which is neither a parameter nor bound earlier"):
        tunefarm.compile(bb2.get())


def test_printer_form():
    n = Var("n", "int64")
    x = var("x", (n, 4))
    bb = BlockBuilder()
    with bb.function("main", [x], {"num_input": 1}):
        with bb.dataflow():
            y = bb.emit(ops.linear(x, const(np.ones((3, 4), np.float32)), const(np.zeros(3, np.float32))))
            gv = bb.emit_output(bb.emit(ops.relu(y)))
        bb.emit_func_output(gv)
    assert bb.get()["main"].script() == (
        '@R.function\n'
        'def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor((n, 3), dtype="float32"):\n'
        "    R.func_attr({'num_input': 1})\n"
        '    with R.dataflow():\n'
        '        lv = R.nn.linear(x, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])\n'
        '        lv1 = R.nn.relu(lv)\n'
        '        R.output(lv1)\n'
        '    return lv1\n')


def test_call_gate_rejects_without_running_and_falls_back(relu_exe):
    """The native gate hands anything unusual to the checked path; results stay right either way."""
    exe = relu_exe
    from tunefarm.runtime.fastcall import struct_layout_ok

    assert struct_layout_ok() and exe._gate is not None
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    out = np.empty((3, 4), np.float32)
    assert exe._gate(a, out) == 0 and np.array_equal(out, np.maximum(a, 0))
    out[...] = 7
    assert exe._gate(a.astype(np.float64), out) == 1       # wrong dtype: argument 0 rejected
    assert exe._gate(a[:, :3].copy(), out) == 1            # wrong shape
    assert exe._gate(np.asfortranarray(a), out) == 1        # not C-contiguous
    assert exe._gate(a, out[:, ::-1]) == 2                 # output not contiguous
    ro = out.copy()
    ro.flags.writeable = False
    assert exe._gate(a, ro) == 2                           # output read-only
    class Sub(np.ndarray):
        pass

    assert exe._gate(a.view(Sub), out) == 1                # an ndarray subclass is not the plain type
    assert np.all(out == 7)                                # nothing ran
    np.testing.assert_array_equal(exe(np.asfortranarray(a)), np.maximum(a, 0))
    raw = np.zeros(49, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(3, 4)
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(exe(misaligned), np.maximum(misaligned, 0))


def test_register_func_forms():
    from tunefarm.graph.registry import get_func, register_func

    @register_func
    def tunefarm_test_bare(x, out):
        out[...] = x

    assert get_func("tunefarm_test_bare") is tunefarm_test_bare

    def double(x, out):
        np.multiply(x, 2, out=out)

    register_func("test.double", double)
    register_func("test.double", double)  # registering the same function again is harmless
    with pytest.raises(KeyError, match="already registered"):
        register_func("test.double", lambda x, out: None)
    register_func("test.double", lambda x, out: None, override=True)
    with pytest.raises(TypeError, match="non-empty string"):
        register_func("")
    assert get_func("test.missing") is None
