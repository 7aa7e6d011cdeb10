"""Sharing results: compile skips records of another code generator unless allowed (with a one-line notice),
and compiles from a local database layered over a team's, building the faster of their schedules."""
from __future__ import annotations

import json
import logging

import pytest

import tunefarm
from tuning_helpers import check_against_reference
from tunefarm.database import best_schedule, open_database
from tunefarm.database.code_versions import VersionFilter
from tunefarm.database.provenance import codegen_version
from tunefarm.ir.structural import workload_key
from tunefarm.schedule import Schedule, Trace
from tunefarm.search.errors import SearchError
from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning.api import tune

OTHER_LLVM = "1.0.0"


def _as_other_llvm(src, dst) -> None:
    """An export whose jobs ran another LLVM (as a database tuned before an upgrade would hold)."""
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for line in f:
            d = json.loads(line)
            if d["type"] == "job":
                d["llvm_version"] = OTHER_LLVM
            out.write(json.dumps(d) + "\n")


def _notices(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "another code generator" in r.getMessage()]


def test_compile_skips_records_of_another_llvm_unless_allowed(farm, target, tmp_path, caplog):
    func = builtin_workload("matmul-64")
    old = open_database(str(tmp_path / "old.sqlite"))
    tune(func, target, max_trials=10, trials_per_round=5, database=old, farm=farm, seed=1, progress=False, confirm=0)
    old.export(tmp_path / "old.jsonl")
    _as_other_llvm(tmp_path / "old.jsonl", tmp_path / "other.jsonl")
    db = open_database(str(tmp_path / "db.sqlite"))
    db.import_(tmp_path / "other.jsonl")
    n_ok = int((db.records().status == "ok").sum())
    assert set(db.records().llvm_version) == {OTHER_LLVM} and n_ok > 0
    caplog.set_level(logging.WARNING, logger="tunefarm.compile")
    with pytest.raises(SearchError, match="no successful tuning record"):
        tunefarm.compile(func, database=db)
    assert _notices(caplog) == [_notices(caplog)[0]] and f"skipped {n_ok} record(s) of 1 workload(s)" in \
        _notices(caplog)[0]
    assert "\n" not in _notices(caplog)[0]
    caplog.clear()
    check_against_reference(tunefarm.compile(func, database=db, allow_other_versions=True), func)
    assert _notices(caplog) == []
    # this code generator's own records now exist too: compile takes the best of them, passing over faster
    # ones of the other LLVM, and counts exactly those
    tune(func, target, max_trials=n_ok + 16, trials_per_round=8, database=db, farm=farm, seed=2, progress=False,
         confirm=0)
    df = db.records(status="ok")
    mine = df[df.llvm_version == codegen_version()[1]]
    best_mine = mine.sort_values(["median_us", "record_id"]).iloc[0]
    others_faster = int(((df.llvm_version == OTHER_LLVM) & (df.median_us < best_mine.median_us)).sum())
    versions = VersionFilter()
    chosen = best_schedule(db, func, None, versions)
    assert chosen.record.record_id == best_mine.record_id and versions.skipped == others_faster
    caplog.clear()
    mod = tunefarm.compile(func, database=db)
    check_against_reference(mod, func)
    assert len(_notices(caplog)) == (1 if others_faster else 0)
    best_trace = Trace.from_json(json.loads(best_mine.trace_json))
    expected = tunefarm.compile(Schedule.from_trace(best_trace, func).mod["main"], target=target)
    assert mod.get_source() == expected.get_source()  # the very program of this version's best record


def test_compile_from_local_over_team_builds_the_faster_schedule(farm, target, tmp_path):
    func = builtin_workload("matmul-64")
    key = workload_key(func)
    local, team = str(tmp_path / "local.sqlite"), str(tmp_path / "team.sqlite")
    tune(func, target, max_trials=4, trials_per_round=4, database=local, farm=farm, seed=5, progress=False)
    tune(func, target, max_trials=16, trials_per_round=8, database=team, farm=farm, seed=6, progress=False)
    bests = [open_database(p).best(key) for p in (local, team)]
    faster = min(bests, key=lambda r: r.rank)
    layered = open_database([local, team])
    assert layered.best(key).program_hash == faster.program_hash
    assert best_schedule(layered, func).record.program_hash == faster.program_hash
    mod = tunefarm.compile(func, database=[local, team])
    check_against_reference(mod, func)
    alone = tunefarm.compile(Schedule.from_trace(faster.trace, func).mod["main"], target=target)
    assert mod.get_source() == alone.get_source()  # the very program of the faster record
    assert layered.writer.path == local
