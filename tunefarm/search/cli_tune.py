"""``tunefarm tune``: tune one workload from the command line.

    tunefarm tune wl.py:mm --space search_spaces/matmul.py:stochastic_schedule_mm --trials 64 --db tune.sqlite
    tunefarm tune matmul-512 --trials 256 --db tune.sqlite --ray-address auto --resume

The workload is ``file.py:name`` (a prim func or a te function) or a built-in name (``matmul-128``,
``dense-relu-784-128``, ``conv2d-1x64x28x28-64x3x3``, ...). Without ``--resume`` a database that already holds
records of the workload on the target is refused (so a budget is never silently shared with an old job).
"""
from __future__ import annotations

import argparse
import logging
import sys


def add_tune_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("tune", help="tune one workload (records go to a trace database)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="file.py:name, or a built-in name such as matmul-128")
    p.add_argument("--space", default=None,
                   help="schedule function 'file.py:function' or registered name (default: the auto space)")
    p.add_argument("--trials", type=int, default=64, help="total trial budget (counts stored trials on --resume)")
    p.add_argument("--trials-per-round", type=int, default=64)
    p.add_argument("--db", required=True, help="SQLite trace database (created if missing)")
    p.add_argument("--target", default=None, help="e.g. 'llvm -num-cores=1' (default: the farm's CPU)")
    p.add_argument("--farm", choices=("ray", "local"), default="ray",
                   help="ray (default; a private local Ray unless --ray-address) or local worker processes")
    p.add_argument("--ray-address", default=None, help="join a Ray cluster ('auto' or host:port)")
    p.add_argument("--workers", type=int, default=None, help="measuring workers (default: one per core)")
    p.add_argument("--strategy", choices=("evolutionary", "random"), default="evolutionary")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per trial (build + check + timing)")
    p.add_argument("--task-name", default=None)
    p.add_argument("--resume", action="store_true", help="continue a job on a database that has its records")
    p.set_defaults(func=run_tune)
    return p


def run_tune(args) -> int:
    """Check every input (workload, space, numbers, database), then tune; the farm starts only to measure."""
    from tunefarm.database import Database, DatabaseError
    from tunefarm.ir.structural import workload_key
    from tunefarm.search.errors import SearchError
    from search_spaces.registry import resolve_space
    from tunefarm.tuning.farm_on_demand import farm_on_demand
    from tunefarm.search.space import SpaceError
    from tunefarm.tuning.api import resolve_target, tune
    from tunefarm.search.workloads import WorkloadError, load_workload

    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
    if args.trials < 0 or args.trials_per_round < 1:
        print("tunefarm tune: error: --trials must be >= 0 and --trials-per-round >= 1", file=sys.stderr)
        return 2
    if args.workers is not None and args.workers < 1:
        print(f"tunefarm tune: error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2
    try:
        name, func = load_workload(args.workload)
        space = None if args.space is None else resolve_space(args.space)
        farm = farm_on_demand(args.farm, args.target, args.workers, args.ray_address)
    except (WorkloadError, SpaceError, ValueError) as e:
        print(f"tunefarm tune: error: {e}", file=sys.stderr)
        return 2
    try:
        db = Database(args.db)
    except DatabaseError as e:
        print(f"tunefarm tune: error: {e}", file=sys.stderr)
        return 1
    try:
        target = resolve_target(args.target, farm)
        key = workload_key(func)
        try:
            existing = db.count_records(key, str(target))
        except Exception:  # noqa: BLE001 - unknown workload: nothing stored yet
            existing = 0
        if existing and not args.resume:
            print(f"tunefarm tune: error: {args.db} already holds {existing} trials of {name!r} on {target.label()}; "
                  "pass --resume to continue that job (the budget counts them) or use another --db",
                  file=sys.stderr)
            return 2
        if args.trials > existing:  # something to measure: start the farm here, on the main thread
            try:
                farm.start()
            except (ValueError, RuntimeError) as e:  # no Ray, no node with the target's CPU, ...
                print(f"tunefarm tune: error: cannot start the farm: {e}", file=sys.stderr)
                return 1
        try:
            result = tune(func, target=target, max_trials=args.trials, trials_per_round=args.trials_per_round,
                          space=space, database=db, farm=farm, seed=args.seed, task_name=args.task_name or name,
                          strategy=args.strategy, timeout_s=args.timeout)
        except (SearchError, SpaceError) as e:
            print(f"tunefarm tune: error: {e}", file=sys.stderr)
            return 1
    finally:
        farm.close()
    rec = result.best_record()
    print(f"{result.trials} new trials in {result.wall_secs:.1f} s ({result.trials_per_second:.1f} trials/s); "
          f"database {db.path}")
    if rec is None:
        print("no successful trial")
        return 1
    gflops = f", {rec.gflops:.1f} GFLOP/s" if rec.gflops == rec.gflops else ""
    print(f"best: {rec.median_us:.3f} us{gflops}")
    print(rec.trace)
    return 0
