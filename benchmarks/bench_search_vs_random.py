"""Evolutionary search + cost model against random replay of the same auto space, at equal trial budgets.

    python benchmarks/bench_search_vs_random.py [--trials 256] [--seeds 5] [--workloads matmul-128,dense-relu-784-128]
    python benchmarks/bench_search_vs_random.py --db-dir DIR --reuse      # re-evaluate stored jobs only

For every workload and seed, one job per strategy (single-thread kernels, LocalFarm with 2 workers, no driver
pipeline so the cost model has learned from every batch before it picks the next one). Target: the median
trials the evolutionary jobs need to get within 5% of the best known latency is at most a third of random's.

How "within 5% of the best known latency" is judged, and why not from the tuning records alone
-----------------------------------------------------------------------------------------------
On this shared 2-core VM one program measured twice differs by far more than 5%: over the programs that two
jobs of a 10-job sweep both measured, the median |log ratio| of their fastest repeats was 0.13 (0.43 at the
90th percentile); one dense+ReLU program ranged 4.70-7.48 us over 8 jobs, one matmul program 43.7 vs 83.4 us.
The first version of this benchmark took the minimum, over all 10 jobs, of every trial's fastest repeat: the
luckiest draw of the luckiest program, which no job can be asked to reproduce, so whether a job "reached" it
was mostly a lottery on timing noise (and on which jobs ran in a quiet minute). The benchmark now re-measures:

1. *Candidates*: every program that was a job's answer at some point (its running best by its records' median
   repeat, as the job saw it: what ``db.best`` and ``tunefarm.compile`` use; ``--answer-by min`` takes the fastest
   repeat instead, which picks whichever program was timed luckiest) and each job's ``--top`` fastest measured
   programs, distinct by program hash.
2. *Re-timing*: all candidates are built once and timed in ``--rounds`` alternating rounds (a fresh random
   order every round, the host measurement lock held per timing so no other tunefarm timing overlaps). Each
   round places the arrays at new random offsets within a page, the same for all programs of the round: a
   kernel's time depends on where its buffers sit (one matmul program took 43.7-62.7 us at seven placements
   of the same inputs; tuning measured it at 43.9), and the farm's trials each get whatever placement their
   copies land on -- a large part of the "noise" above. A program's *robust latency* is the ``--quantile``
   (median) over rounds of its per-round fastest repeat: every candidate sees the same minutes of the machine
   and the same placements.
3. *Best known* = the smallest robust latency. A job has *reached* the goal at trial t when the program it
   would answer with after t trials (its running best, by its own measurements) has a robust latency within
   ``--within`` of the best known; the budget + 1 when it never does.

The job's own measurements still choose its answer (a job that times a mediocre program luckily keeps that
answer), so timing noise during tuning still counts against a strategy -- equally against both -- but the
yardstick is no longer a single extreme draw. The old statistic is printed too, for comparison.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np  # noqa: E402

STRATEGIES = ("evolutionary", "random")
PAGE = 4096


def trials_to_reach(lat_us: np.ndarray, target_us: float, budget: int) -> int:
    """1-based trial index at which the running best first gets to ``target_us`` (budget + 1 if never)."""
    best = np.fmin.accumulate(np.where(np.isfinite(lat_us), lat_us, np.inf))
    hit = np.nonzero(best <= target_us)[0]
    return int(hit[0]) + 1 if len(hit) else budget + 1


def answers(lat_us: np.ndarray) -> list[int]:
    """For each trial, the index of the job's running-best trial so far (-1 before the first success)."""
    out, best, arg = [], math.inf, -1
    for i, v in enumerate(lat_us):
        if np.isfinite(v) and v < best:
            best, arg = float(v), i
        out.append(arg)
    return out


def trials_to_reach_robust(hashes: list[str], lat_us: np.ndarray, robust: dict, goal_us: float,
                           budget: int) -> int:
    """1-based trial at which the job's answer (running best by its own ``lat_us``) has a robust latency
    (``robust[hash]``) at most ``goal_us``; budget + 1 if never."""
    for t, a in enumerate(answers(lat_us)):
        if a >= 0 and robust.get(hashes[a], math.inf) <= goal_us:
            return t + 1
    return budget + 1


def load_job(path: str, key: str, column: str = "median_us"):
    """(program hashes, latencies in us (``column``: each record's median or fastest repeat), trace JSON texts)
    of a job's database, by trial."""
    from tunefarm.database import Database

    df = Database(path, create=False).records(key).sort_values("trial")
    lat = df[column].to_numpy(dtype=float)
    ok = (df.status.astype(str) == "ok").to_numpy()
    lat = np.where(ok & np.isfinite(lat), lat, np.nan)
    return list(df.program_hash.astype(str)), lat, list(df.trace_json)


def candidates(jobs: list, top: int) -> dict:
    """program hash -> trace JSON text: every running-best answer of every job and each job's ``top`` fastest."""
    out: dict = {}
    for hashes, lat, traces in jobs:
        picks = {a for a in answers(lat) if a >= 0}
        finite = np.where(np.isfinite(lat), lat, np.inf)
        picks |= {int(i) for i in np.argsort(finite, kind="stable")[:top] if np.isfinite(finite[i])}
        for i in picks:
            out.setdefault(hashes[i], traces[i])
    return out


def _placed(a: np.ndarray, offset: int) -> np.ndarray:
    """A copy of ``a`` starting ``offset`` bytes after a page boundary."""
    buf = np.empty(a.nbytes + 2 * PAGE, dtype=np.uint8)
    start = (-buf.ctypes.data) % PAGE + offset
    out = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def retime(func, key: str, target, programs: dict, rounds: int, repeat: int = 3, min_repeat_ms: float = 2.0,
           seed: int = 0, quantile: float = 0.5) -> dict:
    """program hash -> robust latency (us): the ``quantile`` over alternating rounds of each round's fastest
    repeat. Every round places the arrays at fresh random offsets within a page, the same for every program
    of the round: a kernel's speed depends on where its buffers sit (cache-set conflicts, 4K aliasing; one
    matmul program measured 43.7-62.7 us at seven placements), so each program is judged over the same set of
    placements instead of one arbitrary one."""
    from tunefarm.farm.check import make_arrays
    from tunefarm.farm.measure import rewrite_layout_free
    from tunefarm.farm.measure_lock import HostMeasureLock
    from tunefarm.runtime import build
    from tunefarm.schedule import Schedule, Trace

    base = make_arrays(func, key)
    built = {}
    for h, text in programs.items():
        trace = Trace.from_json(json.loads(text) if isinstance(text, str) else text)
        scheduled, packers = rewrite_layout_free(Schedule.from_trace(trace, func).mod["main"])
        fn = build(scheduled, target)["main"]
        arrays = list(base)
        for i, pack in packers:
            arrays[i] = pack(arrays[i])
        built[h] = (fn.time_evaluator(number=1, repeat=repeat, min_repeat_ms=min_repeat_ms), arrays)
    samples: dict = {h: [] for h in built}
    rng = random.Random(seed)
    order = list(built)
    lock = HostMeasureLock().open()
    for _ in range(rounds):
        rng.shuffle(order)
        offsets = [64 * rng.randrange(PAGE // 64) for _ in base]
        for h in order:
            timer, arrays = built[h]
            placed = [_placed(a, off) for a, off in zip(arrays, offsets)]
            lock.acquire()
            try:
                res = timer(*placed).results
            finally:
                lock.release()
            samples[h].append(min(res) * 1e6)
    return {h: float(np.quantile(v, quantile)) for h, v in samples.items()}


def evaluate(name: str, func, key: str, target, paths: dict, args) -> dict:
    """Counts (robust and old-style) per strategy for one workload; ``paths``: strategy -> [db path per seed]."""
    jobs = {s: [load_job(p, key, f"{args.answer_by}_us") for p in ps] for s, ps in paths.items()}
    fastest = {s: [load_job(p, key, "min_us") for p in ps] for s, ps in paths.items()}
    progs = candidates([j for js in jobs.values() for j in js], args.top)
    robust = retime(func, key, target, progs, args.rounds, quantile=args.quantile)
    best_known = min(robust.values())
    goal = best_known * (1 + args.within)
    counts = {s: [trials_to_reach_robust(h, lat, robust, goal, args.trials) for h, lat, _ in js]
              for s, js in jobs.items()}
    old_best = min(np.nanmin(lat) for js in fastest.values() for _, lat, _ in js)
    old = {s: [trials_to_reach(lat, old_best * (1 + args.within), args.trials) for _, lat, _ in js]
           for s, js in fastest.items()}
    answers_final = {s: [robust[h[answers(lat)[-1]]] / best_known for h, lat, _ in js] for s, js in jobs.items()}
    return {"name": name, "best_known": best_known, "old_best": old_best, "n_retimed": len(robust),
            "counts": counts, "old": old, "final": answers_final}


def _ratio(counts: dict) -> float:
    med = {s: statistics.median(v) for s, v in counts.items()}
    return med["evolutionary"] / med["random"] if med["random"] else math.nan


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
    ap.add_argument("--reuse", action="store_true", help="evaluate the databases already in --db-dir, run nothing")
    ap.add_argument("--top", type=int, default=8, help="fastest programs per job re-timed besides its answers")
    ap.add_argument("--rounds", type=int, default=21, help="alternating re-timing rounds")
    ap.add_argument("--quantile", type=float, default=0.5, help="of the per-round fastest repeats")
    ap.add_argument("--answer-by", choices=("median", "min"), default="median",
                    help="a job's answer after t trials: its best record by median repeat (what db.best and "
                         "tunefarm.compile use) or by fastest repeat")
    ap.add_argument("--verbose", action="store_true", help="log the task table of every round")
    args = ap.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s [%(levelname)s] %(message)s")
    if args.verbose:
        logging.getLogger("tunefarm.search").setLevel(logging.INFO)

    import tunefarm
    from tunefarm.ir.structural import workload_key
    from tunefarm.search.workloads import builtin_workload

    if args.reuse and not args.db_dir:
        ap.error("--reuse needs --db-dir")
    target = tunefarm.Target(f"llvm -num-cores={args.cores}")
    db_dir = args.db_dir or tempfile.mkdtemp(prefix="bench_search-")
    os.makedirs(db_dir, exist_ok=True)
    summary = []
    farm = None
    if not args.reuse:
        from tunefarm.farm import LocalFarm

        farm = LocalFarm(num_workers=args.workers, target=target)
    try:
        for name in args.workloads.split(","):
            func = builtin_workload(name)
            key = workload_key(func)
            paths: dict = {s: [] for s in STRATEGIES}
            for seed in range(args.seeds):
                for strategy in STRATEGIES:
                    db_path = os.path.join(db_dir, f"{name}-{strategy}-{seed}.sqlite")
                    paths[strategy].append(db_path)
                    if args.reuse:
                        continue
                    if os.path.exists(db_path):
                        os.remove(db_path)
                    r = tunefarm.tune(func, target=target, max_trials=args.trials,
                                      trials_per_round=args.trials_per_round, database=db_path, farm=farm,
                                      seed=1000 + seed, strategy=strategy, task_name=name, progress=False)
                    lat = r.database.records(key).min_us.to_numpy(dtype=float)
                    print(f"{name} seed {seed} {strategy:>12}: {len(lat)} trials, best {np.nanmin(lat):.2f} us, "
                          f"{r.trials_per_second:.1f} trials/s", flush=True)
            summary.append(evaluate(name, func, key, target, paths, args))
    finally:
        if farm is not None:
            farm.close()
    print()
    for s in summary:
        print(f"{s['name']}: best known {s['best_known']:.2f} us (robust: {args.quantile:g} quantile of {args.rounds} "
              f"alternating re-timings of {s['n_retimed']} programs); trials until the job's answer is within "
              f"{args.within:.0%}:")
        for strat in STRATEGIES:
            v = s["counts"][strat]
            fin = ", ".join(f"{x:.3f}" for x in s["final"][strat])
            print(f"  {strat:>12}: {v}  median {statistics.median(v):g}   (final answer / best known: {fin})")
        ratio = _ratio(s["counts"])
        verdict = "meets" if ratio <= 1 / 3 else "misses"
        print(f"  evolutionary / random = {ratio:.2f} ({verdict} the 1/3 target; {args.trials + 1} = never "
              f"within {args.trials} trials)")
        print(f"  old statistic (min over all jobs of single fastest repeats, {s['old_best']:.2f} us): "
              + "; ".join(f"{k} {v} median {statistics.median(v):g}" for k, v in s["old"].items())
              + f"; ratio {_ratio(s['old']):.2f}")
    print(f"databases: {db_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
