"""``tunefarm compile``: compile a named model from a trace database into one executable file."""
from __future__ import annotations

import argparse
import os

from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile a model from a trace database into one executable file",
                       description="Every kernel takes its best trace for the target (untuned ones a default "
                                   "schedule); the whole model becomes one native function saved as one file.")
    p.add_argument("model", choices=("mlp", "convnet"), help="model to compile")
    p.add_argument("-o", "--output", required=True, help="executable file to write (e.g. mlp.tfx)")
    p.add_argument("--params", help="weights file (.npz, or .pkl; default for mlp: the course's weights)")
    p.add_argument("--db", default=None, help="trace database with tuned kernels (default: none, default schedules)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--target", default=None, help="target (default: this machine)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the models and the compiler load when the command runs (see the package docstring)
    from ..database import is_url, open_database
    from ..graph import compile_model
    from .named_models import load_model

    mod, params = load_model(args.model, args.params, args.batch)
    if args.db is not None and not is_url(args.db) and not os.path.exists(args.db):
        raise CommandError(f"database {args.db!r} does not exist (tune first, or leave --db out for default schedules)")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    exe = compile_model(mod, params, open_database(args.db, readonly=True), args.target)
    exe.save(args.output)
    tuned = sum(1 for v in exe.kernels.values() if v == "tuned")
    print(f"wrote {args.output}: {exe.kind} executable, {len(exe.kernels)} kernels ({tuned} tuned, "
          f"{len(exe.kernels) - tuned} default schedule)")
    return 0
