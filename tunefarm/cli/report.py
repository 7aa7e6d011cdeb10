"""``tunefarm report``: one self-contained HTML file describing a trace database."""
from __future__ import annotations

import argparse
import os

from .db_option import add_db_option, open_db
from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of a trace database",
                       description="Write one HTML file (inline CSS/SVG, no network) with tuning curves, "
                                   "status breakdowns, throughput and top-k traces per workload.")
    add_db_option(p)
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--top-k", type=int, default=10, help="rows in each top-k table (default 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the database loads when the command runs (see the package docstring)
    from ..database.report import write_report

    if args.top_k < 1:
        raise CommandError("--top-k must be at least 1")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    with open_db(args.db) as db:
        write_report(db, args.output, top_k=args.top_k)
        n = db.count_records()
    print(f"wrote {args.output} ({n} records)")
    return 0
