"""``tunefarm tune``: tune one workload from the command line.

    tunefarm tune wl.py:mm --space search_spaces/matmul.py:stochastic_schedule_mm --trials 64 --db tune.sqlite
    tunefarm tune matmul-512 --trials 256 --db tune.sqlite --ray-address auto --resume

The workload is ``file.py:name`` (a prim func or a te function) or a built-in name (``matmul-128``,
``dense-relu-784-128``, ``conv2d-1x64x28x28-64x3x3``, ...). Without ``--resume`` a database that already holds
records of the workload on the target is refused (so a budget is never silently shared with an old job).
"""
from __future__ import annotations

import argparse

from .errors import CommandError
from .job_options import add_job_options, job_options
from .output import show_logs

REFUSED = 2  # exit status of input refused before anything started


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="tune one workload (records go to a trace database)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="file.py:name, or a built-in name such as matmul-128")
    p.add_argument("--space", default=None,
                   help="schedule function 'file.py:function' or registered name (default: the auto space)")
    p.add_argument("--trials", type=int, default=64, help="total trial budget (counts stored trials on --resume)")
    p.add_argument("--trials-per-round", type=int, default=64)
    p.add_argument("--db", required=True, action="append",
                   help="trace database: an SQLite file (created if missing) or a postgresql:// URL; repeat it to "
                        "tune into the first while the others' records count too (known programs are not measured "
                        "again, the cost model learns from them), the first one first")
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
    add_job_options(p)
    p.set_defaults(func=run)


def _inputs(args):
    """``(name, func, space, farm)`` once every input checks out; the farm is not started."""
    # the tuning stack loads when the command runs (see the package docstring)
    from search_spaces.registry import create as create_space
    from ..search.space import SpaceError
    from ..search.workloads import WorkloadError, load_workload
    from ..tuning.farm_on_demand import farm_on_demand
    from ..tuning.limits import check_buffers, check_seed, check_timeout

    if args.trials < 0 or args.trials_per_round < 1:
        raise CommandError("--trials must be >= 0 and --trials-per-round >= 1", REFUSED)
    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers must be at least 1, got {args.workers}", REFUSED)
    if not all(d.strip() for d in args.db):
        raise CommandError("--db needs a file name (got an empty one)", REFUSED)
    for option, check, value in (("--timeout", check_timeout, args.timeout), ("--seed", check_seed, args.seed)):
        try:
            check(value)
        except ValueError as e:
            raise CommandError(f"{option}: {e}", REFUSED) from None
    try:
        name, func = load_workload(args.workload)
        check_buffers(name, func)
        space = None if args.space is None else create_space(args.space)
        farm = farm_on_demand(args.farm, args.target, args.workers, args.ray_address)
    except (WorkloadError, SpaceError, ValueError) as e:
        raise CommandError(str(e), REFUSED) from None
    return name, func, space, farm


def run(args: argparse.Namespace) -> int:
    """Check every input (workload, space, numbers, database), then tune; the farm starts only to measure."""
    # the tuning stack loads when the command runs (see the package docstring)
    from ..database import UnknownWorkloadError, open_database
    from ..ir.structural import workload_key
    from ..search.errors import SearchError
    from ..search.space import SpaceError
    from ..tuning.api import resolve_target, tune
    from ..tuning.confirm import spread_text

    show_logs()
    options = job_options(args)
    name, func, space, farm = _inputs(args)
    db = open_database(args.db if len(args.db) > 1 else args.db[0])  # one that cannot open fails here, farm unstarted
    try:
        target = resolve_target(args.target, farm)
        try:
            existing = db.count_records(workload_key(func), str(target))
        except UnknownWorkloadError:  # nothing stored yet
            existing = 0
        if existing and not args.resume:
            raise CommandError(f"{db.path} already holds {existing} trials of {name!r} on {target.label()}; pass "
                               "--resume to continue that job (the budget counts them) or use another --db", REFUSED)
        if args.trials > existing:  # something to measure: start the farm here, on the main thread
            try:
                farm.start()
            except (ValueError, RuntimeError) as e:  # no Ray, no node with the target's CPU, ...
                raise CommandError(f"cannot start the farm: {e}") from None
        try:
            result = tune(func, target=target, max_trials=args.trials, trials_per_round=args.trials_per_round,
                          space=space, database=db, farm=farm, seed=args.seed, task_name=args.task_name or name,
                          strategy=args.strategy, timeout_s=args.timeout, **options)
        except (SearchError, SpaceError) as e:
            raise CommandError(str(e)) from None
    finally:
        farm.close()
    rec = result.best_record()
    print(f"{result.trials} new trials in {result.wall_secs:.1f} s ({result.trials_per_second:.1f} trials/s); "
          f"database {db.path}")
    if rec is None:
        print("no successful trial")
        return 1
    gflops = f", {rec.gflops:.1f} GFLOP/s" if rec.gflops == rec.gflops else ""
    stopped = "" if result.status == "finished" else f" (stopped: {result.status})"
    confirmed = "" if not rec.confirmed else f"; confirmed {spread_text(*rec.confirmed)}"
    print(f"best: {rec.median_us:.3f} us{gflops}{confirmed}{stopped}")
    print(rec.trace)
    return 0
