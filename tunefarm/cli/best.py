"""``tunefarm best``: the fastest successful record of each (workload, target) pair, as a table, CSV or JSON."""
from __future__ import annotations

import argparse
import csv
import json
import sys

from .db_option import add_db_option, open_db
from ..target import matching_target
from .output import nan_to_none, people_table, printable


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("best", help="show the best measured trace per workload and target",
                       description="Show the fastest successful record of each (workload, target) pair.")
    add_db_option(p)
    p.add_argument("--workload", help="workload key or name (default: all workloads)")
    p.add_argument("--target", help="only records measured on this target (its string or its label)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="table (default, for people), csv, or json (includes the traces)")
    p.set_defaults(func=run)


def best_rows(db, workload: str | None, target: str | None) -> list[dict]:
    """One dict per (workload, target) with its best successful record; traces as JSON values."""
    keys = [db.get_workload(workload).key] if workload else list(db.workloads()["key"])
    rows = []
    for key in keys:
        targets = [matching_target(target, db.targets(key))] if target else db.targets(key)
        for t in targets:
            rec = db.best(key, target=t)
            if rec is None:
                continue
            rows.append({"workload": rec.workload_name, "workload_key": rec.workload_key, "target": rec.target,
                         "median_us": rec.median_us, **_confirmed_us(rec), "gflops": rec.gflops, "trial": rec.trial,
                         "job_id": rec.job_id,
                         "job_status": None if rec.job_id is None else _owner(db, rec).job_state(rec.job_id),
                         "record_id": rec.record_id, "program_hash": rec.program_hash,
                         "trials": db.count_records(key, target=t), "trace": rec.trace_json})
    return rows


def _owner(db, rec):
    """The database whose ids a record carries (one of several read as one, or the only one)."""
    return db.owner(rec) if hasattr(db, "owner") else db


def _confirmed_us(rec) -> dict:
    """The record's confirmed median and p10-p90 spread in microseconds (None when never confirmed)."""
    med, p10, p90 = rec.confirmed or (None, None, None)
    return {k: None if v is None else v * 1e6 for k, v in (("confirmed_us", med), ("p10_us", p10), ("p90_us", p90))}


def run(args: argparse.Namespace) -> int:
    # the database loads when the command runs (see the package docstring)
    from ..database.sqlite_database import SHORT_KEY

    with open_db(args.db) as db:
        rows = [nan_to_none(r) for r in best_rows(db, args.workload, args.target)]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif rows and args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({**{k: printable(v) if isinstance(v, str) else v for k, v in r.items()},
                          "trace": json.dumps(r["trace"], separators=(",", ":"))} for r in rows)
    elif rows:
        shown = [{**r, "key": r["workload_key"][:SHORT_KEY], "program": (r["program_hash"] or "")[:SHORT_KEY]}
                 for r in rows]
        confirmed = ["confirmed_us", "p10_us", "p90_us"] if any(r["confirmed_us"] for r in rows) else []
        print(people_table(shown, ["workload", "key", "target", "median_us", *confirmed, "gflops", "trials", "trial",
                                   "job_id", "job_status", "program"], shorten={"workload": 32}))
    if not rows:  # an empty answer, not an error: said on stderr, and the exit status says it too
        where = f" for workload {args.workload!r}" if args.workload else ""
        where += f" on target {args.target!r}" if args.target else ""
        print(f"tunefarm best: no successful records{where}", file=sys.stderr)
        return 1
    return 0
