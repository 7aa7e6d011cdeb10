"""Per-decision columns of the records frame: what each trial's sampling instructions chose.

Optuna's ``trials_dataframe()`` has a ``params_*`` column per parameter; a trace's parameters are the
decisions of its sampling instructions. Each becomes a column named by instruction index and kind, e.g.
``decision_2_sample_perfect_tile`` holding ``(8, 16)``, so ``df.groupby("decision_2_sample_perfect_tile")
.median_us.min()`` answers "which tiling was fastest". Lists become tuples (hashable, so they group); a
trace without that instruction has ``None``.

Traces of one space share their instructions and differ in decisions, so the instruction list of a stored
trace (``{"insts":[...],"decisions":[...]}``, compact, instructions first) is parsed once per distinct text and
only the short decision list per row; any other shape is parsed whole.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

_DECISIONS = ',"decisions":'
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _tupled(value):
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _column(index: int, kind: str) -> str:
    return f"decision_{index}_{_CAMEL.sub('_', kind).lower()}"


def _split(text: str, kinds_of: dict) -> tuple[list, list]:
    """``(instruction kinds, decisions)`` of one stored trace text."""
    head, sep, tail = text.rpartition(_DECISIONS)
    if sep and head.startswith('{"insts":') and tail.endswith("}"):
        try:
            kinds = kinds_of.get(head)
            if kinds is None:
                kinds = kinds_of[head] = [inst[0] for inst in json.loads(head + "}")["insts"]]
            return kinds, json.loads(tail[:-1])
        except (ValueError, KeyError, IndexError, TypeError):
            pass
    trace = json.loads(text)
    if isinstance(trace, list):  # a bare instruction list has no decisions
        return [inst[0] for inst in trace], []
    return [inst[0] for inst in trace["insts"]], trace.get("decisions", [])


def decision_columns(trace_texts: Iterable[str]) -> dict[str, list]:
    """``column name -> values`` (one per trace, in order), columns sorted by instruction index."""
    kinds_of: dict = {}
    rows = []
    names: dict[str, int] = {}
    for text in trace_texts:
        kinds, decisions = _split(text, kinds_of)
        row = {}
        for index, decision in decisions:
            name = _column(index, kinds[index])
            names.setdefault(name, index)
            row[name] = _tupled(decision)
        rows.append(row)
    ordered = sorted(names, key=lambda n: (names[n], n))
    return {name: [row.get(name) for row in rows] for name in ordered}
