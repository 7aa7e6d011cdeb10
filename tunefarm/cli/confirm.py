"""``tunefarm confirm``: re-time the best programs of a database together on this host (``tuning/confirm.py``)."""
from __future__ import annotations

import argparse

from .errors import CommandError
from .output import people_table


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("confirm", help="re-time each workload's best programs together on this quiet host",
                       description="Re-time the K best records of each workload (or of one) on this host in "
                                   "interleaved sessions (each program loaded afresh in each), holding every "
                                   "timing slot of it (no farm worker times meanwhile); store each one's median "
                                   "and p10-p90 spread over all sessions beside the farm's figure. best, top_k "
                                   "and compile then rank by it.")
    p.add_argument("--db", required=True, help="trace database: an SQLite file or a postgresql:// URL")
    p.add_argument("--workload", help="workload key or name (default: all workloads)")
    p.add_argument("--target", help="only this target (default: each target this host's CPU can time)")
    p.add_argument("--top", type=int, default=5, metavar="K", help="programs per workload and target (default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the database and the compiler load when the command runs (see the package docstring)
    from ..database import open_database
    from ..tuning.confirm import confirm, spread_text

    if args.top < 1:
        raise CommandError(f"--top must be at least 1, got {args.top}", 2)
    with open_database(args.db) as db:
        try:
            done = confirm(db, args.workload, args.target, args.top)
        except LookupError as e:
            raise CommandError(str(e), 2) from None
    rows = []
    for c in done:
        if c.skipped:
            print(f"{c.workload}: not confirmed: {c.skipped}")
        for rid, why in c.failed.items():
            print(f"{c.workload}: record {rid} not confirmed: {why}")
        rows += [{"workload": c.workload, "target": c.target, "record_id": p.record_id, "farm_us": p.farm_secs * 1e6,
                  "confirmed": spread_text(p.median_secs, p.p10_secs, p.p90_secs), "sessions": p.sessions}
                 for p in c.programs]
    if rows:
        print(people_table(rows, ["workload", "record_id", "farm_us", "confirmed", "sessions"],
                           shorten={"workload": 32}))
    return 0 if rows else 1
