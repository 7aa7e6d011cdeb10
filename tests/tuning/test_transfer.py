"""Transfer across workloads: the cost model of a new workload's job starts from the study's other workloads'
records on the target, and nothing else of theirs (dedup, budget, population) enters the job."""
from __future__ import annotations

from tunefarm.database import open_database
from tunefarm.ir.structural import workload_key
from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning.api import tune


def test_the_model_starts_from_other_workloads_records_only_when_asked(farm, target, tmp_path):
    db = open_database(str(tmp_path / "study.sqlite"))
    source = builtin_workload("matmul-64")
    tune(source, target, max_trials=12, trials_per_round=6, database=db, farm=farm, seed=1, progress=False,
         confirm=0)
    n_source = int((db.records(source).status == "ok").sum())
    held_out = builtin_workload("matmul-48x64x32")
    runs = {}
    for transfer in (False, True):
        path = str(tmp_path / f"t{int(transfer)}.sqlite")
        db.export(tmp_path / "study.jsonl")
        copy = open_database(path)
        copy.import_(tmp_path / "study.jsonl")
        runs[transfer] = tune(held_out, target, max_trials=6, trials_per_round=6, database=copy, farm=farm, seed=2,
                              progress=False, confirm=0, transfer=transfer)
        assert runs[transfer].trials == copy.count_records(workload_key(held_out)) == 6
        assert copy.count_records(workload_key(source)) == db.count_records(source)  # the source is only read
    assert runs[False].cost_model.n_samples == 6
    assert runs[True].cost_model.n_samples == 6 + n_source  # every successful source record, as a sample
