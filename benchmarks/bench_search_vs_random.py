"""Evolutionary search + cost model against random replay of the same auto space, at equal trial budgets.

    python benchmarks/bench_search_vs_random.py [--trials 256] [--seeds 5] [--workloads matmul-128,dense-relu-784-128]

For every workload and seed, one job per strategy. The *best known latency* of a workload is the best over
all its jobs; for each job we count the trials it needed to get within 5% of it (the budget + 1 when it
never did). Printed: the per-seed counts, their medians, and the ratio evolutionary / random (the target is
at most 1/3). Latencies are each trial's fastest repeat (the least disturbed by other processes). The jobs run
without the driver pipeline, so the cost model has learned from every batch before it picks the next one.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np  # noqa: E402


def trials_to_reach(lat_us: np.ndarray, target_us: float, budget: int) -> int:
    """1-based trial index at which the running best first gets to ``target_us`` (budget + 1 if never)."""
    best = np.fmin.accumulate(np.where(np.isfinite(lat_us), lat_us, np.inf))
    hit = np.nonzero(best <= target_us)[0]
    return int(hit[0]) + 1 if len(hit) else budget + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=256)
    ap.add_argument("--trials-per-round", type=int, default=16)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cores", type=int, default=1, help="1: single-thread kernels, measured two at a time")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--within", type=float, default=0.05)
    ap.add_argument("--workloads", default="matmul-128,dense-relu-784-128")
    ap.add_argument("--db-dir", default=None)
    ap.add_argument("--verbose", action="store_true", help="log the task table of every round")
    args = ap.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s [%(levelname)s] %(message)s")
    if args.verbose:
        logging.getLogger("tunefarm.search").setLevel(logging.INFO)

    import tunefarm
    from tunefarm.farm import LocalFarm
    from tunefarm.ir.structural import workload_key
    from tunefarm.search.workloads import builtin_workload

    target = tunefarm.Target(f"llvm -num-cores={args.cores}")
    db_dir = args.db_dir or tempfile.mkdtemp(prefix="bench_search-")
    os.makedirs(db_dir, exist_ok=True)
    summary = []
    with LocalFarm(num_workers=args.workers, target=target) as farm:
        for name in args.workloads.split(","):
            func = builtin_workload(name)
            key = workload_key(func)
            curves: dict = {"evolutionary": [], "random": []}
            for seed in range(args.seeds):
                for strategy in ("evolutionary", "random"):
                    db_path = os.path.join(db_dir, f"{name}-{strategy}-{seed}.sqlite")
                    if os.path.exists(db_path):
                        os.remove(db_path)
                    r = tunefarm.tune(func, target=target, max_trials=args.trials,
                                      trials_per_round=args.trials_per_round, database=db_path, farm=farm,
                                      seed=1000 + seed, strategy=strategy, task_name=name, progress=False,
                                      pipeline=False)
                    df = r.database.records(key).sort_values("trial")
                    lat = df.min_us.to_numpy(dtype=float)
                    curves[strategy].append(lat)
                    print(f"{name} seed {seed} {strategy:>12}: {len(lat)} trials, best {np.nanmin(lat):.2f} us, "
                          f"{r.trials_per_second:.1f} trials/s", flush=True)
            best_known = min(np.nanmin(c) for cs in curves.values() for c in cs)
            goal = best_known * (1 + args.within)
            counts = {s: [trials_to_reach(c, goal, args.trials) for c in cs] for s, cs in curves.items()}
            med = {s: statistics.median(v) for s, v in counts.items()}
            ratio = med["evolutionary"] / med["random"] if med["random"] else math.nan
            summary.append((name, best_known, counts, med, ratio))
    print()
    for name, best_known, counts, med, ratio in summary:
        print(f"{name}: best known {best_known:.2f} us; trials to get within {args.within:.0%}:")
        for s in ("evolutionary", "random"):
            print(f"  {s:>12}: {counts[s]}  median {med[s]:g}")
        verdict = "meets" if ratio <= 1 / 3 else "misses"
        print(f"  evolutionary / random = {ratio:.2f} ({verdict} the 1/3 target; {args.trials + 1} = never "
              f"within {args.trials} trials)")
    print(f"databases: {db_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
