"""Argument checks: every mismatch raises a clear TypeError/ValueError naming the parameter -- never a crash."""
from __future__ import annotations

import numpy as np
import pytest

import runtime_programs as RP
from tunefarm.ir import Var
from tunefarm.runtime import build


@pytest.fixture(scope="module")
def add_mod():
    return build(RP.add(16))


def arrays(n=16, dtype="float32"):
    return [np.ones(n, dtype), np.ones(n, dtype), np.zeros(n, dtype)]


def test_correct_call(add_mod):
    a, b, c = arrays()
    add_mod(a, b, c)
    np.testing.assert_array_equal(c, 2)


def test_wrong_shape_names_parameter_and_shapes(add_mod):
    a, b, c = arrays()
    with pytest.raises(ValueError, match=r"parameter 'B' expects shape \(16,\), got shape \(15,\)"):
        add_mod(a, np.ones(15, "float32"), c)
    with pytest.raises(ValueError, match=r"parameter 'A' expects shape \(16,\) \(1 dimensions\), got shape \(4, 4\)"):
        add_mod(np.ones((4, 4), "float32"), b, c)


def test_wrong_dtype(add_mod):
    a, b, c = arrays()
    with pytest.raises(TypeError, match="parameter 'C' expects dtype float32, got float64"):
        add_mod(a, b, np.zeros(16))


def test_wrong_count_and_type(add_mod):
    a, b, c = arrays()
    with pytest.raises(TypeError, match=r"takes 3 arrays \(A, B, C"):
        add_mod(a, b)
    with pytest.raises(TypeError, match="parameter 'A' must be a numpy.ndarray, got list"):
        add_mod([1.0] * 16, b, c)


def test_non_contiguous(add_mod):
    a, b, c = arrays()
    strided = np.ones(32, "float32")[::2]
    with pytest.raises(ValueError, match="parameter 'A' must be C-contiguous"):
        add_mod(strided, b, c)
    fortran = np.asfortranarray(np.ones((4, 4), "float32"))
    mm = build(RP.matmul_sym(4))
    with pytest.raises(ValueError, match="parameter 'A' must be C-contiguous"):
        mm(fortran, np.ones((4, 3), "float32"), np.zeros((4, 3), "float32"))


def test_misaligned(add_mod):
    raw = np.zeros(16 * 4 + 1, np.uint8)
    mis = raw[1:].view("float32")
    assert mis.ctypes.data % 4 != 0 and mis.flags.c_contiguous
    a, b, c = arrays()
    with pytest.raises(ValueError, match="parameter 'A' is misaligned"):
        add_mod(mis, b, c)


def test_read_only_output_and_overlap(add_mod):
    a, b, c = arrays()
    ro = np.zeros(16, "float32")
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="parameter 'C' is written by the function but the array is read-only"):
        add_mod(a, b, ro)
    a2 = a.copy()
    ro_input = a2.copy()
    ro_input.flags.writeable = False
    add_mod(ro_input, b, c)  # read-only inputs are fine
    with pytest.raises(ValueError, match="output parameter 'C' overlaps the memory of parameter 'A'"):
        add_mod(a2, b, a2)


def test_symbolic_dims_must_be_consistent(mm_mod):
    a, b, c = np.ones((3, 8), "float32"), np.ones((8, 5), "float32"), np.zeros((3, 5), "float32")
    mm_mod(a, b, c)
    np.testing.assert_array_equal(c, 8)
    with pytest.raises(ValueError, match=r"parameter 'C' expects shape \(3, 5\), got shape \(3, 6\)"):
        mm_mod(a, b, np.zeros((3, 6), "float32"))
    with pytest.raises(ValueError, match=r"parameter 'B' expects shape \(8, 5\), got shape \(7, 5\)"):
        mm_mod(a, np.ones((7, 5), "float32"), c)


def test_symbolic_shape_expression_parameter():
    """A parameter dimension given as an expression of a symbolic one (n + 1) is checked too."""
    from tunefarm.ir import Buffer, BufferStore, For, PrimFunc, wrap_root

    n = Var("n", "int64")
    A, B = Buffer("A", (n,)), Buffer("B", (n + 1,))
    i = Var("i", "int64")
    f = PrimFunc([A, B], wrap_root(For(i, 0, n, "serial", BufferStore(B, A[i], (i + 1,)))), name="shift")
    mod = build(f)
    a = np.arange(5, dtype="float32")
    b = np.zeros(6, "float32")
    mod(a, b)
    np.testing.assert_array_equal(b[1:], a)
    with pytest.raises(ValueError, match=r"parameter 'B' expects shape \(6,\), got shape \(5,\)"):
        mod(a, np.zeros(5, "float32"))


def test_bound_call_checks_once(add_mod):
    a, b, c = arrays()
    with pytest.raises(ValueError, match="parameter 'B'"):
        add_mod["add"].bind(a, np.ones(3, "float32"), c)
    f = add_mod["add"].bind(a, b, c)
    a[:] = 5
    f()  # the bound call reads the same memory: updated inputs are seen
    np.testing.assert_array_equal(c, 6)
    assert f.arrays[0] is a


def test_unknown_function_name(add_mod):
    with pytest.raises(KeyError, match="no function 'nope'; it has \\['add'\\]"):
        add_mod["nope"]
