"""Reference executor speed: median wall time of ``interpret`` on course-sized programs (no asserts).

Run: python benchmarks/bench_reference.py
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from tunefarm import te
from tunefarm.reference import compile_reference, interpret
from tunefarm.te import ops


def median_seconds(fn, repeat: int = 5) -> float:
    """Median CPU time of ``fn`` (process time: the interpreter is single-threaded, and CPU time is far less
    disturbed than wall time when other jobs share the machine)."""
    fn()  # warm-up (compiles the program once)
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def case(name, inputs, output, arrays):
    f = te.create_prim_func(list(inputs) + [output])
    out = np.zeros(tuple(output.shape), output.dtype)
    t_compile = time.perf_counter()
    compile_reference(f)
    t_compile = time.perf_counter() - t_compile
    t = median_seconds(lambda: interpret(f, *arrays, out))
    flop = te.estimate_flop(f)
    print(f"{name:<34} run {t * 1e3:8.2f} ms   compile {t_compile * 1e3:6.2f} ms   "
          f"{flop / t / 1e6:7.2f} MFLOP/s   {t / flop * 1e9:6.1f} ns/flop")


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (32, 64):
        A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
        a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
        case(f"matmul {n}^3", [A, B], ops.matmul(A, B), [a, b])
    A, B = te.placeholder((32, 32), name="A"), te.placeholder((32, 32), name="B")
    case("matmul+relu 32^3 (fused)", [A, B], ops.relu(ops.matmul(A, B)), [a[:32, :32].copy(), b[:32, :32].copy()])
    X, W = te.placeholder((1, 8, 16, 16), name="x"), te.placeholder((8, 8, 3, 3), name="w")
    x = rng.standard_normal((1, 8, 16, 16)).astype("float32")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    case("conv2d 1x8x16x16 k3 pad1", [X, W], ops.conv2d(X, W, padding=1), [x, w])
    n = te.var("n", "int64")
    x2, w2, b2 = te.placeholder((n, 784), name="x"), te.placeholder((128, 784), name="w"), te.placeholder((128,), name="b")
    f = te.create_prim_func([x2, w2, b2, ops.dense_bias_relu(x2, w2, b2)])
    xa = rng.standard_normal((1, 784)).astype("float32")
    wa = rng.standard_normal((128, 784)).astype("float32")
    ba = rng.standard_normal(128).astype("float32")
    out = np.zeros((1, 128), "float32")
    t = median_seconds(lambda: interpret(f, xa, wa, ba, out))
    flop = te.estimate_flop(f, dims={"n": 1})
    print(f"{'dense_bias_relu n=1 (symbolic)':<34} run {t * 1e3:8.2f} ms   "
          f"{flop / t / 1e6:7.2f} MFLOP/s   (symbolic batch)")


if __name__ == "__main__":
    main()
