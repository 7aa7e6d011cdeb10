"""The ``tunefarm`` command line: one module per command (``import`` and ``export`` share one).

Each command module has ``add_parser(subparsers)``, which builds the command's parser and sets ``func`` to its
``(args) -> int`` handler; ``COMMANDS`` lists the modules in help order. To add a command, write its module and
append it. A command reports failure by raising ``CommandError`` (``errors.py``); ``main`` is the one place
that prints an error -- ``tunefarm <command>: error: <one line>`` on stderr -- and picks the exit status.

The handlers import the layers they drive (database, graph, tuning) when they run, not when this package is
imported: ``tunefarm --help`` stays instant, and ``tunefarm run`` never loads the tuning stack.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import bench, best, compile_model, confirm, dashboard, report, run_executable, transfer, tune, tune_model
from .errors import CommandError

COMMANDS = [tune, tune_model, best, confirm, report, dashboard, compile_model, run_executable, bench, transfer]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tunefarm", description="Distributed auto-tuning of CPU tensor programs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tunefarm`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    from ..database.errors import DatabaseError  # loads with a command, not with --help (see the docstring)

    try:
        return args.func(args)
    except (CommandError, DatabaseError, OSError) as e:
        print(f"tunefarm {args.command}: error: {_first_line(e)}", file=sys.stderr)
        return e.status if isinstance(e, CommandError) else 1


__all__ = ["COMMANDS", "CommandError", "build_parser", "main"]
