"""Every course program and te operator compiles and matches both numpy and the reference executor."""
from __future__ import annotations

import numpy as np
import pytest

import course_programs as cp
from tunefarm import te
from tunefarm.reference import interpret
from tunefarm.runtime import build
from tunefarm.target import Target
from tunefarm.te import ops

SYM = {"n": 7, "m": 33}
# 128^3 matmuls take seconds in the (Python) reference executor: numpy alone is their oracle
NUMPY_ONLY = {"mm_relu", "matmul"}
RNG = np.random.default_rng(11)


def _arrays(fn):
    arrays = []
    for p in fn.params:
        shape = tuple(eval_dim(d) for d in p.shape)
        if p.dtype.kind in "iu":
            arrays.append(RNG.integers(-50, 50, size=shape).astype(p.dtype))
        else:
            arrays.append(RNG.standard_normal(shape).astype(p.dtype))
    return arrays


def eval_dim(d):
    return d if isinstance(d, int) else SYM[d]


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("name", sorted(cp.PRIM_FUNCS))
def test_course_program(name, cores):
    f = cp.PRIM_FUNCS[name]
    mod = build(f, Target.host(cores))
    (fname,) = mod.function_names
    args = _arrays(mod[fname])
    out = np.zeros_like(args[-1])
    mod[fname](*args[:-1], out)
    want = cp.REFERENCES[name](*args[:-1])
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    if name not in NUMPY_ONLY:
        ref = np.zeros_like(args[-1])
        interpret(f, *args[:-1], ref)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(cp.MODULES))
def test_course_modules_build_all_their_functions(name):
    module = cp.MODULES[name]
    mod = build(module)
    assert sorted(mod.function_names) == sorted(module.prim_funcs())


def _ph(shape, name):
    return te.placeholder(shape, name=name)


TE_CASES = {
    "matmul": lambda: ([_ph((7, 5), "A"), _ph((5, 3), "B")], ops.matmul),
    "batched_matmul": lambda: ([_ph((2, 1, 4, 3), "A"), _ph((5, 3, 6), "B")], ops.matmul),
    "dense": lambda: ([_ph((3, 8), "x"), _ph((4, 8), "w"), _ph((4,), "b")], ops.dense),
    "dense_bias_relu": lambda: ([_ph((2, 8), "x"), _ph((5, 8), "w"), _ph((5,), "b")], ops.dense_bias_relu),
    "add_broadcast": lambda: ([_ph((3, 1), "a"), _ph((1, 4), "b")], ops.add),
    "elementwise_chain": lambda: ([_ph((6, 5), "a")],
                                  lambda a: ops.tanh(ops.sigmoid(ops.exp(ops.negative(ops.relu(a)))))),
    "sqrt_log": lambda: ([_ph((9,), "a")], lambda a: ops.log(ops.sqrt(ops.add(ops.multiply(a, a), a)))),
    "conv2d": lambda: ([_ph((1, 3, 7, 7), "X"), _ph((4, 3, 3, 3), "W")],
                       lambda x, w: ops.conv2d(x, w, stride=2, padding=1)),
    "max_pool2d": lambda: ([_ph((1, 2, 6, 6), "X")], lambda x: ops.max_pool2d(x, 2, 2, 0)),
    "flatten": lambda: ([_ph((2, 3, 4), "X")], ops.flatten),
    "transpose": lambda: ([_ph((2, 3, 4), "X")], lambda x: ops.transpose(x, (2, 0, 1))),
    "reshape": lambda: ([_ph((2, 6), "X")], lambda x: ops.reshape(x, (3, 4))),
}


@pytest.mark.parametrize("name", sorted(TE_CASES))
def test_te_operator(name):
    inputs, op = TE_CASES[name]()
    out_t = op(*inputs)
    f = te.create_prim_func(list(inputs) + [out_t])
    arrays = [RNG.standard_normal(tuple(int(s) for s in t.shape)).astype("float32") for t in inputs]
    if name == "sqrt_log":
        arrays = [np.abs(a) + 0.5 for a in arrays]
    shape = tuple(int(getattr(s, "value", s)) for s in out_t.shape)
    got, ref = np.zeros(shape, "float32"), np.zeros(shape, "float32")
    build(f)(*arrays, got)
    interpret(f, *arrays, ref)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
