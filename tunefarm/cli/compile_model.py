"""``tunefarm compile``: compile a named model from a trace database into one executable file."""
from __future__ import annotations

import argparse
import os

from .db_option import add_db_option, open_db
from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile a model from a trace database into one executable file",
                       description="Every kernel takes its best trace for the target (untuned ones a default "
                                   "schedule); the whole model becomes one native function saved as one file.")
    p.add_argument("model", choices=("mlp", "convnet"), help="model to compile")
    p.add_argument("-o", "--output", required=True, help="executable file to write (e.g. mlp.tfx)")
    p.add_argument("--params", help="weights file (.npz, or .pkl; default for mlp: the course's weights)")
    add_db_option(p, required=False, help="trace database with tuned kernels (default: none, default schedules); "
                  "repeat it to read several as one, the first one first")
    p.add_argument("--allow-other-versions", action="store_true",
                   help="also use records measured with another code generator (LLVM) version")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--target", default=None, help="target (default: this machine)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the models and the compiler load when the command runs (see the package docstring)
    from ..database import is_url
    from ..graph import compile_model
    from .named_models import load_model

    mod, params = load_model(args.model, args.params, args.batch)
    for name in args.db or ():
        if not is_url(name) and not os.path.exists(name):
            raise CommandError(f"database {name!r} does not exist (tune first, or leave --db out for default schedules)")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CommandError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    exe = compile_model(mod, params, open_db(args.db), args.target,
                        allow_other_versions=args.allow_other_versions)
    exe.save(args.output)
    tuned = sum(1 for v in exe.kernels.values() if v == "tuned")
    print(f"wrote {args.output}: {exe.kind} executable, {len(exe.kernels)} kernels ({tuned} tuned, "
          f"{len(exe.kernels) - tuned} default schedule)")
    return 0
