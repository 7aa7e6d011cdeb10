"""Does the cost model's transfer across workloads pay? Trials a held-out workload needs to reach the best that a
job without transfer finds in ``--trials`` trials, with and without transfer, side by side.

    python benchmarks/bench_transfer.py [--sources matmul-128,matmul-64x256x128,dense-relu-784-128]
                                        [--held-out matmul-96x192x160] [--trials 256] [--seeds 3] [--workers 2]
                                        [--study study.sqlite] [--first-seed 1]

First a study: one job per source workload (``--trials`` each, one database; ``--study PATH`` keeps it there, and
a later run given the same path reuses it: more seeds with ``--first-seed``). Then per seed two jobs on the
held-out workload, each in its own copy of the study: ``transfer=False`` and ``transfer=True`` (the model starts
from the sources' records). For a seed, the goal is within ``--within`` (2%) of the no-transfer job's best after
``--trials`` trials (a single timing's noise must not make the goal unreachable); printed per seed: the trial
at which each job first reached it (a job that never did counts ``--trials`` + 1), and over the seeds the median
of each side, their ratio, and the ratio's range. Single-thread kernels (``-num-cores=1``) on a LocalFarm; a
warm-up job first so worker start-up is in no figure.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import os

from tunefarm.database import open_database
from tunefarm.farm import LocalFarm
from tunefarm.ir.structural import workload_key
from tunefarm.search.workloads import builtin_workload
from tunefarm.target import Target
from tunefarm.tuning.api import tune


def _trials_to_reach(db, key: str, goal: float, trials: int) -> int:
    """The first trial (1-based) whose median is at most ``goal`` seconds; ``trials + 1`` if none."""
    df = db.records(key, status="ok", decisions=False).sort_values("trial")
    hit = df[df.median_us <= goal * 1e6]
    return int(hit.trial.iloc[0]) + 1 if len(hit) else trials + 1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sources", default="matmul-128,matmul-64x256x128,dense-relu-784-128")
    p.add_argument("--held-out", default="matmul-96x192x160")
    p.add_argument("--trials", type=int, default=256)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--within", type=float, default=0.02)
    p.add_argument("--study", default=None, help="the study's database: reused if it exists, else built and kept")
    p.add_argument("--first-seed", type=int, default=1)
    args = p.parse_args()
    target = Target("llvm -num-cores=1")
    tmp = tempfile.mkdtemp(prefix="bench-transfer-")
    study = args.study or os.path.join(tmp, "study.sqlite")
    reuse = args.study is not None and os.path.exists(study)
    held = builtin_workload(args.held_out)
    key = workload_key(held)
    kw = dict(trials_per_round=32, farm=None, progress=False, confirm=0)
    with LocalFarm(num_workers=args.workers, target=target) as farm:
        kw["farm"] = farm
        tune(builtin_workload("add-1024"), target, max_trials=4, database=os.path.join(tmp, "warm.sqlite"),
             seed=0, **{**kw, "trials_per_round": 4})
        for i, name in enumerate([] if reuse else args.sources.split(",")):
            tune(builtin_workload(name), target, max_trials=args.trials, database=study, seed=100 + i, **kw)
            print(f"study: {name}: {args.trials} trials", flush=True)
        rows = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            dbs = {}
            for mode in (False, True):
                path = os.path.join(tmp, f"s{seed}-{int(mode)}.sqlite")
                shutil.copy(study, path)
                tune(held, target, max_trials=args.trials, database=path, seed=seed, transfer=mode, **kw)
                dbs[mode] = open_database(path, readonly=True)
            goal = dbs[False].best(key).median_secs * (1 + args.within)
            without, with_ = (_trials_to_reach(dbs[m], key, goal, args.trials) for m in (False, True))
            rows.append((seed, goal, without, with_))
            print(f"seed {seed}: goal {goal * 1e6:.2f} us; trials to reach it: without {without}, with {with_}",
                  flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    without = [r[2] for r in rows]
    with_ = [r[3] for r in rows]
    ratios = [w / t for w, t in zip(without, with_)]
    print(f"\nheld-out {args.held_out}, sources {args.sources}, {args.trials} trials, {args.seeds} seeds")
    print(f"trials to reach the no-transfer best (+{args.within:.0%}): without transfer median "
          f"{statistics.median(without)} (range {min(without)}-{max(without)}); with transfer median "
          f"{statistics.median(with_)} (range {min(with_)}-{max(with_)})")
    print(f"without / with, per seed: median {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-"
          f"{max(ratios):.2f}); ratio of medians {statistics.median(without) / statistics.median(with_):.2f}x "
          "(> 1.25x means transfer saves 20% or more of the trials)")


if __name__ == "__main__":
    main()
