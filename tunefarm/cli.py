"""The ``tunefarm`` command line: one small function per subcommand.

Each subcommand is an ``add_<name>(subparsers)`` function that builds its parser and sets ``func`` to a
``cmd_<name>(args) -> int`` handler; ``COMMANDS`` lists them in help order. To add a command (``tune``,
``tune-model``, ``compile``, ``run``, ``bench``), write its two functions and append ``add_<name>`` to
``COMMANDS``. Handlers import their layers lazily so ``tunefarm --help`` stays fast and light.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Callable, Sequence


class CommandError(Exception):
    """A user-facing failure: printed as ``tunefarm <cmd>: error: ...`` with exit status 1."""


# -- best --------------------------------------------------------------------------------------------------
def add_best(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("best", help="show the best measured trace per workload and target",
                       description="Show the fastest successful record of each (workload, target) pair.")
    p.add_argument("--db", required=True, help="trace database file (SQLite)")
    p.add_argument("--workload", help="workload key or name (default: all workloads)")
    p.add_argument("--target", help="only records measured on this target (its string or its label)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="table (default, for people), csv, or json (includes the traces)")
    p.set_defaults(func=cmd_best)


def best_rows(db, workload: str | None, target: str | None) -> list[dict]:
    """One dict per (workload, target) with its best successful record; traces as JSON values."""
    from tunefarm.target import matching_target

    keys = [db.get_workload(workload).key] if workload else list(db.workloads()["key"])
    rows = []
    for key in keys:
        targets = [matching_target(target, db.targets(key))] if target else db.targets(key)
        for t in targets:
            rec = db.best(key, target=t)
            if rec is None:
                continue
            rows.append({"workload": rec.workload_name, "workload_key": rec.workload_key, "target": rec.target,
                         "median_us": rec.median_us, "gflops": rec.gflops, "trial": rec.trial,
                         "job_id": rec.job_id, "job_status": None if rec.job_id is None else db.job_state(rec.job_id),
                         "record_id": rec.record_id, "program_hash": rec.program_hash,
                         "trials": db.count_records(key, target=t), "trace": rec.trace_json})
    return rows


def _nan_to_none(row: dict) -> dict:
    return {k: None if isinstance(v, float) and v != v else v for k, v in row.items()}


def printable(text: str) -> str:
    """``text`` with control characters written as escapes: a stored name must not drive the terminal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def format_table(rows: list[dict], cols: Sequence[str], shorten: dict[str, int] | None = None) -> str:
    """Plain aligned text: strings left, numbers right; columns in ``shorten`` are cut with an ellipsis."""
    def cell(v, max_width: int) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return "-"
        if isinstance(v, float):
            return f"{v:,.3f}"
        s = printable(str(v).replace("\n", " "))
        return s if len(s) <= max_width else s[: max_width - 1] + "…"

    shorten = shorten or {}
    cells = [[cell(r[c], shorten.get(c, 10**9)) for c in cols] for r in rows]
    numeric = [all(isinstance(r[c], (int, float)) or r[c] is None for r in rows) for c in cols]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()
    return "\n".join([line(cols)] + [line(row) for row in cells])


def people_table(rows: list[dict], cols: Sequence[str], shorten: dict[str, int] | None = None) -> str:
    """``format_table`` for a terminal: a target (500+ characters written out) is shown by its label, and
    when every row has the same one, once above the table instead of in a column."""
    from tunefarm.target import target_label

    targets = {r["target"] for r in rows}
    if len(targets) == 1 and "target" in cols:
        table = format_table(rows, [c for c in cols if c != "target"], shorten)
        return f"target: {target_label(next(iter(targets)))}\n{table}"
    return format_table([{**r, "target": target_label(r["target"])} for r in rows], cols, shorten)


def cmd_best(args: argparse.Namespace) -> int:
    from tunefarm.database import Database

    with Database(args.db, readonly=True) as db:
        rows = [_nan_to_none(r) for r in best_rows(db, args.workload, args.target)]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif rows and args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({**{k: printable(v) if isinstance(v, str) else v for k, v in r.items()},
                          "trace": json.dumps(r["trace"], separators=(",", ":"))} for r in rows)
    elif rows:
        from tunefarm.database.sqlite_database import SHORT_KEY

        shown = [{**r, "key": r["workload_key"][:SHORT_KEY], "program": (r["program_hash"] or "")[:SHORT_KEY]}
                 for r in rows]
        print(people_table(shown, ["workload", "key", "target", "median_us", "gflops", "trials", "trial", "job_id",
                                   "job_status", "program"], shorten={"workload": 32}))
    if not rows:
        where = f" for workload {args.workload!r}" if args.workload else ""
        where += f" on target {args.target!r}" if args.target else ""
        print(f"tunefarm best: no successful records{where}", file=sys.stderr)
        return 1
    return 0


# -- report ------------------------------------------------------------------------------------------------
def add_report(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of a trace database",
                       description="Write one HTML file (inline CSS/SVG, no network) with tuning curves, "
                                   "status breakdowns, throughput and top-k traces per workload.")
    p.add_argument("--db", required=True, help="trace database file (SQLite)")
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--top-k", type=int, default=10, help="rows in each top-k table (default 10)")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from tunefarm.database import Database
    from tunefarm.database.report import write_report

    if args.top_k < 1:
        raise CommandError("--top-k must be at least 1")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    with Database(args.db, readonly=True) as db:
        write_report(db, args.output, top_k=args.top_k)
        n = db.count_records()
    print(f"wrote {args.output} ({n} records)")
    return 0


# -- import / export ---------------------------------------------------------------------------------------
def add_import(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="merge a JSON-lines export into a trace database",
                       description="Merge a file written by 'tunefarm export' (or Database.export) into a database, "
                                   "in one transaction. Every workload and trace is checked (the trace must replay "
                                   "on its workload and give its program hash); a bad line refuses the whole file "
                                   "and leaves the database as it was. Importing a file twice adds nothing.")
    p.add_argument("file", help="JSON-lines export to read")
    p.add_argument("--db", required=True, help="trace database to merge into (created if missing)")
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from tunefarm.database import Database

    if not os.path.isfile(args.file):
        raise CommandError(f"export file {args.file!r} does not exist")
    with Database(args.db) as db:
        new = db.import_(args.file)
    print(f"imported into {args.db}: " + ", ".join(f"{n} new {kind}" for kind, n in new.items()))
    return 0


def add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a trace database as JSON lines (for 'tunefarm import' elsewhere)",
                       description="Write workloads, jobs, batches and records of a database as one JSON object per "
                                   "line, from one consistent snapshot. The database is only read.")
    p.add_argument("--db", required=True, help="trace database file (SQLite)")
    p.add_argument("-o", "--output", required=True, help="JSON-lines file to write")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from tunefarm.database import Database

    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    with Database(args.db, readonly=True) as db:
        counts = db.export(args.output)
    print(f"wrote {args.output}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 0


# -- tune-model / compile / run (whole models; logic in tunefarm/graph/cli_commands.py) -----------------------
def _graph_command(fn_name: str, args: argparse.Namespace) -> int:
    from tunefarm.graph import cli_commands

    try:
        return getattr(cli_commands, fn_name)(args)
    except cli_commands.CLIError as e:
        raise CommandError(str(e)) from None


def add_tune_model(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=cmd_tune_model)


def cmd_tune_model(args: argparse.Namespace) -> int:
    return _graph_command("tune_model_command", args)


def add_compile(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile a model from a trace database into one executable file",
                       description="Every kernel takes its best trace for the target (untuned ones a default "
                                   "schedule); the whole model becomes one native function saved as one file.")
    p.add_argument("model", choices=("mlp", "convnet"), help="model to compile")
    p.add_argument("-o", "--output", required=True, help="executable file to write (e.g. mlp.tfx)")
    p.add_argument("--params", help="weights file (.npz, or .pkl; default for mlp: the course's weights)")
    p.add_argument("--db", default=None, help="trace database with tuned kernels (default: none, default schedules)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--target", default=None, help="target (default: this machine)")
    p.set_defaults(func=cmd_compile)


def cmd_compile(args: argparse.Namespace) -> int:
    return _graph_command("compile_command", args)


def add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a compiled executable on .npy inputs",
                       description="Load an executable written by 'tunefarm compile' (no tuning stack is "
                                   "imported) and run it on .npy inputs, or on seeded random inputs.")
    p.add_argument("executable", help="file written by 'tunefarm compile' or Executable.save")
    p.add_argument("--input", action="append", help="input .npy file (repeat for several inputs)")
    p.add_argument("--output", help="write the result to this .npy file (default: print it)")
    p.add_argument("--bench", action="store_true", help="also time a call (median, through Python)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs used without --input")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    return _graph_command("run_command", args)


# -- bench -------------------------------------------------------------------------------------------------
def add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="re-time the best stored kernels here, against their unscheduled programs",
                       description="Rebuild each workload's best trace for a target this CPU runs, check it "
                                   "against the unscheduled program and time both in alternating rounds "
                                   "(medians). The database is only read.")
    p.add_argument("--db", required=True, help="trace database file (SQLite)")
    p.add_argument("--workload", help="workload key or name (default: all workloads)")
    p.add_argument("--target", help="only this target string (default: every target this CPU can run)")
    p.add_argument("--rounds", type=int, default=7, help="timings per measurement (median; default 7)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from tunefarm.database import Database
    from tunefarm.search.bench_best import bench_best

    if args.rounds < 1:
        raise CommandError("--rounds must be at least 1")
    with Database(args.db, readonly=True) as db:
        rows = [_nan_to_none(r) for r in bench_best(db, args.workload, args.target, rounds=args.rounds)]
    if not rows:
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


def add_tune(sub: argparse._SubParsersAction) -> None:
    from tunefarm.search.cli_tune import add_tune_parser

    add_tune_parser(sub)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_tune, add_tune_model, add_best, add_report,
                                                                 add_compile, add_run, add_bench, add_import,
                                                                 add_export]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tunefarm", description="Distributed auto-tuning of CPU tensor programs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tunefarm`` console script; returns the exit status."""
    from tunefarm.database.errors import DatabaseError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CommandError, DatabaseError, OSError) as e:
        print(f"tunefarm {args.command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
