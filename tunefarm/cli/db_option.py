"""``--db``, which the reading commands take several times: ``--db mine.sqlite --db postgresql://...`` reads the
union of the databases, the first one first (``database.LayeredDatabase``: its record wins a tie)."""
from __future__ import annotations

import argparse

DB_HELP = ("trace database: an SQLite file or a postgresql:// URL; repeat it to read several as one, the first "
           "one first")


def add_db_option(p: argparse.ArgumentParser, required: bool = True, help: str = DB_HELP) -> None:
    p.add_argument("--db", action="append", required=required, default=None, help=help)


def open_db(names: list[str] | None, readonly: bool = True):
    """The database (or the layered databases) the ``--db`` options name."""
    from ..database import open_database  # loads when the command runs (see the package docstring)

    return open_database(names if names is None or len(names) > 1 else names[0], readonly=readonly)
