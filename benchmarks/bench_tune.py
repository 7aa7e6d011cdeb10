"""Tune the benchmark workloads with the auto space, side by side with TVM MetaSchedule and numpy.

    python benchmarks/bench_tune.py [--trials 256] [--cores 2] [--workers 2] [--farm local|ray]
                                    [--workloads matmul-128,matmul-512,dense-relu-784-128,conv2d-1x64x28x28-64x3x3]
                                    [--tvm | --no-tvm] [--tvm-trials N] [--tvm-cores 1]

For each workload: a 256-trial job (auto space, evolutionary search + XGBoost cost model) on this machine;
then, with the farm closed, the best five programs are rebuilt and re-timed here (30 repeats, median), which
is the latency reported.

Defaults: a 2-core target (parallel loops run on a 2-thread team) measured by ONE worker. A multi-threaded
kernel must be timed with nothing else running: with two workers, one worker's LLVM build takes a core from
the other's thread team and its timing comes out 10-400x too slow (libgomp threads spin at the barrier
waiting for a descheduled team mate), which poisons the search. ``--cores 1 --workers 2`` measures
single-thread kernels two at a time (the throughput configuration). Printed per workload: best latency, TVM
MetaSchedule's, numpy single-thread (measured now; the quoted value too), the ratios, trials per second, the
wall time to reach TVM's best, the driver's own CPU per trial (search + cost model), the CPU per trial of the
whole job (driver and LocalFarm workers) next to what 10x TVM's trials/s would allow on this machine's cores, the
cost model's held-out pairwise ranking accuracy, and (JSON lines) how many trials the early stop timed fewer times.

TVM: when ``apache-tvm`` is installed (``--tvm``, the default then), Apache TVM 0.27 MetaSchedule tunes the
same workloads here, in the same run, after tunefarm's farm is closed: ``benchmarks/tvm_side.py`` in a
subprocess per workload (host CPU name, 1 core, ``TVM_NUM_THREADS=1``, ``--tvm-trials``, default = --trials),
its five best re-timed like tunefarm's; its latency and trials/s, and tunefarm's ratios to them, are printed.
The quoted TVM figures (TVM MetaSchedule 0.27 measured on another machine with ``-mcpu=znver4``, AVX-512; 2.3-3.3
trials/s) stay as a labelled reference column ("TVM q"); without TVM ("TVM not installed: quoted figures")
they are the only TVM figures and the trials/s ratio uses their mean.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy baselines are single-thread, like TVM's 1 core
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np  # noqa: E402

# workload -> (TVM MetaSchedule 256-trial best in us, numpy single-thread in us), as quoted
QUOTED = {
    "matmul-128": (36.0, 43.7),
    "matmul-512": (2340.0, 2600.0),
    "dense-relu-784-128": (10.1, 6.9),
}
TVM_TRIALS_PER_SEC = (2.3, 3.3)


def numpy_baseline(name: str, func) -> float | None:
    """Median latency (us) of the same computation in numpy, single thread."""
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype(p.dtype) for p in func.params]
    if name.startswith("matmul"):
        a, b = arrays[0], arrays[1]
        fn = lambda: a @ b  # noqa: E731
    elif name.startswith("dense-relu"):
        x, w, bias = arrays[0], arrays[1], arrays[2]
        fn = lambda: np.maximum(x @ w.T + bias, 0)  # noqa: E731
    elif name.startswith("conv2d"):
        data, weight = arrays[0], arrays[1]
        n, c, h, wd = data.shape
        f, _, kh, kw = weight.shape
        oh, ow = func.params[-1].const_shape()[2:]
        pad = (kh - 1) // 2 if oh == h else 0
        wmat = weight.reshape(f, -1)

        def fn():
            d = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
            cols = np.lib.stride_tricks.sliding_window_view(d, (kh, kw), axis=(2, 3))[:, :, :oh, :ow]
            cols = cols.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
            return wmat @ cols[0]
    else:
        return None
    fn()
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(20):
            fn()
        times.append((time.perf_counter() - t0) / 20)
    return statistics.median(times) * 1e6


def remeasure(db, key, func, target, k: int = 5) -> tuple[float, object]:
    """Rebuild the ``k`` best records and time them here (farm idle); returns (best median us, record)."""
    from tunefarm.runtime import build
    from tunefarm.schedule import Schedule, Trace

    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype(p.dtype) for p in func.params]
    best = (math.inf, None)
    for rec in db.top_k(key, k, target=str(target)):
        mod = build(Schedule.from_trace(Trace.from_json(rec.trace_json), func).mod["main"], target)
        timer = mod.time_evaluator("main", number=1, repeat=30, min_repeat_ms=2)
        us = statistics.median(timer(*arrays).results) * 1e6
        if us < best[0]:
            best = (us, rec)
    return best


def time_to_reach(db, key, target, latency_us: float, job_id: int) -> float | None:
    """Seconds from the job's start until a trial at least as fast as ``latency_us`` was committed."""
    df = db.records(key, target=str(target))
    df = df[df.job_id == job_id].sort_values("created")
    jobs = db.jobs()
    start = jobs[jobs.job_id == job_id].started.iloc[0]
    hit = df[df.median_us <= latency_us]
    if hit.empty:
        return None
    return (hit.created.iloc[0] - start).total_seconds()


def tvm_rates(text: str) -> dict:
    """``--tvm-rate``: "1.58" (every workload) or "matmul-128=1.56,conv2d-1x64x28x28-64x3x3=0.77"."""
    if "=" not in text:
        return {"*": float(text)}
    return {k.strip(): float(v) for k, v in (item.split("=", 1) for item in text.split(","))}


_SEEN_WORKERS: set[int] = set()


def tree_cpu_seconds(farm) -> float | None:
    """CPU seconds used so far by this process, its reaped children and every worker process of the farm seen so
    far that is still our child (a LocalFarm's processes, read from /proc, zombies included; None for other farms
    or without /proc). The difference over a job is the CPU the whole job took, driver and workers: on a machine
    with C cores, T trials/s can cost at most C / T. (A worker recycled during the job is counted once: from /proc
    until it is reaped, with the reaped children after.)"""
    pids = getattr(farm, "worker_pids", None)
    if pids is None or not os.path.exists("/proc/self/stat"):
        return None
    _SEEN_WORKERS.update(pids)
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    tick = os.sysconf("SC_CLK_TCK")
    for pid in sorted(_SEEN_WORKERS):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            _SEEN_WORKERS.discard(pid)  # reaped: counted with the children from now on
            continue
        if int(fields[1]) != os.getpid():
            _SEEN_WORKERS.discard(pid)  # the pid was reused by a process that is not ours
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def early_stopped(db_path: str, repeat: int) -> int:
    """OK records timed fewer than ``repeat`` times: the tuner's early stop of programs far slower than the
    task's best (``tunefarm.tuning.EARLY_STOP_FACTOR``)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute("SELECT run_secs_json FROM records WHERE status = 'ok'").fetchall()
    return sum(1 for (text,) in rows if text and len(json.loads(text)) < repeat)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=256)
    ap.add_argument("--trials-per-round", type=int, default=32)
    ap.add_argument("--cores", type=int, default=2, help="cores of the target (parallel loops)")
    ap.add_argument("--workers", type=int, default=1, help="measurement workers (see above)")
    ap.add_argument("--farm", choices=("local", "ray"), default="local")
    ap.add_argument("--workloads", default="matmul-128,matmul-512,dense-relu-784-128,conv2d-1x64x28x28-64x3x3")
    ap.add_argument("--db-dir", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--omp-wait-policy", choices=("active", "passive"), default=None,
                    help="libgomp's OMP_WAIT_POLICY for the parallel loops of 2-core kernels (default: libgomp's "
                         "own, which spins; 'passive' survives other load on the machine but pays a thread "
                         "wake-up per parallel region)")
    ap.add_argument("--verbose", action="store_true", help="log the task table of every round")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tvm_side import run_tvm, tvm_available  # benchmarks/tvm_side.py: never imports tvm in this process

    ap.add_argument("--tvm", action=argparse.BooleanOptionalAction, default=tvm_available(),
                    help="also tune with Apache TVM MetaSchedule here (default: on when tvm is importable)")
    ap.add_argument("--tvm-trials", type=int, default=None, help="TVM's budget (default: --trials)")
    ap.add_argument("--tvm-cores", type=int, default=1, help="TVM's target num-cores and TVM_NUM_THREADS")
    ap.add_argument("--tvm-rate", type=tvm_rates, default=None,
                    help="TVM's trials/s measured on this machine before, for 'x TVM' and 'at 10x' when TVM does "
                         "not run now (instead of the quoted mean): one number, or workload=rate,... ")
    args = ap.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s [%(levelname)s] %(message)s")
    if args.verbose:
        logging.getLogger("tunefarm.search").setLevel(logging.INFO)

    if args.omp_wait_policy:  # before any kernel loads libgomp, here and in the (spawned) workers
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy.upper()
    import tunefarm
    from tunefarm.farm import create as create_farm
    from tunefarm.ir.structural import workload_key
    from tunefarm.tuning.api import DEFAULT_MEASURE
    from tunefarm.search.workloads import builtin_workload

    target = tunefarm.Target(f"llvm -num-cores={args.cores}")
    db_dir = args.db_dir or tempfile.mkdtemp(prefix="bench_tune-")
    os.makedirs(db_dir, exist_ok=True)
    farm = create_farm(args.farm, num_workers=args.workers, target=target)
    rows, done = [], []
    with farm:
        for name in args.workloads.split(","):
            func = builtin_workload(name)
            db_path = os.path.join(db_dir, f"{name}.sqlite")
            if os.path.exists(db_path):
                os.remove(db_path)
            print(f"== {name}: {args.trials} trials, auto space, target {target.cpu} with {target.num_cores} "
                  f"core(s), {args.workers} worker(s)", flush=True)
            cpu0 = tree_cpu_seconds(farm)
            result = tunefarm.tune(func, target=target, max_trials=args.trials,
                                   trials_per_round=args.trials_per_round, database=db_path, farm=farm,
                                   seed=args.seed, task_name=name)
            cpu1 = tree_cpu_seconds(farm)
            done.append((name, func, result, None if cpu0 is None or cpu1 is None else cpu1 - cpu0))
    tvm_runs = {}  # TVM MetaSchedule on the same workloads, one subprocess each, with the farm closed
    if args.tvm:
        tvm_trials = args.tvm_trials or args.trials
        for name, _, _, _ in done:
            print(f"== TVM MetaSchedule {name}: {tvm_trials} trials, mcpu {target.cpu}, {args.tvm_cores} core(s)",
                  flush=True)
            tvm_runs[name] = run_tvm(name, tvm_trials, mcpu=target.cpu, cores=args.tvm_cores, seed=args.seed,
                                     timeout=900 + 15 * tvm_trials)
            if "error" in tvm_runs[name]:
                print(f"   TVM failed: {tvm_runs[name]['error']}\n{tvm_runs[name].get('log', '')}", flush=True)
            print(json.dumps(tvm_runs[name], default=str), flush=True)
    else:
        print("TVM not installed: quoted figures" if not tvm_available() else "TVM disabled (--no-tvm): quoted figures")
    for name, func, result, job_cpu in done:  # re-time the best programs with the farm closed
        key = workload_key(func)
        best_us, _ = remeasure(result.database, key, func, target)
        tvm_quoted_us, np_quoted = QUOTED.get(name, (None, None))
        tvm_run = tvm_runs.get(name, {})
        tvm_us = tvm_run.get("best_us")
        np_us = numpy_baseline(name, func)
        reach_us = tvm_us or tvm_quoted_us
        reach = time_to_reach(result.database, key, target, reach_us, result.job_id) if reach_us else None
        m = result.cost_model.metrics
        rows.append({
            "workload": name, "best_us": best_us, "farm_best_us": result.best_latency_us, "tvm_us": tvm_us,
            "tvm_trials_per_s": tvm_run.get("trials_per_s"), "tvm_trials": tvm_run.get("trials"),
            "tvm_wall_s": tvm_run.get("wall_s"), "tvm_quoted_us": tvm_quoted_us,
            "numpy_us": np_us, "numpy_quoted_us": np_quoted, "trials": result.trials,
            "wall_s": result.wall_secs, "trials_per_s": result.trials_per_second,
            "reach_tvm_s": reach, "search_ms_per_trial": 1e3 * result.search_cpu_secs / max(1, result.trials),
            "model_ms_per_trial": 1e3 * result.model_cpu_secs / max(1, result.trials),
            "cpu_ms_per_trial": None if job_cpu is None else 1e3 * job_cpu / max(1, result.trials),
            "model_pair_acc": m.pairwise_accuracy, "model_top_k_recall": m.top_k_recall,
            "build_s_median": float(result.database.records(key).build_secs.median()),
            "early_stopped": early_stopped(result.database.path, DEFAULT_MEASURE["repeat"]),
            "statuses": {k: v for k, v in result.database.records(key).status.value_counts().items() if v}})
        print(json.dumps(rows[-1], default=str), flush=True)

    def f(x, spec=".2f"):
        return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)

    print()
    print(f"{'workload':<28} {'best us':>9} {'TVM us':>8} {'ratio':>6} {'TVM q':>7} {'ratio':>6} {'numpy us':>9} "
          f"{'ratio':>6} {'trials/s':>8} {'TVM tr/s':>8} {'x TVM':>6} {'reach TVM':>9} {'search ms/tr':>12} "
          f"{'model acc':>9} {'cpu ms/tr':>9} {'at 10x':>6}")
    for r in rows:
        ratio_tvm = r["best_us"] / r["tvm_us"] if r["tvm_us"] else None
        ratio_q = r["best_us"] / r["tvm_quoted_us"] if r["tvm_quoted_us"] else None
        ratio_np = r["best_us"] / r["numpy_us"] if r["numpy_us"] else None
        given = (args.tvm_rate or {}).get(r["workload"], (args.tvm_rate or {}).get("*"))
        tvm_rate = r["tvm_trials_per_s"] or given or statistics.mean(TVM_TRIALS_PER_SEC)
        speedup = r["trials_per_s"] / tvm_rate
        budget_ms = 1e3 * (os.cpu_count() or 1) / (10 * tvm_rate)  # CPU per trial all cores allow at 10x TVM
        print(f"{r['workload']:<28} {f(r['best_us']):>9} {f(r['tvm_us'], '.1f'):>8} {f(ratio_tvm):>6} "
              f"{f(r['tvm_quoted_us'], '.1f'):>7} {f(ratio_q):>6} "
              f"{f(r['numpy_us']):>9} {f(ratio_np):>6} {f(r['trials_per_s'], '.1f'):>8} "
              f"{f(r['tvm_trials_per_s']):>8} {f(speedup, '.1f'):>6} "
              f"{f(r['reach_tvm_s'], '.0f'):>8}s {f(r['search_ms_per_trial'], '.1f'):>12} "
              f"{f(r['model_pair_acc'], '.3f'):>9} {f(r['cpu_ms_per_trial'], '.0f'):>9} {f(budget_ms, '.0f'):>6}")
    measured = any(r["tvm_us"] for r in rows)
    print("\nratio = tunefarm best / reference (below 1 is faster). TVM us / TVM tr/s: Apache TVM 0.27 MetaSchedule "
          + (f"measured now on this machine ({args.tvm_cores} core, mcpu {target.cpu}, "
             f"{args.tvm_trials or args.trials} trials, best of its top 5 re-timed like tunefarm's; tunefarm's "
             f"target has {target.num_cores} core(s))" if measured else "not run (n/a)")
          + "; TVM q = TVM's 256-trial best quoted (1 core, -mcpu=znver4 AVX-512, another "
          "machine), for reference; numpy measured now single-thread (quoted: "
          + ", ".join(f"{k} {v[1]} us" for k, v in QUOTED.items()) + ").")
    print("x TVM = trials/s over TVM's " + ("measured trials/s (quoted mean where TVM did not run)" if measured else
          "trials/s given by --tvm-rate" if args.tvm_rate else
          f"quoted {TVM_TRIALS_PER_SEC[0]}-{TVM_TRIALS_PER_SEC[1]} trials/s (mean)")
          + "; reach TVM = wall seconds until a trial beat TVM's best (measured, else quoted; farm-measured "
          "median); search ms/tr = the driver's CPU per trial for search + features + prediction (the cost "
          "model's training is reported separately in the JSON lines, like the median build time per trial, "
          "which bounds the throughput); cpu ms/tr = CPU per trial of the whole job, driver and workers (local "
          "farm), against 'at 10x' = the CPU per trial this machine's cores allow at 10x TVM's trials/s.")
    print(f"databases: {db_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
