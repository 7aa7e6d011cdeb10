"""The native path of ``mod[name](*arrays)``: after a function has been called a few times every call is one
builtin that checks natively; it accepts exactly what ``check_arrays`` accepts, and everything it refuses
raises ``check_arrays``'s own error -- also for arrays a previous call accepted and that changed since."""
from __future__ import annotations

import types

import numpy as np
import pytest

import runtime_programs as RP
import tunefarm.runtime.module as module_py
from tunefarm.ir import TRUE, Block, BlockRealize, Buffer, BufferStore, For, IterVar, PrimFunc, Range, Var, wrap_root
from tunefarm.runtime import build
from tunefarm.runtime.module import NATIVE_AFTER_CALLS
from tunefarm.runtime.packed_args import check_arrays


def arrays(n=16):
    return np.arange(n, dtype="float32"), np.full(n, 2, "float32"), np.zeros(n, "float32")


def warmed(func, *args):
    """``func`` called until it has its native path (asserted)."""
    for _ in range(NATIVE_AFTER_CALLS):
        func(*args)
    assert isinstance(type(func).__call__, types.BuiltinFunctionType)
    return func


def error_of(call, args) -> tuple[type, str]:
    with pytest.raises((TypeError, ValueError)) as e:
        call(*args)
    return type(e.value), str(e.value)


def python_error(func, args) -> tuple[type, str]:
    return error_of(lambda *a: check_arrays(func.name, func.params, a), args)


@pytest.fixture
def no_python_checks(monkeypatch):
    """``no_python_checks()``: from then on, calls that reach the Python path fail loudly, so what still runs
    was accepted natively."""
    def refuse(*_):
        raise AssertionError("the Python checks ran")

    return lambda: monkeypatch.setattr(module_py, "check_arrays", refuse)


def refusals(a, b, c):
    """(what, arguments) of calls ``add`` must refuse; ``a``, ``b``, ``c`` are fine arguments."""
    buf = np.zeros(40, "float32")
    ro = c.copy()
    ro.flags.writeable = False
    mis = np.zeros(16 * 4 + 1, np.uint8)[1:].view("float32")
    return [("too few", (a, b)), ("too many", (a, b, c, c)), ("a list", (list(a), b, c)),
            ("a scalar", (a, 2.0, c)), ("float64 output", (a, b, c.astype("float64"))),
            ("int32 input", (a.astype("int32"), b, c)), ("2-D input", (a.reshape(4, 4), b, c)),
            ("short input", (a, b[:15], c)), ("strided input", (np.ones(32, "float32")[::2], b, c)),
            ("reversed output", (a, b, c[::-1])), ("misaligned input", (mis, b, c)),
            ("read-only output", (a, b, ro)), ("output is an input", (a, b, a)),
            ("output overlaps an input", (buf[:16], b, buf[8:24])), ("output overlaps the other input", (a, buf[4:20],
                                                                                                         buf[:16]))]


def test_every_refusal_on_the_native_path_is_the_python_checks_own():
    f = build(RP.add(16))["add"]
    a, b, c = arrays()
    warmed(f, a, b, c)
    for what, args in refusals(a, b, c):
        assert error_of(f, args) == python_error(f, args), what
        c[:] = 0
        f(a, b, c)  # a refusal changes nothing: the next good call runs
        np.testing.assert_array_equal(c, a + 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        f(a, b, out=c)


def test_arrays_accepted_before_are_checked_again(no_python_checks):
    f = build(RP.add(16))["add"]
    a, b, c = arrays()
    warmed(f, a, b, c)
    no_python_checks()
    c[:] = 0
    f(a, b, c)
    np.testing.assert_array_equal(c, a + 2)  # accepted natively: the Python checks never ran
    a.shape = (4, 4)  # the same objects, changed in place
    with pytest.raises(AssertionError, match="Python checks ran"):
        f(a, b, c)
    a.shape = (16,)
    c.flags.writeable = False
    with pytest.raises(AssertionError, match="Python checks ran"):
        f(a, b, c)


def test_changed_arrays_get_the_python_messages():
    f = build(RP.add(16))["add"]
    a, b, c = arrays()
    warmed(f, a, b, c)
    a.shape = (4, 4)
    with pytest.raises(ValueError, match=r"parameter 'A' expects shape \(16,\) \(1 dimensions\), got shape \(4, 4\)"):
        f(a, b, c)
    a.shape = (16,)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="parameter 'C' is written by the function but the array is read-only"):
        f(a, b, c)


def test_symbolic_shapes_bind_per_call(no_python_checks):
    mm = build(RP.matmul_sym(8))["matmul"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 8), dtype="float32"), rng.standard_normal((8, 5), dtype="float32")
    warmed(mm, a, b, np.zeros((3, 5), "float32"))
    no_python_checks()
    for n, m in ((1, 1), (7, 2), (4, 9)):
        a, b, c = (rng.standard_normal((n, 8), dtype="float32"), rng.standard_normal((8, m), dtype="float32"),
                   np.zeros((n, m), "float32"))
        mm(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_symbolic_refusals_are_the_python_messages():
    mm = build(RP.matmul_sym(8))["matmul"]
    a, b, c = np.ones((3, 8), "float32"), np.ones((8, 5), "float32"), np.zeros((3, 5), "float32")
    warmed(mm, a, b, c)
    for args in ((a, b, np.zeros((3, 6), "float32")), (a, np.ones((7, 5), "float32"), c),
                 (a, b, np.zeros((4, 5), "float32"))):
        assert error_of(mm, args) == python_error(mm, args)
        assert "symbolic dimensions" in error_of(mm, args)[1]


def test_subclasses_and_equal_dtypes_are_accepted(no_python_checks, monkeypatch):
    class Sub(np.ndarray):
        pass

    f = build(RP.add(16))["add"]
    a, b, c = arrays()
    warmed(f, a, b, c)
    no_python_checks()
    c2 = np.zeros(16, "float32").view(Sub)
    f(a.view(Sub), b, c2)  # a subclass of ndarray is accepted natively
    np.testing.assert_array_equal(c2, a + 2)
    monkeypatch.undo()
    tagged = np.dtype("float32", metadata={"unit": "m"})
    assert tagged == np.dtype("float32") and tagged is not np.dtype("float32")
    c3 = np.zeros(16, tagged)
    f(a, b, c3)  # another descriptor object of the same dtype: the Python path accepts it and runs
    np.testing.assert_array_equal(c3, a + 2)


def sum_of(k: int, n: int = 32) -> PrimFunc:
    """``out = in0 + in1 + ... + in{k-1}``: ``k + 1`` parameters."""
    ins = [Buffer(f"in{j}", (n,)) for j in range(k)]
    out = Buffer("out", (n,))
    i, v = Var("i", "int64"), Var("v", "int64")
    value = ins[0][v]
    for buf in ins[1:]:
        value = value + buf[v]
    blk = Block("out", [IterVar(v, Range(0, n), "S")], [], [], BufferStore(out, value, (v,)))
    return PrimFunc(ins + [out], wrap_root(For(i, 0, n, "serial", BlockRealize([i], TRUE, blk))), name="sum")


def test_eight_arguments():
    f = build(sum_of(7))["sum"]
    ins = [np.full(32, j + 1, "float32") for j in range(7)]
    out = np.zeros(32, "float32")
    warmed(f, *ins, out)
    np.testing.assert_array_equal(out, 28)
    for args in ((*ins[:6], out, out), (*ins, ins[6]), (*ins[:6], ins[0].astype("float64"), out)):
        assert error_of(f, args) == python_error(f, args)


def test_no_native_path_where_it_does_not_apply(monkeypatch):
    n = Var("n", "int64")
    A, B = Buffer("A", (n,)), Buffer("B", (n + 1,))  # an arithmetic dimension: checked in Python only
    i = Var("i", "int64")
    shift = build(PrimFunc([A, B], wrap_root(For(i, 0, n, "serial", BufferStore(B, A[i], (i + 1,)))),
                           name="shift"))["shift"]
    a, b = np.arange(5, dtype="float32"), np.zeros(6, "float32")
    for _ in range(NATIVE_AFTER_CALLS + 1):
        shift(a, b)
    assert not isinstance(type(shift).__call__, types.BuiltinFunctionType)
    np.testing.assert_array_equal(b[1:], a)
    monkeypatch.setenv("TUNEFARM_NO_NATIVE_CALL", "1")
    f = build(RP.add(16))["add"]
    for _ in range(NATIVE_AFTER_CALLS + 1):
        f(*arrays())
    assert not isinstance(type(f).__call__, types.BuiltinFunctionType)
