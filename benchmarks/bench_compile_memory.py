"""Memory growth of one process that compiles many modules (what a long-lived tuning worker does).

    python benchmarks/bench_compile_memory.py [--modules 2000]

Each iteration builds a tiled matmul (a different tile each time, like tuning candidates), loads it, calls
it once and drops it. Resident memory (RSS, /proc/self/statm) is printed along the way; the growth per
module after warm-up is the number documented in ``tunefarm/runtime/jit.py``.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]

from bench_codegen import matmul_func  # noqa: E402
from search_spaces.handwritten import tiled_matmul  # noqa: E402
from tunefarm.runtime import build  # noqa: E402
from tunefarm.schedule import Schedule  # noqa: E402

TILES = [(ti, tj) for ti in (1, 2, 4, 8) for tj in (4, 8, 16, 32)]


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", type=int, default=2000)
    ap.add_argument("--n", type=int, default=64, help="matmul size")
    args = ap.parse_args(argv)
    n = args.n
    funcs = [tiled_matmul(Schedule(matmul_func(n)), ti, tj).mod["main"] for ti, tj in TILES]
    a = np.ones((n, n), "float32")
    b = np.ones((n, n), "float32")
    c = np.zeros((n, n), "float32")
    warmup = min(100, args.modules // 10)
    base = None
    t0 = time.perf_counter()
    print(f"{'modules':>8} {'RSS MB':>9} {'KB/module since warm-up':>24}")
    for k in range(1, args.modules + 1):
        mod = build(funcs[k % len(funcs)])
        mod(a, b, c)
        del mod
        if k == warmup:
            gc.collect()
            base = rss_mb()
            print(f"{k:>8} {base:>9.1f} {'(baseline)':>24}")
        elif base is not None and (k % 250 == 0 or k == args.modules):
            gc.collect()
            now = rss_mb()
            print(f"{k:>8} {now:>9.1f} {1024 * (now - base) / (k - warmup):>24.1f}")
    dt = time.perf_counter() - t0
    assert float(c[0, 0]) == n
    print(f"\n{args.modules} modules in {dt:.1f} s ({1e3 * dt / args.modules:.1f} ms each)")


if __name__ == "__main__":
    main()
