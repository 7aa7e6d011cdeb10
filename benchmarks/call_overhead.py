"""What a compiled function's call from Python costs over its kernel, against numpy's call (bench_codegen.py).

Rows, each timed once per round (rounds interleave them, so load changes on a shared machine hit all alike):
- 1-element kernels with 2 and 8 arguments: the kernel alone (the native timing loop), ``f(*arrays)`` (the
  native checks, after warm-up), ``f(*arrays)`` through the Python checks (the path before warm-up and the one
  every refusal takes), and numpy's own call on 1-element arrays (``np.add(x, y, out=z)``);
- the dense + ReLU layer 1x512 -> 256 (``dense-relu-512-256``) under a fixed good schedule (8-lane rfactor of
  the reduction, 8 rows per tile): kernel, ``lib["main"](x, w, b, z)``, numpy's ``matmul``/``add``/``maximum``
  with preallocated outputs.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from tunefarm.ir import TRUE, Block, BlockRealize, Buffer, BufferStore, For, IterVar, PrimFunc, Range, Var, wrap_root
from tunefarm.runtime import build
from tunefarm.runtime.module import NATIVE_AFTER_CALLS
from tunefarm.schedule import Schedule
from tunefarm.search.workloads import load_workload

CHUNKS = 10


def sum_kernel(n_args: int) -> PrimFunc:
    """``out[0] = in0[0] + ... `` over 1-element arrays: ``n_args`` parameters, almost no work."""
    ins = [Buffer(f"in{j}", (1,)) for j in range(n_args - 1)]
    out = Buffer("out", (1,))
    i, v = Var("i", "int64"), Var("v", "int64")
    value = ins[0][v]
    for buf in ins[1:]:
        value = value + buf[v]
    blk = Block("out", [IterVar(v, Range(0, 1), "S")], [], [], BufferStore(out, value, (v,)))
    return PrimFunc(ins + [out], wrap_root(For(i, 0, 1, "serial", BlockRealize([i], TRUE, blk))), name="main")


def dense_relu_scheduled() -> PrimFunc:
    """``relu(x @ w.T + b)``, 1x512 -> 256, with a fixed schedule that beats numpy's call on the kernel."""
    _, func = load_workload("dense-relu-512-256")
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("T_add"))
    _, _, k = sch.get_loops(sch.get_block("T_matmul_NT"))
    _, k1 = sch.split(k, factors=[None, 8])
    rf = sch.rfactor(k1, 2)
    _, j, k0, k1 = sch.get_loops(rf)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(j0, k0, j1, k1)
    sch.vectorize(k1)
    sch.unroll(j1)
    sch.decompose_reduction(rf, k0)
    return sch.mod["main"]


def python_path_function(func: PrimFunc, args: list):
    """The built function, called past its warm-up with the native path switched off: every call runs
    ``check_arrays`` (the switch is read when the native path would be built)."""
    os.environ["TUNEFARM_NO_NATIVE_CALL"] = "1"
    try:
        f = build(func)["main"]
        for _ in range(NATIVE_AFTER_CALLS):
            f(*args)
        return f
    finally:
        del os.environ["TUNEFARM_NO_NATIVE_CALL"]


def per_call(call, args, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        call(*args)
    return (time.perf_counter() - t0) / number


def case(label: str, func: PrimFunc, args: list, numpy_call, number: int) -> dict:
    """The callables of one row group, warmed up; ``numpy_call()`` computes the same with numpy. Timings are
    taken in ``CHUNKS`` alternating slices of ``number`` calls, so the kernel and the call see the same load."""
    native = build(func)["main"]
    for _ in range(NATIVE_AFTER_CALLS):
        native(*args)
    slow = python_path_function(func, args)
    evaluator = native.time_evaluator(number=max(1, number // CHUNKS), repeat=1)
    return {"label": label, "native": native, "slow": slow, "args": args, "numpy": numpy_call,
            "kernel": lambda: evaluator(*args).results[0], "number": number}


def cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(0)
    out = []
    for n_args in (2, 8):
        arrays = [np.ones(1, "float32") for _ in range(n_args)]
        x, y, z = np.ones(1, "float32"), np.ones(1, "float32"), np.zeros(1, "float32")
        out.append(case(f"{n_args} args, 1 element", sum_kernel(n_args), arrays,
                        lambda x=x, y=y, z=z: np.add(x, y, out=z), 2_000 if quick else 20_000))
    x, w, b = (rng.standard_normal(s, dtype="float32") for s in ((1, 512), (256, 512), (256,)))
    z, t = np.zeros((1, 256), "float32"), np.zeros((1, 256), "float32")

    def numpy_dense():
        np.matmul(x, w.T, out=t)
        np.add(t, b, out=t)
        np.maximum(t, 0, out=z)

    dense = case("dense+ReLU 1x512->256", dense_relu_scheduled(), [x, w, b, z], numpy_dense, 200 if quick else 2000)
    dense["native"](x, w, b, z)
    np.testing.assert_allclose(z, np.maximum(x @ w.T + b, 0), rtol=1e-4, atol=1e-4)
    return out + [dense]


def sample(c: dict) -> dict:
    """One round of a case: per-call seconds of each way of running it."""
    n = max(1, c["number"] // CHUNKS)
    got = {"kernel": [], "call": [], "python checks": [], "numpy": []}
    for _ in range(CHUNKS):
        got["kernel"].append(c["kernel"]())
        got["call"].append(per_call(c["native"], c["args"], n))
        got["python checks"].append(per_call(c["slow"], c["args"], max(1, n // 10)))
        got["numpy"].append(per_call(c["numpy"], (), n))
    return {k: statistics.mean(v) for k, v in got.items()}


def report(repeat: int, quick: bool, row) -> None:
    """Time every case ``repeat`` rounds and print medians, spreads and per-round ratios side by side."""
    all_cases = cases(quick)
    samples = {c["label"]: [] for c in all_cases}
    for _ in range(repeat):
        for c in all_cases:
            samples[c["label"]].append(sample(c))
    for label, rounds in samples.items():
        series = {k: [r[k] * 1e6 for r in rounds] for k in rounds[0]}
        over = [r["call"] * 1e6 - r["kernel"] * 1e6 for r in rounds]
        py_over = [r["python checks"] * 1e6 - r["kernel"] * 1e6 for r in rounds]
        for key in ("kernel", "call", "python checks", "numpy"):
            xs = series[key]
            row(f"{label}: {key}", statistics.median(xs), "us", f"spread {min(xs):.2f}-{max(xs):.2f}")
        row(f"{label}: call overhead over the kernel", statistics.median(over), "us",
            f"spread {min(over):.2f}-{max(over):.2f}; through the Python checks {statistics.median(py_over):.2f}")
        ratio = [r["numpy"] / r["call"] for r in rounds]
        row(f"{label}: numpy call / tunefarm call", statistics.median(ratio), "x",
            f"spread {min(ratio):.2f}-{max(ratio):.2f} (above 1: the tunefarm call is faster)")
