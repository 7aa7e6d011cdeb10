"""The default schedule (kernels nobody tuned): numerically identical to the unscheduled kernel, vectorized
where it should be, and never failing."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import te
from tunefarm.ir import stmt as S
from tunefarm.schedule.default_schedule import default_schedule
from tunefarm.schedule.tree import iter_paths

import course_programs as cp


def _loop_kinds(func):
    return [p[-1].kind for p in iter_paths(func.body) if isinstance(p[-1], S.For)]


def _random_inputs(func, rng):
    arrays = []
    for p in func.params:
        shape = tuple(int(s.value) for s in p.shape)
        arrays.append(rng.standard_normal(shape).astype(p.dtype))
    return arrays


def _check_same(func, rng):
    """Scheduled and unscheduled agree under the interpreter and in compiled code."""
    scheduled = default_schedule(func)
    ins = _random_inputs(func, rng)[:-1]
    out_shape = tuple(int(s.value) for s in func.params[-1].shape)
    ref = np.empty(out_shape, np.float32)
    tunefarm.interpret(func, *ins, ref)
    got = np.empty(out_shape, np.float32)
    tunefarm.interpret(scheduled, *ins, got)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    built = np.empty(out_shape, np.float32)
    tunefarm.compile(scheduled)[scheduled.name](*ins, built)
    np.testing.assert_allclose(built, ref, rtol=1e-4, atol=1e-4)
    return scheduled


def _prim(fn, *shapes, name="k"):
    holders = [te.placeholder(s, "float32", name=f"a{i}") for i, s in enumerate(shapes)]
    return te.create_prim_func([*holders, fn(*holders)]).with_name(name)


CASES = {
    "matvec_784x128": lambda: _prim(te.ops.matmul, (1, 784), (784, 128)),
    "matmul_8x96x64": lambda: _prim(te.ops.matmul, (8, 96), (96, 64)),
    "matmul_odd": lambda: _prim(te.ops.matmul, (3, 13), (13, 7)),
    "dense_bias_relu": lambda: _prim(te.ops.dense_bias_relu, (2, 24), (16, 24), (16,)),
    "conv2d_pad": lambda: _prim(lambda x, w: te.ops.conv2d(x, w, 1, 1), (1, 3, 8, 8), (8, 3, 3, 3)),
    "max_pool": lambda: _prim(lambda x: te.ops.max_pool2d(x, 2), (2, 4, 8, 8)),
    "broadcast_add": lambda: _prim(te.ops.add, (4, 16), (16,)),
    "relu_odd": lambda: _prim(te.ops.relu, (3, 5)),
    "flatten": lambda: _prim(te.ops.flatten, (2, 4, 3, 3)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_default_schedule_keeps_the_numbers(case):
    _check_same(CASES[case](), np.random.default_rng(sorted(CASES).index(case)))


def test_batch_64_mlp_layer_compiles_correctly():
    """The benchmark's big kernel (too slow to interpret): compiled output against numpy."""
    f = _prim(te.ops.matmul, (64, 784), (784, 128))
    s = default_schedule(f)
    assert "vectorized" in _loop_kinds(s)
    rng = np.random.default_rng(9)
    x, w = rng.random((64, 784), dtype=np.float32), rng.random((784, 128), dtype=np.float32)
    out = np.empty((64, 128), np.float32)
    tunefarm.compile(s)[s.name](x, w, out)
    np.testing.assert_allclose(out, x @ w, rtol=1e-4)


def test_reductions_and_elementwise_get_vector_loops():
    mv = default_schedule(CASES["matvec_784x128"]())
    kinds = _loop_kinds(mv)
    assert "vectorized" in kinds and "parallel" not in kinds
    blocks = [p[-1].block.name for p in iter_paths(mv.body) if isinstance(p[-1], S.BlockRealize)]
    assert "matmul_init" in blocks  # the reduction was decomposed so its init vectorizes separately
    assert "vectorized" in _loop_kinds(default_schedule(CASES["broadcast_add"]()))
    assert "vectorized" not in _loop_kinds(default_schedule(CASES["relu_odd"]()))  # 5 lanes: stays scalar


def test_symbolic_shapes_are_left_scalar_but_correct():
    n = te.var("n", "int64")
    a = te.placeholder((n, 16), "float32", name="a")
    b = te.placeholder((16, 24), "float32", name="b")
    f = te.create_prim_func([a, b, te.ops.matmul(a, b)])
    s = default_schedule(f)
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 24)).astype(np.float32)
    out = np.empty((5, 24), np.float32)
    tunefarm.compile(s)[s.name](x, w, out)
    np.testing.assert_allclose(out, x @ w, rtol=1e-4, atol=1e-4)


def test_never_fails_on_already_scheduled_kernels():
    # a parallel loop cannot also be vectorized: the block keeps its schedule instead of failing
    s = default_schedule(cp.vector_add)
    assert _loop_kinds(s) == ["parallel"]
    a, b = np.arange(128, dtype=np.float32), np.ones(128, np.float32)
    c = np.empty(128, np.float32)
    tunefarm.compile(s)[s.name](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    # a scheduled kernel is kept as it is: scheduling twice changes nothing
    f = CASES["matmul_8x96x64"]()
    once = default_schedule(f)
    assert default_schedule(once) is once
    _check_same(once, np.random.default_rng(3))
