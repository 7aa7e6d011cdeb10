"""``tunefarm import`` / ``tunefarm export``: move a trace database's contents as JSON lines."""
from __future__ import annotations

import argparse
import os

from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="merge a JSON-lines export into a trace database",
                       description="Merge a file written by 'tunefarm export' (or Database.export) into a database, "
                                   "in one transaction. Every workload and trace is checked (the trace must replay "
                                   "on its workload and give its program hash); a bad line refuses the whole file "
                                   "and leaves the database as it was. Importing a file twice adds nothing.")
    p.add_argument("file", help="JSON-lines export to read")
    p.add_argument("--db", required=True, help="trace database to merge into (created if missing)")
    p.set_defaults(func=run_import)
    p = sub.add_parser("export", help="write a trace database as JSON lines (for 'tunefarm import' elsewhere)",
                       description="Write workloads, jobs, batches and records of a database as one JSON object per "
                                   "line, from one consistent snapshot. The database is only read.")
    p.add_argument("--db", required=True, help="trace database: an SQLite file or a postgresql:// URL")
    p.add_argument("-o", "--output", required=True, help="JSON-lines file to write")
    p.add_argument("--top-k", type=int, default=None, metavar="K",
                   help="only the K best records of each workload and target, with their workloads and jobs "
                        "(what compiling needs; default: everything)")
    p.set_defaults(func=run_export)


def run_import(args: argparse.Namespace) -> int:
    from ..database import open_database  # loads when the command runs (see the package docstring)

    if not os.path.isfile(args.file):
        raise CommandError(f"export file {args.file!r} does not exist")
    with open_database(args.db) as db:
        new = db.import_(args.file)
    skipped = new.pop("skipped")
    print(f"imported into {db.path}: " + ", ".join(f"{n} new {kind}" for kind, n in new.items())
          + f"; {skipped} records skipped (their programs were already measured on their target)")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ..database import open_database  # loads when the command runs (see the package docstring)

    if args.top_k is not None and args.top_k < 1:
        raise CommandError(f"--top-k must be at least 1, got {args.top_k}")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    with open_database(args.db, readonly=True) as db:
        counts = db.export(args.output, top_k=args.top_k)
    print(f"wrote {args.output}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 0
