"""``tunefarm bench``: re-time the best stored kernels on this machine, next to their unscheduled programs."""
from __future__ import annotations

import argparse
import json
import sys

from .db_option import add_db_option, open_db
from .errors import CommandError
from .output import nan_to_none, people_table


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="re-time the best stored kernels here, against their unscheduled programs",
                       description="Rebuild each workload's best trace for a target this CPU runs, check it "
                                   "against the unscheduled program and time both in alternating rounds "
                                   "(medians). The database is only read.")
    add_db_option(p)
    p.add_argument("--workload", help="workload key or name (default: all workloads)")
    p.add_argument("--target", help="only this target string (default: every target this CPU can run)")
    p.add_argument("--rounds", type=int, default=7, help="timings per measurement (median; default 7)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the database and the compiler load when the command runs (see the package docstring)
    from .bench_best import bench_best

    if args.rounds < 1:
        raise CommandError("--rounds must be at least 1")
    with open_db(args.db) as db:
        rows = [nan_to_none(r) for r in bench_best(db, args.workload, args.target, rounds=args.rounds)]
    if not rows:  # an empty answer, not an error (as with ``tunefarm best``)
        print("tunefarm bench: no successful record on a target this CPU can run", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(people_table(rows, ["workload", "target", "tuned_us", "untuned_us", "speedup", "gflops",
                                  "stored_us", "trials", "check"], shorten={"workload": 32, "check": 24}))
        for r in rows:
            if r["check"] != "ok":
                print(f"{r['workload']}: {r['check']}"[:120])
    return 0 if all(r["check"] == "ok" for r in rows) else 1
