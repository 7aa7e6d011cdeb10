"""The options that bound and check a tuning job, shared by ``tune`` and ``tune-model``: ``--time-budget``,
``--patience`` and ``--confirm`` (what ``tune_tasks`` takes as ``time_budget_s``, ``patience``, ``confirm``)."""
from __future__ import annotations

import argparse

from .errors import CommandError

REFUSED = 2


def add_job_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time-budget", type=float, default=None, metavar="S",
                   help="stop the job cleanly after S seconds (its status then reads 'time budget')")
    p.add_argument("--patience", type=int, default=None, metavar="N",
                   help="end a task that has not improved its best in N measured trials; its share of the "
                        "trials goes to the other tasks")
    p.add_argument("--confirm", type=int, default=5, metavar="K",
                   help="when the job ends, re-time each task's K best programs together on this host with "
                        "nothing else timing there (default 5; 0: not)")


def job_options(args: argparse.Namespace) -> dict:
    """The options as ``tune_tasks`` keywords, checked (a bad value is refused before anything starts)."""
    # the tuning stack loads when the command runs (see the package docstring)
    from ..tuning.patience import check_patience
    from ..tuning.time_budget import check_time_budget

    try:
        check_time_budget(args.time_budget)
        check_patience(args.patience)
    except ValueError as e:
        raise CommandError(str(e).replace("time_budget_s", "--time-budget").replace("patience", "--patience", 1),
                           REFUSED) from None
    if args.confirm < 0:
        raise CommandError(f"--confirm must be >= 0, got {args.confirm}", REFUSED)
    return {"time_budget_s": args.time_budget, "patience": args.patience, "confirm": args.confirm}
