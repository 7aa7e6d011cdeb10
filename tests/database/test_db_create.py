"""A database from its name or from what a ``database=`` argument holds, and the best stored schedule of a function
(its fastest record, replayed) that every user of tuning results starts from."""
from __future__ import annotations

import pytest

from dbtest_helpers import TARGET_A, TARGET_B
from host_targets import not_this_host
from tunefarm.database import (AmbiguousTargetError, Database, DatabaseError, TraceDatabase, best_record,
                               best_schedule, create, open_database)
from tunefarm.ir.structural import program_hash, workload_key
from tunefarm.schedule import Schedule, Trace
from tunefarm.search.workloads import load_workload
from tunefarm.target import Target


def test_create_and_open_database(tmp_path):
    db = create("sqlite", tmp_path / "a.sqlite")
    assert isinstance(db, Database) and isinstance(db, TraceDatabase) and db.count_records() == 0
    assert open_database(db) is db and open_database(None) is None
    assert isinstance(open_database(str(tmp_path / "a.sqlite")), Database)
    readonly = open_database(tmp_path / "a.sqlite", readonly=True)
    with pytest.raises(DatabaseError):
        readonly.start_job("never written", {})
    assert db.count_records() == 0 and len(db.jobs()) == 0
    with pytest.raises(ValueError, match="unknown database 'json'"):
        create("json", tmp_path / "b.json")
    with pytest.raises(TypeError, match="path or a tunefarm.Database, got int"):
        open_database(3)


def test_the_best_schedule_is_the_fastest_record_replayed(real_study):
    db, info = real_study
    _, func = load_workload("matmul-16")
    for target in (TARGET_A, TARGET_B):
        best = best_schedule(db, func, target)
        rec = db.best(info["workloads"]["matmul-16"], target=target)
        assert best.record.record_id == rec.record_id == best_record(db, func, target).record_id
        assert program_hash(best.func) == rec.program_hash  # the replayed program is the one measured
        replayed = Schedule.from_trace(Trace.from_json(rec.trace_json), func).mod["main"]
        assert program_hash(replayed) == program_hash(best.func)
    stored_as_a = best_record(db, func, TARGET_A).record_id
    for same in (Target(TARGET_A), str(Target(TARGET_A)), Target.host()):  # other spellings of this host
        assert best_record(db, func, same).record_id == stored_as_a
    with pytest.raises(AmbiguousTargetError):  # tuned for two CPUs: the caller must say which
        best_schedule(db, func)
    assert best_schedule(db, func, not_this_host(num_cores=2)) is None  # never tuned there
    _, relu = load_workload("relu-32")
    assert best_schedule(db, relu).record.target == TARGET_A  # its only target
    _, other = load_workload("matmul-32")
    assert workload_key(other) not in info["workloads"].values()
    assert best_schedule(db, other, TARGET_A) is None and best_record(db, other) is None  # never tuned
