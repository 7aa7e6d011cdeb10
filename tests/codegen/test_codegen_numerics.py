"""Compiled code against numpy: every operator and dtype, in scalar loops and in vectorized loops."""
from __future__ import annotations

import math

import numpy as np
import pytest

from codegen_programs import loops, matmul_naive, matmul_tiled, realize
from tunefarm.ir import Buffer, BufferStore, PrimFunc, Var, const, seq, wrap_root
from tunefarm.ir import expr as E
from tunefarm.runtime import build

N = 37  # not a multiple of any vector width: exercises the scalar tail of chunked vector loops too


def elementwise(fn, in_dtypes, out_dtype, kind="serial", n=N, use_index=False):
    """out[i] = fn(*inputs[i]) (or fn(i) when use_index), as one block under a loop of ``kind``."""
    ins = [Buffer(f"X{k}", (n,), dt) for k, dt in enumerate(in_dtypes)]
    out = Buffer("Y", (n,), out_dtype)
    body = loops([("i", n, kind)], lambda i: realize(
        "Y", [("S", n, i)],
        lambda v: BufferStore(out, fn(v) if use_index else fn(*[b[v] for b in ins]), (v,))))
    return PrimFunc(ins + [out], wrap_root(body), name="ew")


def run(func, *inputs, out_dtype, n=N):
    out = np.zeros(n, dtype=out_dtype)
    build(func)(*inputs, out)
    return out


RNG = np.random.default_rng(7)
F = RNG.standard_normal(N).astype("float32") * 3
G = RNG.standard_normal(N).astype("float32") * 3 + 0.5
I = RNG.integers(-40, 40, N).astype("int32")
J = np.where(RNG.integers(0, 2, N) == 0, -1, 1).astype("int32") * RNG.integers(1, 9, N).astype("int32")

_erf = np.vectorize(math.erf)

FLOAT_CASES = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "fma": (lambda a, b: a + a * b, lambda a, b: a + a * b),
    "min": (lambda a, b: E.min_(a, b), np.minimum),
    "max": (lambda a, b: E.max_(a, b), np.maximum),
    "floordiv": (lambda a, b: E.floordiv(a, b), lambda a, b: np.floor(a / b)),
    "floormod": (lambda a, b: E.floormod(a, b), lambda a, b: a - np.floor(a / b) * b),
    "select": (lambda a, b: E.select(a > b, a, b * 2.0), lambda a, b: np.where(a > b, a, b * 2)),
    "exp": (lambda a, b: E.call("exp", a), lambda a, b: np.exp(a)),
    "log": (lambda a, b: E.call("log", E.call("fabs", a) + 1.0), lambda a, b: np.log(np.abs(a) + 1)),
    "sqrt": (lambda a, b: E.call("sqrt", E.call("fabs", a)), lambda a, b: np.sqrt(np.abs(a))),
    "tanh": (lambda a, b: E.call("tanh", a), lambda a, b: np.tanh(a)),
    "sigmoid": (lambda a, b: E.call("sigmoid", a), lambda a, b: 1 / (1 + np.exp(-a))),
    "erf": (lambda a, b: E.call("erf", a), lambda a, b: _erf(a)),
    "floor": (lambda a, b: E.call("floor", a), lambda a, b: np.floor(a)),
    "ceil": (lambda a, b: E.call("ceil", a), lambda a, b: np.ceil(a)),
    "round": (lambda a, b: E.call("round", a * 2.0), lambda a, b: np.round(a * 2)),
    "abs": (lambda a, b: E.call("abs", a), lambda a, b: np.abs(a)),
    "pow": (lambda a, b: E.call("pow", E.call("fabs", a), b), lambda a, b: np.abs(a) ** b),
    "sin_cos": (lambda a, b: E.call("sin", a) + E.call("cos", b), lambda a, b: np.sin(a) + np.cos(b)),
    "neg": (lambda a, b: -a, lambda a, b: -a),
    "cast_roundtrip": (lambda a, b: E.cast("float32", E.cast("int32", a)), lambda a, b: np.trunc(a)),
}


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("case", sorted(FLOAT_CASES))
def test_float32_ops(case, kind):
    ir_fn, np_fn = FLOAT_CASES[case]
    f = elementwise(ir_fn, ["float32", "float32"], "float32", kind)
    got = run(f, F, G, out_dtype="float32")
    np.testing.assert_allclose(got, np_fn(F, G).astype("float32"), rtol=2e-5, atol=2e-5)


def _trunc_div(a, b):
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


INT_CASES = {
    "floordiv": (lambda a, b: E.floordiv(a, b), lambda a, b: a // b),
    "floormod": (lambda a, b: E.floormod(a, b), lambda a, b: a % b),
    "truncdiv": (lambda a, b: E.div(a, b), _trunc_div),
    "min": (lambda a, b: E.min_(a, b), np.minimum),
    "max": (lambda a, b: E.max_(a, b), np.maximum),
    "arith": (lambda a, b: a * b - a + 3, lambda a, b: a * b - a + 3),
    "abs": (lambda a, b: E.call("abs", a), np.abs),
    "select": (lambda a, b: E.select(E.logical_or(a < b, a.equal(0)), a, b), lambda a, b: np.where((a < b) | (a == 0), a, b)),
    "not": (lambda a, b: E.select(E.logical_not(a >= b), 1, 0), lambda a, b: (a < b).astype("int32")),
}


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("case", sorted(INT_CASES))
def test_int32_ops(case, kind):
    ir_fn, np_fn = INT_CASES[case]
    f = elementwise(ir_fn, ["int32", "int32"], "int32", kind)
    got = run(f, I, J, out_dtype="int32")
    np.testing.assert_array_equal(got, np_fn(I, J).astype("int32"))


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_floordiv_by_constant_of_signed_values(kind):
    f = elementwise(lambda a: E.floordiv(a, 4) * 10 + E.floormod(a, 4), ["int32"], "int32", kind)
    got = run(f, I, out_dtype="int32")
    np.testing.assert_array_equal(got, (I // 4) * 10 + I % 4)


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_loop_variable_in_values(kind):
    f = elementwise(lambda i: E.cast("float32", i * 3 - 7) + E.cast("float32", E.floormod(i, 5)), [], "float32",
                    kind, use_index=True)
    idx = np.arange(N)
    np.testing.assert_array_equal(run(f, out_dtype="float32"), (idx * 3 - 7 + idx % 5).astype("float32"))


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_bool_buffers(kind):
    f = elementwise(lambda a, b: a > b, ["float32", "float32"], "bool", kind)
    np.testing.assert_array_equal(run(f, F, G, out_dtype="bool"), F > G)
    mask = F > G
    g = elementwise(lambda m, a: E.select(m, a, E.const(-1.0)), ["bool", "float32"], "float32", kind)
    np.testing.assert_array_equal(run(g, mask, F, out_dtype="float32"), np.where(mask, F, -1.0).astype("float32"))


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_small_and_unsigned_ints_wrap_like_numpy(kind):
    a = RNG.integers(0, 256, N).astype("uint8")
    b = RNG.integers(0, 256, N).astype("uint8")
    f = elementwise(lambda x, y: x + y, ["uint8", "uint8"], "uint8", kind)
    np.testing.assert_array_equal(run(f, a, b, out_dtype="uint8"), a + b)
    g = elementwise(lambda x, y: E.cast("float32", x) - E.cast("float32", y), ["uint8", "uint8"], "float32", kind)
    np.testing.assert_array_equal(run(g, a, b, out_dtype="float32"), a.astype("float32") - b.astype("float32"))
    h = elementwise(lambda x, y: E.floordiv(x, y + E.const(1, "uint8")), ["uint8", "uint8"], "uint8", kind)
    np.testing.assert_array_equal(run(h, a, b, out_dtype="uint8"), a // (b + np.uint8(1)))


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "int8", "int16"])
def test_other_dtypes(dtype):
    x = (RNG.standard_normal(N) * 20).astype(dtype)
    y = (RNG.standard_normal(N) * 20).astype(dtype)
    f = elementwise(lambda a, b: a * b + a, [dtype, dtype], dtype, "vectorized")
    with np.errstate(over="ignore"):
        want = x * y + x
    got = run(f, x, y, out_dtype=dtype)
    if dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-2 if dtype == "float16" else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


def test_mixed_precision_cast():
    f = elementwise(lambda a, b: E.cast("float64", a) * E.cast("float64", b), ["float32", "float32"], "float64")
    np.testing.assert_allclose(run(f, F, G, out_dtype="float64"), F.astype("float64") * G.astype("float64"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_naive_matmul_with_init(dtype):
    f, ref = matmul_naive(13, 17, 9, dtype)
    a = (RNG.standard_normal((13, 9)) * 4).astype(dtype)
    b = (RNG.standard_normal((9, 17)) * 4).astype(dtype)
    c = np.full((13, 17), 99, dtype)  # init must overwrite whatever is there
    build(f)(a, b, c)
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-5)


@pytest.mark.parametrize("inner", ["vectorized", "serial"])
@pytest.mark.parametrize("rows", [True, False])
def test_register_tiled_matmul(inner, rows):
    f, ref = matmul_tiled(24, 48, 20, 4, 16, inner=inner, unroll_rows=rows)
    a = RNG.standard_normal((24, 20)).astype("float32")
    b = RNG.standard_normal((20, 48)).astype("float32")
    c = np.zeros((24, 48), "float32")
    build(f)(a, b, c)
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-4, atol=1e-4)


def test_two_stage_program_with_global_intermediates_on_stack_and_heap():
    """Y = A*2 (intermediate), Z = Y+1: small intermediates are allocas, big ones heap (freed at exit)."""
    for n in (16, 40000):  # 64 B (stack) and 160 KB (heap)
        A, Z = Buffer("A", (n,)), Buffer("Z", (n,))
        Y = Buffer("Y", (n,))
        s1 = loops([("i", n, "serial")], lambda i: realize("Y", [("S", n, i)],
                                                         lambda v: BufferStore(Y, A[v] * 2.0, (v,))))
        s2 = loops([("i", n, "vectorized" if n < 64 else "serial")], lambda i: realize(
            "Z", [("S", n, i)], lambda v: BufferStore(Z, Y[v] + 1.0, (v,))))
        f = PrimFunc([A, Z], wrap_root(seq(s1, s2), [Y]), name="two_stage")
        mod = build(f)
        ll = mod.get_source("ll")
        assert ("aligned_alloc" in ll) == (n > 10000)
        a = RNG.standard_normal(n).astype("float32")
        z = np.zeros(n, "float32")
        for _ in range(3):  # repeated calls: allocations are released each time
            mod(a, z)
        np.testing.assert_allclose(z, a * 2 + 1, rtol=1e-6)


def test_symbolic_intermediate_is_heap_allocated():
    n = Var("n", "int64")
    A, Z = Buffer("A", (n,)), Buffer("Z", (n,))
    Y = Buffer("Y", (n,))
    s1 = loops([("i", n, "serial")], lambda i: realize("Y", [("S", n, i)], lambda v: BufferStore(Y, A[v] * 3.0, (v,))))
    s2 = loops([("i", n, "serial")], lambda i: realize("Z", [("S", n, i)], lambda v: BufferStore(Z, Y[v] - A[v], (v,))))
    mod = build(PrimFunc([A, Z], wrap_root(seq(s1, s2), [Y]), name="sym_two_stage"))
    for size in (1, 5, 1000):
        a = RNG.standard_normal(size).astype("float32")
        z = np.zeros(size, "float32")
        mod(a, z)
        np.testing.assert_allclose(z, a * 2, rtol=1e-6)


def test_symbolic_matmul_dims():
    n, m = Var("n", "int64"), Var("m", "int64")
    k = 8
    A, B, C = Buffer("A", (n, k)), Buffer("B", (k, m)), Buffer("C", (n, m))
    body = loops([("i", n, "serial"), ("j", m, "serial"), ("k", k, "serial")], lambda i, j, kk: realize(
        "C", [("S", n, i), ("S", m, j), ("R", k, kk)],
        lambda vi, vj, vk: BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=lambda vi, vj, vk: BufferStore(C, const(0.0), (vi, vj))))
    mod = build(PrimFunc([A, B, C], wrap_root(body), name="mm_sym"))
    for nn, mm in ((1, 1), (3, 29), (17, 5)):
        a = RNG.standard_normal((nn, k)).astype("float32")
        b = RNG.standard_normal((k, mm)).astype("float32")
        c = np.zeros((nn, mm), "float32")
        mod(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_several_functions_in_one_module():
    from tunefarm.ir import IRModule

    f1 = elementwise(lambda a: a * 2.0, ["float32"], "float32")
    f2 = elementwise(lambda a: a + 5.0, ["float32"], "float32", "vectorized")
    mod = build(IRModule({"double": f1, "plus5": f2}))
    assert sorted(mod.function_names) == ["double", "plus5"]
    y = np.zeros(N, "float32")
    mod["double"](F, y)
    np.testing.assert_allclose(y, F * 2)
    mod["plus5"](F, y)
    np.testing.assert_allclose(y, F + 5)
    with pytest.raises(TypeError, match="call one by name"):
        mod(F, y)


def test_function_named_like_a_libm_symbol_is_still_callable():
    """A packed entry called ``exp`` must not capture the backend's own calls to libm's ``exp``."""
    from tunefarm.ir import IRModule

    f = elementwise(lambda a: E.call("exp", a), ["float64"], "float64")
    mod = build(IRModule({"exp": f}))
    x = np.linspace(-2, 2, N)
    y = np.zeros(N)
    mod["exp"](x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-12)


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint16"])
def test_integer_division_by_runtime_zero_or_minus_one_matches_numpy_instead_of_trapping(kind, dtype):
    info = np.iinfo(dtype)
    x = np.array([7, -7, info.min, info.max, 0, 5, info.min, 9] * 5, dtype=dtype)[:N] if info.min < 0 else \
        np.array([7, 0, info.max, 3, 9] * 8, dtype=dtype)[:N]
    y = np.array([0, -1, -1, 0, 0, 2, 3, -1] * 5, dtype=dtype)[:N] if info.min < 0 else \
        np.array([0, 0, 2, 5, 0] * 8, dtype=dtype)[:N]
    for ir_fn, np_fn in ((E.floordiv, np.floor_divide), (E.floormod, np.mod)):
        f = elementwise(ir_fn, [dtype, dtype], dtype, kind)
        with np.errstate(all="ignore"):
            want = np_fn(x, y)
        np.testing.assert_array_equal(run(f, x, y, out_dtype=dtype), want)


def test_zero_dimensional_output_buffer():
    n = 50
    A, S0 = Buffer("A", (n,)), Buffer("S", ())
    body = loops([("k", n, "serial")], lambda k: realize(
        "S", [("R", n, k)], lambda vk: BufferStore(S0, S0[()] + A[vk], ()),
        init=lambda vk: BufferStore(S0, const(0.0), ())))
    f = PrimFunc([A, S0], wrap_root(body), name="total")
    a = RNG.standard_normal(n).astype("float32")
    s = np.zeros((), "float32")
    build(f)(a, s)
    np.testing.assert_allclose(s, a.sum(), rtol=1e-5)
