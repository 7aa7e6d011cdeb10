"""Budgets by time and by progress: a job stops cleanly at its deadline, and a task that stopped improving ends
early and leaves its share of the trials to the others."""
from __future__ import annotations

import time

import pytest

from tuning_helpers import flat_space
from tunefarm.database import open_database
from tunefarm.search.progress import task_table
from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning.api import tune, tune_tasks
from tunefarm.tuning.time_budget import STATUS


def _claims(db) -> int:
    return db._conn().execute("SELECT count(*) FROM claims").fetchone()[0]


def _stopped_by_time(farm, target, tmp_path, seconds: float):
    # workers that start within the budget count against it: start them first, to see the job's own work
    tune(builtin_workload("add-1024"), target, max_trials=2, trials_per_round=2, database=str(tmp_path / "w.sqlite"),
         farm=farm, seed=1, progress=False, confirm=0)
    db = open_database(str(tmp_path / "t.sqlite"))
    t0 = time.monotonic()
    result = tune(builtin_workload("matmul-64"), target, max_trials=100_000, trials_per_round=16, database=db,
                  farm=farm, seed=4, progress=False, time_budget_s=seconds)
    wall = time.monotonic() - t0
    assert result.status == STATUS == "time budget"
    assert db.jobs().status.tolist() == ["time budget"]
    # nothing half written: every trial the job counts is stored, each once, and its claims ended with it
    assert 0 < result.trials == db.count_records() == db.records().program_hash.nunique()
    assert _claims(db) == 0
    assert not farm.pending  # work still in flight was dropped: a later job on this farm gets no stale reply
    return wall, db


def test_a_time_budget_stops_the_job_cleanly_and_says_so(farm, target, tmp_path):
    wall, db = _stopped_by_time(farm, target, tmp_path, 6.0)
    assert wall < 60  # it stopped (100 000 trials would take hours); the bound itself is the slow test's
    again = tune(builtin_workload("add-1024"), target, max_trials=4, trials_per_round=4, database=db, farm=farm,
                 seed=5, progress=False, confirm=0)
    assert again.status == "finished" and again.trials == 4  # the farm serves the next job as usual


@pytest.mark.slow  # a 10-second job, timed
def test_a_ten_second_budget_returns_within_thirteen_seconds(farm, target, tmp_path):
    wall, _ = _stopped_by_time(farm, target, tmp_path, 10.0)
    assert wall < 13.0, f"tune(time_budget_s=10) returned after {wall:.1f} s"


def test_patience_ends_a_flat_task_early_and_gives_its_share_to_the_other(farm, target, tmp_path):
    tasks = [("flat", builtin_workload("add-1024"), 1.0), ("mm", builtin_workload("matmul-64"), 1.0)]
    budget = 48
    result = tune_tasks(tasks, target, max_trials=budget, trials_per_round=4, database=str(tmp_path / "p.sqlite"),
                        farm=farm, seed=7, space={"flat": flat_space, "mm": None}, task_scheduler="round-robin",
                        progress=False, patience={"flat": 6}, confirm=0)
    flat, mm = result.tasks
    assert flat.ended == "patience" and mm.ended == ""
    assert flat.trials < budget // 2 < mm.trials  # the flat task's share went to the one still improving
    assert flat.trials + mm.trials == result.trials == budget
    table = task_table(result.tasks)
    assert "patience" in table.splitlines()[2] and "#0 flat: patience" in table
