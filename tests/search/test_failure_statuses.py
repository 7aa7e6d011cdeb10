"""Failure statuses through the tuning loop: the job completes and records each trial with its status.

The spaces (``failure_spaces.py``) use only legal schedule primitives; their bad programs fail for real in
the farm: a wrong float summation order, a recomputation that runs for minutes, a stack overflow, and a
workload the code generator cannot build.
"""
from __future__ import annotations

import failure_spaces as fs
import pytest

from tunefarm.farm import LocalFarm
from tunefarm.tuning.api import tune_tasks


def test_wrong_result_timeout_and_segfault_are_recorded_and_the_job_goes_on(tmp_path, target):
    tasks = [("wrong", fs.ill_conditioned_sum(), 1.0), ("hang", fs.recompute_workload(), 1.0),
             ("segv", fs.many_inputs_workload(), 1.0), ("nobuild", fs.float16_erf_workload(), 1.0)]
    spaces = {"wrong": fs.reorder_reduction_space, "hang": fs.recompute_space, "segv": fs.stack_overflow_space,
              "nobuild": fs.split_space}
    with LocalFarm(num_workers=2, target=target) as farm:
        result = tune_tasks(tasks, target=target, max_trials=8, trials_per_round=2, space=spaces,
                            database=str(tmp_path / "fail.sqlite"), farm=farm, seed=0, postprocs=[],
                            strategy="random", task_scheduler="round-robin",
                            timeout_s={"wrong": 60, "hang": 8, "segv": 180, "nobuild": 60})
    df = result.database.records()
    assert len(df) == 8
    got = sorted((w, str(s)) for w, s in zip(df.workload, df.status))
    assert got == sorted([("wrong", "ok"), ("wrong", "wrong_result"), ("hang", "ok"), ("hang", "timeout"),
                          ("segv", "ok"), ("segv", "worker_lost"), ("nobuild", "build_error"),
                          ("nobuild", "build_error")])
    nobuild = df[df.workload == "nobuild"]
    assert nobuild.error.str.contains("erf is supported for float32/float64").all()
    bad = df[(df.status != "ok") & (df.workload != "nobuild")].set_index("workload")
    assert "differ from the unscheduled program" in bad.loc["wrong", "error"]
    assert "budget" in bad.loc["hang", "error"]
    assert "SIGSEGV" in bad.loc["segv", "error"]
    assert df[df.status != "ok"].median_us.isna().all()
    # the job is finished; each task has its one good program as best, except the one that never built,
    # which ends with its error (status and first line), and so does the job
    jobs = result.database.jobs()
    assert list(jobs.status) == ["finished_with_errors"]
    for name in ("wrong", "hang", "segv"):
        best = result.best_record(name)
        assert best is not None and best.status.value == "ok"
    assert result.best_record("nobuild") is None
    assert list(result.errors) == ["nobuild"]
    assert result.errors["nobuild"].startswith("task 'nobuild': all 2 trials failed (the same error): build_error: ")
    assert "erf is supported for float32/float64" in result.errors["nobuild"]
    assert "\n" not in result.errors["nobuild"]


def test_a_space_without_valid_schedules_ends_with_a_search_error(tmp_path, target, farm, mm64):
    from tunefarm.search import SearchError
    from tunefarm.tuning.api import tune

    def broken(sch):
        sch.get_block("no_such_block")

    with pytest.raises(SearchError, match="no valid schedule.*no block named 'no_such_block'"):
        tune(mm64, target=target, max_trials=8, space=broken, database=str(tmp_path / "b.sqlite"), farm=farm,
             seed=1)
    from tunefarm.database import Database

    db = Database(str(tmp_path / "b.sqlite"))
    assert list(db.jobs().status) == ["finished_with_errors"]
    assert db.count_records() == 0
