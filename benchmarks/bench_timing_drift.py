"""How steady is this machine? One fixed kernel timed back to back for a while.

    python benchmarks/bench_timing_drift.py [--seconds 20] [--min-repeat-ms 3]

The kernel is a 4 x 16 register-tiled, vectorized and unrolled matmul 128^3 (the shape of the programs the
tuner finds), built once, on 64-byte-aligned arrays that never move. Nothing about it changes between
timings, so every spread printed is the machine's: quantiles of the timings, the ratio of the slow to the
fast regime, and how often consecutive timings switch between "fast" (within 10% of the fastest) and slow.
A tuning criterion of "within 5% of the best" is only decidable when this spread is well under 5%.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tunefarm.runtime import aligned, build  # noqa: E402
from tunefarm.schedule import Schedule  # noqa: E402
from tunefarm.search.workloads import builtin_workload  # noqa: E402
from tunefarm.target import Target  # noqa: E402


def kernel():
    func = builtin_workload("matmul-128")
    sch = Schedule(func)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.vectorize(j1)
    sch.unroll(i1)
    return func, sch.mod["main"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--min-repeat-ms", type=float, default=3.0)
    args = ap.parse_args(argv)
    func, scheduled = kernel()
    rng = np.random.default_rng(0)
    arrays = [aligned.copy(rng.uniform(-1, 1, p.const_shape()).astype(p.dtype)) for p in func.params]
    timer = build(scheduled, Target.host(num_cores=1)).time_evaluator("main", number=1, repeat=1,
                                                                       min_repeat_ms=args.min_repeat_ms)
    timer(*arrays)
    xs = []
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        xs.append(timer(*arrays).results[0] * 1e6)
    xs = np.asarray(xs)
    q = np.quantile(xs, [0.0, 0.1, 0.5, 0.9])
    fast = xs <= 1.1 * q[0]
    print(f"{len(xs)} timings of {args.min_repeat_ms:g} ms over {args.seconds:g} s (us per call): "
          f"min {q[0]:.1f}, p10 {q[1]:.1f}, median {q[2]:.1f}, p90 {q[3]:.1f}")
    print(f"median / min = {q[2] / q[0]:.2f}; p90 / p10 = {q[3] / q[1]:.2f}; timings within 10% of the fastest: "
          f"{fast.mean():.0%}; switches between fast and slow: {int(np.sum(fast[1:] != fast[:-1]))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
