"""Results people can trust and share, on every store: provenance columns, confirmed figures that rank, pruned
exports (that import, also from older files without the new fields), and layered reads of several databases."""
from __future__ import annotations

import json

import pytest

from dbtest_helpers import TARGET_A, TARGET_B, real_programs
from tunefarm.database import InvalidRecordError, LayeredDatabase, Record, open_database
from tunefarm.database.provenance import JOB_COLUMNS, code_versions, cpu_model
from tunefarm.ir.serialize import dumps
from tunefarm.ir.structural import workload_key
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus


def _ok(secs: float) -> MeasureResult:
    return MeasureResult(MeasureStatus.OK, [secs * 0.99, secs, secs * 1.01], 0.01, None, "here")


def test_jobs_and_records_show_their_provenance(real_study):
    db, info = real_study
    jobs = db.jobs()
    assert [c for c in JOB_COLUMNS if c in jobs.columns] == list(JOB_COLUMNS)
    assert set(zip(*(jobs[c] for c in JOB_COLUMNS))) == {code_versions()}  # every job stamped by its driver
    key = info["workloads"]["matmul-16"]
    func, programs = real_programs("matmul-16")
    job = db.start_job("more", {})
    db.commit_records([Record(key, programs[0][0], "stamped", TARGET_A, _ok(2e-5), job, None, cpu_model=cpu_model())])
    df = db.records(key)
    row = df[df.program_hash == "stamped"].iloc[0]
    assert row.cpu_model == cpu_model() and cpu_model()
    assert (row.tunefarm_version, row.llvmlite_version, row.llvm_version) == code_versions()
    assert df[df.job_id.isna()].llvm_version.isna().all()  # a record without a job has no known code generator


def test_confirmed_figures_rank_best_and_top_k(real_study):
    db, info = real_study
    key = info["workloads"]["matmul-16"]
    farm_top = db.top_k(key, 3, target=TARGET_A)
    assert len(farm_top) == 3 and all(r.confirmed is None for r in farm_top)
    # confirmed on a quiet host, the farm's third is the fastest and its first the slowest
    figures = [(r.record_id, m, m * 0.98, m * 1.05) for r, m in zip(farm_top, (9e-6, 8e-6, 7e-6))]
    assert db.store_confirmed(figures) == 3
    top = db.top_k(key, 3, target=TARGET_A)
    assert [r.record_id for r in top] == [farm_top[2].record_id, farm_top[1].record_id, farm_top[0].record_id]
    assert db.best(key, TARGET_A).confirmed == pytest.approx((7e-6, 7e-6 * 0.98, 7e-6 * 1.05))
    df = db.records(key, TARGET_A).set_index("record_id")
    assert df.loc[farm_top[2].record_id, "confirmed_us"] == pytest.approx(7.0)
    assert df.loc[farm_top[2].record_id, "confirmed_p90_us"] == pytest.approx(7.35)
    assert df.confirmed_us.notna().sum() == 3
    with pytest.raises(InvalidRecordError, match="p10 <= median <= p90"):
        db.store_confirmed([(farm_top[0].record_id, 1e-6, 2e-6, 3e-6)])


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def test_pruned_export_holds_the_k_best_per_workload_and_target_and_imports(real_study, new_store, tmp_path):
    db, info = real_study
    key = info["workloads"]["matmul-16"]
    best = db.top_k(key, 2, target=TARGET_A)
    db.store_confirmed([(best[1].record_id, 1e-6, 0.9e-6, 1.2e-6)])  # confirmed: now the best of its pair
    counts = db.export(tmp_path / "best.jsonl", top_k=1)
    pairs = {(k, t) for k in info["workloads"].values() for t in db.targets(k)}
    assert counts == {"workloads": 2, "jobs": 2, "batches": 0, "records": len(pairs)}
    records = [d for d in _lines(tmp_path / "best.jsonl") if d["type"] == "record"]
    assert sorted((d["workload"], d["target"]) for d in records) == sorted(pairs)
    assert all(d["status"] == "ok" for d in records)
    fresh = open_database(new_store("fresh"))
    assert fresh.import_(tmp_path / "best.jsonl")["records"] == len(pairs)
    for k, t in pairs:
        got, want = fresh.best(k, t), db.best(k, t)
        assert (got.program_hash, got.confirmed) == (want.program_hash, want.confirmed)
        assert fresh.count_records(k, t) == 1
    assert set(zip(*(fresh.jobs()[c] for c in JOB_COLUMNS))) == {code_versions()}
    fresh.close()


def test_an_export_without_the_new_fields_still_imports(real_study, new_store, tmp_path):
    db, info = real_study
    key = info["workloads"]["relu-32"]
    db.store_confirmed([(db.best(key).record_id, 5e-6, 4e-6, 6e-6)])
    db.export(tmp_path / "new.jsonl")
    dropped = set(JOB_COLUMNS) | {"cpu_model", "confirmed_secs", "confirmed_p10_secs", "confirmed_p90_secs"}
    with open(tmp_path / "old.jsonl", "w", encoding="utf-8") as f:
        for d in _lines(tmp_path / "new.jsonl"):
            f.write(json.dumps({k: v for k, v in d.items() if k not in dropped}) + "\n")
    old = open_database(new_store("old"))
    assert old.import_(tmp_path / "old.jsonl")["records"] == db.count_records()
    assert old.jobs().llvm_version.isna().all() and old.records().confirmed_us.isna().all()
    new = open_database(new_store("new"))
    new.import_(tmp_path / "new.jsonl")
    assert new.best(key).confirmed == pytest.approx((5e-6, 4e-6, 6e-6))
    assert list(new.jobs().llvm_version) == list(db.jobs().llvm_version)
    # a confirmed figure an import cannot trust is refused, naming its line
    lines = (tmp_path / "new.jsonl").read_text().splitlines()
    bad = [json.dumps({**d, "confirmed_p10_secs": 1.0}) if d.get("confirmed_secs") else json.dumps(d)
           for d in map(json.loads, lines)]
    (tmp_path / "bad.jsonl").write_text("\n".join(bad) + "\n")
    fresh = open_database(new_store("bad"))
    with pytest.raises(InvalidRecordError, match=r"bad\.jsonl:\d+: a confirmed figure"):
        fresh.import_(tmp_path / "bad.jsonl")
    assert fresh.count_records() == 0
    for d in (old, new, fresh):
        d.close()


def _store_with(new_store, name: str, func, rows) -> object:
    d = open_database(new_store(name))
    d.commit_workload(workload_key(func), "matmul_16", dumps(func), 1e5)
    job = d.start_job(name, {})
    d.commit_records([Record(workload_key(func), t, h, target, _ok(secs), job, None) for t, h, target, secs in rows])
    return d


def test_a_layered_read_sees_the_union_first_one_first(new_store):
    func, programs = real_programs("matmul-16")
    key = workload_key(func)
    (t0, h0), (t1, h1), (t2, h2), (t3, h3) = programs[:4]
    mine = _store_with(new_store, "mine", func, [(t0, h0, TARGET_A, 3e-5), (t2, h2, TARGET_A, 2e-5),
                                                 (t3, h3, TARGET_B, 4e-5)])
    team = _store_with(new_store, "team", func, [(t1, h1, TARGET_A, 1e-5), (t2, h2, TARGET_A, 1.5e-5)])
    both = open_database([mine, team])
    assert isinstance(both, LayeredDatabase) and both.writer is mine
    best = both.best(key, TARGET_A)
    assert (best.program_hash, best.median_secs) == (h1, pytest.approx(1e-5))  # the team's faster record
    # a program both hold is the first one's record (slower here), and appears once
    top = both.top_k(key, 10, TARGET_A)
    assert [r.program_hash for r in top] == [h1, h2, h0]
    assert top[1].median_secs == pytest.approx(2e-5)
    # an equal figure goes to the first database too
    team.commit_records([Record(key, programs[4][0], programs[4][1], TARGET_A, _ok(3e-5), None, None)])
    assert [r.program_hash for r in both.top_k(key, 10, TARGET_A)][-2:] == [h0, programs[4][1]]
    assert both.targets(key) == sorted({TARGET_A, TARGET_B}) and both.count_records(key) == 6
    df = both.records(key)
    assert len(df) == 5 and set(df.database) == {mine.path, team.path}  # the shared program once: the first's
    assert df[df.program_hash == h2].database.tolist() == [mine.path]
    # writes go to the first
    job = both.start_job("layered", {})
    both.commit_and_claim([Record(key, programs[5][0], programs[5][1], TARGET_A, _ok(9e-6), job, None)], job, [])
    both.finish_job(job)
    assert mine.count_records(key) == 4 and team.count_records(key) == 3
    assert both.best(key, TARGET_A).program_hash == programs[5][1]
    both.close()
