"""Storage: schema, workloads, jobs, batches as transactions, per-thread connections, pickling."""
from __future__ import annotations

import json
import pickle
import sqlite3
import subprocess
import sys
import threading
import types

import pytest

from dbtest_helpers import REPO, TARGET_A, TARGET_B, make_record, make_trace, raw_sql, repo_env
from host_targets import not_this_host
from tunefarm.database import SCHEMA_VERSION, InvalidRecordError, Record, UnknownJobError, UnknownWorkloadError
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus


@pytest.mark.parametrize("kind", ["sqlite"])
def test_file_is_wal_and_versioned(db):
    raw = sqlite3.connect(db.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"records_best", "records_hash", "records_batch"} <= indexes


def test_import_is_light():
    heavy = ("ray", "xgboost", "llvmlite", "tunefarm.schedule.trace", "tunefarm.database.query")
    code = f"import sys, tunefarm.database; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=repo_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_commit_workload_is_idempotent_by_key(db):
    a = db.commit_workload("k1", "dense", '{"op": "dense"}', None)
    b = db.commit_workload("k1", "dense", '{"op": "dense"}', 1000.0)
    assert a == b
    info = db.get_workload("dense")
    assert (info.key, info.name, json.loads(info.ir_json), info.flop) == ("k1", "dense", {"op": "dense"}, 1000.0)
    assert len(db.workloads()) == 1
    assert db.commit_workload("k2", "dense", "{}", 1.0) != a


def test_workload_lookup_by_key_name_and_id(db):
    wid = db.commit_workload("k1", "dense", "{}", 1.0)
    db.commit_workload("k2", "relu", "{}", 1.0)
    db.commit_workload("k3", "relu", "{}", 1.0)
    assert db.get_workload("k1").workload_id == wid
    assert db.get_workload("dense").workload_id == wid
    assert db.get_workload(wid).key == "k1"
    with pytest.raises(UnknownWorkloadError, match="several workloads"):
        db.get_workload("relu")
    with pytest.raises(UnknownWorkloadError, match="nope"):
        db.count_records("nope")


def test_best_returns_trace_json_and_fields(db):
    db.commit_workload("k", "dense", "{}", 2e6)
    job = db.start_job("j", {"n": 1})
    rec = make_record("k", 3, job=job, secs=2e-4)
    batch = db.commit_records([rec, make_record("k", 4, job=job, secs=5e-4)])
    assert isinstance(batch, int)
    best = db.best("k", target=TARGET_A)
    assert best.trace_json == make_trace(3, wrapped=True)
    assert (best.workload_key, best.workload_name, best.target) == ("k", "dense", TARGET_A)
    assert (best.job_id, best.trial) == (job, 3)
    assert best.result == rec.result
    assert best.median_us == pytest.approx(2e-4 * 1.02 * 1e6)
    assert best.gflops == pytest.approx(2e6 / (2e-4 * 1.02) / 1e9)
    assert best.program_hash == rec.program_hash
    assert best.created.tzinfo is not None


def test_trace_property_is_lazy_and_uses_schedule_layer(db, monkeypatch):
    db.commit_workload("k", "dense", "{}", 1.0)
    db.commit_records([make_record("k", 1)])
    best = db.best("k")
    calls = []

    class FakeTrace:  # stands in for tunefarm.schedule.trace.Trace, which another layer provides
        @classmethod
        def from_json(cls, value):
            calls.append(value)
            return ("parsed", value)

    monkeypatch.setitem(sys.modules, "tunefarm.schedule.trace", types.SimpleNamespace(Trace=FakeTrace))
    assert calls == []  # nothing parsed until asked
    assert best.trace == ("parsed", best.trace_json)
    assert calls == [best.trace_json]


def test_records_accept_mappings_and_json_text(db):
    db.commit_workload("k", "w", "{}", None)
    ok = {"status": "ok", "run_secs": [1e-3], "build_secs": 0.1, "error": None, "host": "h"}
    db.commit_records([{"workload_key": "k", "trace_json": '[["A", [], [], []]]', "program_hash": None,
                        "target": TARGET_A, "result": ok, "trial": 0}])
    assert db.best("k").trace_json == [["A", [], [], []]]


def test_batch_is_all_or_nothing(db):
    db.commit_workload("k", "w", "{}", 1.0)
    good = [make_record("k", i) for i in range(5)]
    with pytest.raises(UnknownWorkloadError, match="commit_workload first"):
        db.commit_records(good + [make_record("missing", 9)])
    with pytest.raises(UnknownJobError):
        db.commit_records(good + [make_record("k", 9, job=12345)])
    assert db.count_records() == 0
    assert raw_sql(db, "SELECT count(*) FROM batches") == [(0,)]
    assert raw_sql(db, "SELECT count(*) FROM targets") == [(0,)]
    db.commit_records(good)  # the target id cached by nothing: a fresh, valid insert
    assert db.count_records() == 5


def test_batches_record_their_size(db):
    db.commit_workload("k", "w", "{}", 1.0)
    ids = [db.commit_records([make_record("k", 10 * b + i) for i in range(n)]) for b, n in enumerate((3, 7, 1))]
    assert db.commit_records([]) is None
    rows = raw_sql(db, "SELECT b.id, b.n_records, count(r.id) FROM batches b JOIN records r ON r.batch_id = b.id "
                       "GROUP BY b.id ORDER BY b.id")
    assert rows == [(ids[0], 3, 3), (ids[1], 7, 7), (ids[2], 1, 1)]


def test_invalid_record_fields_are_rejected(db):
    db.commit_workload("k", "w", "{}", 1.0)
    res = MeasureResult(MeasureStatus.OK, [1e-3])
    bad = [Record("k", [], None, "", res), Record("k", [], None, TARGET_A, res, trial=-1),
           Record("k", [], None, TARGET_A, res, trial=1.5), Record("k", [], 7, TARGET_A, res),
           Record("k", [], None, TARGET_A, "fast"),
           Record("k", [], None, TARGET_A, MeasureResult("ok", [float("nan")])),
           ("k",)]
    for r in bad:
        with pytest.raises(InvalidRecordError):
            db.commit_records([make_record("k", 0), r])
    assert db.count_records() == 0


def test_jobs_lifecycle(db):
    db.commit_workload("k", "w", "{}", 1.0)
    j1 = db.start_job("first", {"trials": 10, "space": "dense"})
    j2 = db.start_job("second")
    db.commit_records([make_record("k", i, job=j1) for i in range(4)])
    db.finish_job(j1, "finished")
    jobs = db.jobs()
    assert list(jobs["job_id"]) == [j1, j2]
    assert list(jobs["status"]) == ["finished", "running"]
    assert list(jobs["n_records"]) == [4, 0]
    assert json.loads(jobs["config_json"][0]) == {"trials": 10, "space": "dense"}
    assert str(jobs["started"].dtype) == "datetime64[ns]" and str(jobs["finished"].dtype) == "datetime64[ns]"
    assert jobs["finished"].isna().tolist() == [False, True]
    assert db.count_records(job=j1) == 4 and db.count_records(job=j2) == 0
    with pytest.raises(UnknownJobError):
        db.finish_job(999)
    with pytest.raises(InvalidRecordError):
        db.start_job("bad", {"x": object()})


def test_measured_hashes_per_workload_and_target(db):
    db.commit_workload("k", "w", "{}", 1.0)
    db.commit_workload("k2", "w2", "{}", 1.0)
    recs = [make_record("k", 0), make_record("k", 1, status=MeasureStatus.BUILD_ERROR),
            make_record("k", 2, target=TARGET_B), make_record("k2", 3)]
    recs.append(Record("k", [], None, TARGET_A, MeasureResult(MeasureStatus.OK, [1.0]), trial=4))
    db.commit_records(recs)
    assert db.measured_hashes("k", TARGET_A) == {recs[0].program_hash, recs[1].program_hash}
    assert db.measured_hashes("k", TARGET_B) == {recs[2].program_hash}
    assert db.measured_hashes("k", not_this_host(tag="unknown")) == set()
    assert db.count_records("k") == 4 and db.count_records("k", target=TARGET_B) == 1
    assert db.count_records(target="never") == 0
    assert db.targets() == sorted([TARGET_A, TARGET_B]) and db.targets("k2") == [TARGET_A]


def test_pickles_by_path(db):
    db.commit_workload("k", "w", "{}", 1.0)
    db.commit_records([make_record("k", 0)])
    clone = pickle.loads(pickle.dumps(db))
    assert clone.path == db.path and clone is not db
    clone.commit_records([make_record("k", 1)])
    assert db.count_records() == 2


def test_threads_get_their_own_connections(db):
    db.commit_workload("k", "w", "{}", 1.0)
    errors = []

    def work(t):
        try:
            for b in range(10):
                db.commit_records([make_record("k", 1000 * t + 10 * b + i) for i in range(10)])
        except Exception as e:  # reported below: a failing thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert db.count_records() == 400


def test_forked_child_opens_its_own_connection(db):
    import multiprocessing as mp

    db.commit_workload("k", "w", "{}", 1.0)
    db.commit_records([make_record("k", 0)])  # the parent's connection is open and used
    ctx = mp.get_context("fork")
    proc = ctx.Process(target=_child_commit, args=(db,))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    db.commit_records([make_record("k", 2)])  # the parent's connection still works
    assert db.count_records() == 3


def _child_commit(db):
    db.commit_records([make_record("k", 1)])
