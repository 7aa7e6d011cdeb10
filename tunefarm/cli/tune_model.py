"""``tunefarm tune-model``: tune every kernel of a named model, compile it from the database, and (for the
course's MLP, through ``main_job``) check it against numpy and time it side by side."""
from __future__ import annotations

import argparse
import os

from .errors import CommandError
from .job_options import add_job_options, job_options
from .output import show_logs


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune-model", help="tune a whole model, compile it, check it and time it",
                       description="Tune every kernel of a model on the farm (one job, budget shared by the task "
                                   "scheduler), compile the model from the database, check it against numpy and "
                                   "time it against numpy and torch. 'mlp' is the course's FashionMNIST MLP.")
    p.add_argument("model", choices=("mlp", "convnet"), help="model to tune")
    p.add_argument("--params", help="weights file: an .npz, or a .pkl read by the safe unpickler (default: the "
                                    "course's weights shipped with tunefarm, sha256-checked)")
    p.add_argument("--trials", type=int, default=256, help="trial budget per batch size (stored trials count)")
    p.add_argument("--db", default="tune.sqlite", help="trace database (created if missing; default tune.sqlite)")
    p.add_argument("--batch", type=int, action="append", help="batch size (repeatable; default 1 and 64)")
    p.add_argument("--target", default=None, help="e.g. 'llvm -num-cores=1' (default: the farm's CPU)")
    p.add_argument("--farm", choices=("ray", "local"), default="ray",
                   help="ray (default; a private local Ray unless --ray-address) or local worker processes")
    p.add_argument("--ray-address", default=None, help="join a Ray cluster ('auto' or host:port)")
    p.add_argument("--workers", type=int, default=None, help="measuring workers (default: one per core)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-dir", default=None, help="also save each compiled executable in this directory")
    add_job_options(p)
    p.set_defaults(func=run)


def _checked_batches(args) -> tuple[int, ...]:
    """Everything that can be refused before a farm starts, refused now: the batch sizes to tune."""
    # the database and the models load when the command runs (see the package docstring)
    from ..database import open_database
    from ..tuning.farm_on_demand import check_farm_arguments
    from ..tuning.limits import check_seed
    from .named_models import REFUSED, check_batch, check_params_file

    if args.trials < 0:
        raise CommandError("--trials must be >= 0", REFUSED)
    if args.farm == "local" and args.ray_address:
        raise CommandError("--ray-address needs --farm ray", REFUSED)
    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers must be at least 1, got {args.workers}", REFUSED)
    batches = tuple(args.batch or (1, 64))
    bad = [b for b in batches if b < 1]
    if bad:
        raise CommandError(f"--batch must be at least 1, got {bad[0]}", REFUSED)
    for b in batches:
        check_batch(args.model, b)
    if args.params is not None:
        check_params_file(args.params, args.model)
    if not args.db.strip():
        raise CommandError("--db needs a file name (got an empty one)", REFUSED)
    try:
        check_seed(args.seed)
    except ValueError as e:
        raise CommandError(f"--seed: {e}", REFUSED) from None
    try:
        check_farm_arguments(args.farm, args.target, args.workers, args.ray_address)
    except ValueError as e:
        raise CommandError(str(e), REFUSED) from None
    open_database(args.db).close()  # a database that cannot be opened or created fails here, not after tuning starts
    return batches


def run(args: argparse.Namespace) -> int:
    show_logs()
    options = job_options(args)
    batches = _checked_batches(args)
    return (_mlp_job(args, batches, options) if args.model == "mlp"
            else _tune_and_compile(args, batches, options))


def _mlp_job(args, batches: tuple[int, ...], options: dict) -> int:
    """The course's MLP: the main job (tune, compile, check against numpy, time side by side)."""
    from .main_job import CheckFailed, run_mlp_job  # the tuning stack loads now (see the package docstring)

    try:
        run_mlp_job(args.params, trials=args.trials, db_path=args.db, target=args.target, farm=args.farm,
                    workers=args.workers, ray_address=args.ray_address, batch_sizes=batches, seed=args.seed,
                    save_dir=args.save_dir, tune_options=options)
    except CheckFailed as e:
        raise CommandError(f"CHECK FAILED: {e}") from None
    return 0


def _tune_and_compile(args, batches: tuple[int, ...], options: dict) -> int:
    """A model other than the MLP: tune and compile it per batch size (no numpy reference to check against)."""
    # the tuning stack loads when the command runs (see the package docstring)
    from ..database import open_database
    from ..graph import compile_model
    from ..graph import tune_model
    from ..tuning.farm_on_demand import farm_on_demand
    from .named_models import load_model

    farm = farm_on_demand(args.farm, args.target, args.workers, args.ray_address)
    try:
        with open_database(args.db) as db:
            if args.trials > 0:
                farm.start()  # on the main thread (started lazily it would start on the job's measuring thread)
            for batch in batches:
                mod, params = load_model(args.model, args.params, batch)
                tune_model(mod, params, target=args.target or farm.target, max_trials=args.trials, database=db,
                           farm=farm, seed=args.seed, **options)
                exe = compile_model(mod, params, db, args.target or farm.target)
                print(f"batch {batch}: kernels {exe.kernels}")
                if args.save_dir:
                    os.makedirs(args.save_dir, exist_ok=True)
                    exe.save(os.path.join(args.save_dir, f"{args.model}_b{batch}.tfx"))
    finally:
        farm.close()
    return 0
