"""Whole-model benchmark: the course's FashionMNIST MLP, tunefarm vs numpy vs torch vs TVM.

    python benchmarks/bench_model.py --trials 256 [--params weights.npz]
                                     [--tvm | --no-tvm] [--tvm-trials N]

For each batch size (1 and 64): tune the model's kernels (``tune_model``; resumes from ``--db``, so a
second run measures nothing new), compile it from the database, check it against numpy (max abs error
<= 1e-4 on random inputs, identical argmax), then time one call *through Python, as a user calls it*
(``exe(x)``, ``np`` expression, ``torch`` forward under ``no_grad``), all single-threaded, side by side:
the frameworks take turns in every round and the table shows the median over rounds. With ``--breakdown``
(default) it also prints where one call goes: each kernel alone (best trace, weights packed as the model
stores them, timed in native code), the whole model's native entry, and the Python call.

Floor: the batch-64 model is 13 MFLOP, i.e. >= 127 us at this machine's measured AVX2 FMA peak (102.4
GFLOP/s, ``benchmarks/fma_peak.py``); the hidden layer's 4 x 16 register-tile kernel reaches about 97% of it
when the machine is quiet (~130 us).

TVM: when ``apache-tvm`` is installed (``--tvm``, the default then), Apache TVM 0.27 tunes the same MLP with the
same weights here, after tunefarm's farm is closed: ``benchmarks/tvm_side.py`` in a subprocess (Relax
``tune_relax`` + ``compile_relax``, ``--tvm-trials`` per batch size, default = --trials; host CPU name, 1
thread) times one call through Python the same way (numpy in, numpy out; median over --rounds), in its own
process, so it cannot take turns with the others inside a round. Printed: its latency ("TVM") and
tunefarm's ratio to it. Without TVM ("TVM not installed: quoted figures") only the quoted column remains.

Targets (from the issue; TVM MetaSchedule-tuned Relax, 256 trials, 1 thread, quoted: 5.1 us at batch 1 and
116 us at batch 64, measured on another machine with ``-mcpu=znver4``; column "TVM(ref)"):
- batch 1: at most 0.5x numpy's latency and below TVM's;
- batch 64: at most 0.65x torch's latency and below TVM's.
"Below TVM's" is checked against TVM measured now when it ran, and against the quoted figure.
The script prints whether each target is met; it asserts nothing (timings are not tests).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tunefarm  # noqa: E402
from tunefarm import nn  # noqa: E402
from tunefarm.cli.main_job import check_against_numpy, torch_mlp  # noqa: E402
from tunefarm.graph.params import find_mlp_params  # noqa: E402
from tunefarm.nn.models import mlp, mlp_reference  # noqa: E402

TVM_US = {1: 5.1, 64: 116.0}
REFERENCE_US = {"numpy": {1: 8.5, 64: 184.0}, "torch": {1: 12.8, 64: 150.0}}


def per_call_us(fn, arg, seconds: float) -> float:
    """Mean per-call time of ``fn(arg)`` over a loop of about ``seconds``."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return dt / n * 1e6
        n = n * 2 if dt < seconds / 8 else int(n * seconds / max(dt, 1e-9)) + 1


def side_by_side(contenders: dict, rounds: int, seconds: float) -> dict:
    """Median over ``rounds`` of each contender's per-call time; contenders take turns every round."""
    times = {name: [] for name in contenders}
    for fn, arg in contenders.values():
        fn(arg)  # warm up: caches, lazy initialisation
    for _ in range(rounds):
        for name, (fn, arg) in contenders.items():
            times[name].append(per_call_us(fn, arg, seconds))
    return {name: statistics.median(ts) for name, ts in times.items()}


def time_breakdown(mod, named, exe, x, database, target, rounds: int) -> dict:
    """Where one call's time goes: each kernel alone (its best trace, weights packed as the model stores them,
    timed in native code) and the composed model's native entry without the Python call; medians over
    ``rounds`` alternating rounds, in us."""
    from tunefarm.farm.measure import rewrite_layout_free
    from tunefarm.database import open_database
    from tunefarm.graph.compile import schedule_kernel
    from tunefarm.graph.pipeline import prepare
    from tunefarm.graph.tasks import extract_tasks
    from tunefarm.runtime import build

    db = open_database(database, readonly=True)
    rng = np.random.default_rng(0)
    timers = {}
    for task in extract_tasks(prepare(mod, named, None), prepared=True):
        func, _ = schedule_kernel(task.func.with_name("main"), db, target)
        func, packers = rewrite_layout_free(func)
        arrays = [rng.random(p.const_shape(), dtype=np.float32) for p in task.func.params]
        for i, pack in packers:
            arrays[i] = pack(arrays[i])
        timers[task.name] = (build(func, target), "main", arrays)
    if exe.kind == "native":
        args = [x if kind == "input" else exe.constants[i] if kind == "const" else exe(x) for kind, i in
                exe.meta["param_order"]]
        timers["model (native entry)"] = (exe.module, exe.meta["entry_symbol"], args)
    times = {name: [] for name in timers}
    for _ in range(rounds):
        for name, (module, symbol, arrays) in timers.items():
            res = module.time_evaluator(symbol, number=max(5, 2000 // x.shape[0]), repeat=1)(*arrays).results
            times[name].append(res[0] * 1e6)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default=None, help="weights file (default: the course's, shipped with tunefarm)")
    p.add_argument("--db", default="bench_model.sqlite", help="trace database (resumed when it exists)")
    p.add_argument("--trials", type=int, default=256, help="tuning budget per batch size (0: no tuning)")
    p.add_argument("--batch", type=int, action="append", help="batch sizes (default 1 and 64)")
    p.add_argument("--farm", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--rounds", type=int, default=7, help="measurement rounds (median reported)")
    p.add_argument("--seconds", type=float, default=0.1, help="length of one timing loop")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--breakdown", action=argparse.BooleanOptionalAction, default=True,
                   help="also time each kernel alone and the model's native entry (where a call's time goes)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tvm_side import run_tvm_mlp, tvm_available  # benchmarks/tvm_side.py: never imports tvm here

    p.add_argument("--tvm", action=argparse.BooleanOptionalAction, default=tvm_available(),
                   help="also tune and time the MLP with Apache TVM here (default: on when tvm is importable)")
    p.add_argument("--tvm-trials", type=int, default=None, help="TVM's budget per batch size (default: --trials)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    params, source = find_mlp_params(args.params)
    print(f"weights: {source}\ndatabase: {args.db}, tuning budget {args.trials} trials per batch size")
    torch_run = torch_mlp(params)
    if torch_run is None:
        print("torch is not installed: no torch column (pip install torch==2.13.0)")
    batches = args.batch or [1, 64]
    farm = None
    if args.trials > 0:
        from tunefarm.farm import create

        farm = create(args.farm, num_workers=args.workers)
    rows = []
    try:
        target = farm.target if farm is not None else None
        for batch in batches:
            mod, named = mlp(params).export({"forward": {"x": nn.spec.Tensor((batch, 784), "float32")}})
            if args.trials > 0:
                t0 = time.perf_counter()
                res = tunefarm.tune_model(mod, named, target=target, max_trials=args.trials, database=args.db,
                                          farm=farm, seed=args.seed, progress=False)
                print(f"batch {batch}: tuned {res.trials} new trials in {time.perf_counter() - t0:.0f} s")
            exe = tunefarm.compile(mod, named, database=args.db if os.path.exists(args.db) else None,
                                   target=target)
            untuned = tunefarm.compile(mod, named, target=target)
            err = check_against_numpy(exe, params, batch, args.seed)
            x = np.random.default_rng(args.seed).random((batch, 784), dtype=np.float32)
            contenders = {"tunefarm": (exe, x), "tunefarm_untuned": (untuned, x),
                          "numpy": (lambda a: mlp_reference(a, params), x)}
            if torch_run is not None:
                run, to_t = torch_run
                contenders["torch"] = (run, to_t(x))
            t = side_by_side(contenders, args.rounds, args.seconds)
            rows.append((batch, t, err, exe.kernels))
            if args.breakdown:
                parts = time_breakdown(mod, named, exe, x, args.db if os.path.exists(args.db) else None,
                                       exe.meta["target"], args.rounds)
                print(f"batch {batch}: where a call goes (native, us, medians): " +
                      ", ".join(f"{k} {v:.2f}" for k, v in parts.items()) +
                      f"; the Python call exe(x): {t['tunefarm']:.2f}")
    finally:
        if farm is not None:
            farm.close()
    tvm_us = {}  # batch -> TVM's per-call latency (numpy in, numpy out), measured now
    tvm_trials = args.tvm_trials if args.tvm_trials is not None else args.trials
    if not args.tvm:
        print("TVM not installed: quoted figures" if not tvm_available() else "TVM disabled (--no-tvm): quoted figures")
    elif tvm_trials <= 0:
        print("TVM skipped: 0 trials (give --tvm-trials)")
    else:
        print(f"TVM MetaSchedule: tuning the Relax MLP, {tvm_trials} trials per batch size ...", flush=True)
        tvm_res = run_tvm_mlp(params, tvm_trials, batches, seed=args.seed, rounds=args.rounds,
                              seconds=args.seconds, timeout=900 + 15 * tvm_trials * len(batches))
        if "error" in tvm_res:
            print(f"TVM failed: {tvm_res['error']}\n{tvm_res.get('log', '')}")
        else:
            for b, r in tvm_res["batches"].items():
                tvm_us[int(b)] = r["call_numpy_us"]
                print(f"TVM batch {b}: {r['call_numpy_us']:.2f} us per call ({r['call_numpy_naive_us']:.2f} via "
                      f"tvm.runtime.tensor/.numpy(), {r['call_tensor_us']:.2f} with TVM tensors, "
                      f"{r['native_us']:.2f} native); {r['trials']} trials in {r['wall_s']:.0f} s = "
                      f"{r['trials_per_s']:.2f} trials/s; {r['tuned_kernels']}/{r['kernels']} kernels tuned; "
                      f"target {tvm_res['target']}")

    print("\nper-call latency through Python, median of rounds (us); 1 thread everywhere")
    head = f"{'batch':>5} {'tunefarm':>9} {'untuned':>9} {'numpy':>9} {'torch':>9} {'TVM':>9} {'TVM(ref)':>9} " \
           f"{'/numpy':>7} {'/torch':>7} {'/TVM':>7} {'max err':>8}"
    print(head)
    for batch, t, err, _ in rows:
        torch_us = t.get("torch")
        tvm = tvm_us.get(batch)
        print(f"{batch:>5} {t['tunefarm']:>9.2f} {t['tunefarm_untuned']:>9.2f} {t['numpy']:>9.2f} "
              f"{torch_us if torch_us is not None else float('nan'):>9.2f} "
              f"{tvm if tvm is not None else float('nan'):>9.2f} {TVM_US.get(batch, float('nan')):>9.1f} "
              f"{t['tunefarm'] / t['numpy']:>7.2f} "
              f"{(t['tunefarm'] / torch_us) if torch_us else float('nan'):>7.2f} "
              f"{(t['tunefarm'] / tvm) if tvm else float('nan'):>7.2f} {err:>8.1e}")
    print("(issue's reference: numpy 8.5 / 184 us, torch 12.8 / 150 us, TVM(ref) 5.1 / 116 us quoted, measured "
          "with -mcpu=znver4 AVX-512; TVM = Apache TVM 0.27 measured now, in its own process, numpy in/out by "
          "its cheapest route)")
    print("\ntargets")
    for batch, t, _, kernels in rows:
        tvm = TVM_US.get(batch)
        if batch == 1:
            ok_ratio = t["tunefarm"] <= 0.5 * t["numpy"]
            print(f"  batch 1: <= 0.5x numpy ({t['tunefarm']:.2f} vs {0.5 * t['numpy']:.2f} us): "
                  f"{'met' if ok_ratio else 'NOT met'}")
        elif batch == 64 and "torch" in t:
            ok_ratio = t["tunefarm"] <= 0.65 * t["torch"]
            print(f"  batch 64: <= 0.65x torch ({t['tunefarm']:.2f} vs {0.65 * t['torch']:.2f} us): "
                  f"{'met' if ok_ratio else 'NOT met'}")
        if tvm is not None:
            print(f"  batch {batch}: below TVM's quoted {tvm} us ({t['tunefarm']:.2f} us): "
                  f"{'met' if t['tunefarm'] < tvm else 'NOT met'}")
        if tvm_us.get(batch) is not None:
            print(f"  batch {batch}: below TVM's measured {tvm_us[batch]:.2f} us ({t['tunefarm']:.2f} us): "
                  f"{'met' if t['tunefarm'] < tvm_us[batch] else 'NOT met'}")
        print(f"  batch {batch} kernels: {kernels}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
