"""What commands print: aligned tables for people, stored text made safe for a terminal, and job logs."""
from __future__ import annotations

import logging
from collections.abc import Sequence

from ..target import target_label


def show_logs() -> None:
    """Log tuning progress to stderr, unless the program configured logging itself."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")


def nan_to_none(row: dict) -> dict:
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
    targets = {r["target"] for r in rows}
    if len(targets) == 1 and "target" in cols:
        table = format_table(rows, [c for c in cols if c != "target"], shorten)
        return f"target: {target_label(next(iter(targets)))}\n{table}"
    return format_table([{**r, "target": target_label(r["target"])} for r in rows], cols, shorten)
