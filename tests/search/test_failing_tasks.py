"""A task whose trials all fail the same way stops early, and its error is shown (table, result, CLI).

Through the public entry points only (``tune``, ``tune_tasks``, ``tunefarm tune``): the spaces build for real
and fail for real in the farm (``failure_spaces.py``: ``erf`` of float16 values, which the code generator does
not support, in 91 different splits).
"""
from __future__ import annotations

import logging
from pathlib import Path

import failure_spaces as fs
import pytest

from tunefarm.cli import main
from tunefarm.database import Database
from tunefarm.search import SearchError
from tunefarm.tuning.api import tune, tune_tasks

SPACES = Path(fs.__file__).resolve()
ERROR = "build_error: build: "


def test_tune_stops_a_task_whose_first_rounds_fail_alike_and_raises_its_error(tmp_path, target, farm):
    path = str(tmp_path / "f.sqlite")
    with pytest.raises(SearchError) as info:
        tune(fs.wide_float16_erf(), target=target, max_trials=64, trials_per_round=4, space=fs.three_way_split_space,
             database=path, farm=farm, seed=0, task_name="erf16")
    message = str(info.value)
    assert message.startswith("task 'erf16' stopped after 8 trials, all failed with the same error: " + ERROR)
    assert "erf is supported for float32/float64" in message and "\n" not in message
    db = Database(path)
    # two rounds, and at most what was already on its way when the task stopped (the farm's capacity): not 64
    assert 8 <= db.count_records() <= 8 + farm.capacity
    assert set(db.records().status.astype(str)) == {"build_error"}
    assert list(db.jobs().status) == ["finished_with_errors"]


def test_tune_tasks_stops_only_the_failing_task_and_shows_it_in_the_progress_table(tmp_path, target, farm, mm64,
                                                                                     caplog):
    def tile_ij(sch):
        i, j, _ = sch.get_loops(sch.get_block("C"))
        sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
        sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
        return sch

    caplog.set_level(logging.INFO, logger="tunefarm.search")
    result = tune_tasks([("erf16", fs.wide_float16_erf()), ("mm", mm64)], target=target, max_trials=24,
                        trials_per_round=4, space={"erf16": fs.three_way_split_space, "mm": tile_ij},
                        database=str(tmp_path / "two.sqlite"), farm=farm, seed=0, task_scheduler="round-robin")
    assert list(result.errors) == ["erf16"]
    assert result.errors["erf16"].startswith("task 'erf16' stopped after 8 trials")
    df = result.database.records()
    assert (df[df.workload == "erf16"].status.astype(str) == "build_error").all()
    assert (df[df.workload == "mm"].status.astype(str) == "ok").sum() >= 7  # mm got the budget erf16 left
    assert result.best_record("mm") is not None
    final = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Tuning finished")][-1]
    lines = final.splitlines()
    erf_row = next(ln for ln in lines if ln.startswith("0  | erf16"))
    assert erf_row.rstrip().endswith("| stop")
    assert any(ln.startswith("  #0 erf16: " + ERROR) for ln in lines)
    assert not any(ln.startswith("  #1 mm") for ln in lines)
    assert all(len(ln) <= 120 for ln in lines)


def test_cli_names_the_error_of_a_task_that_stopped(tmp_path, capsys):
    code = main(["tune", f"{SPACES}:wide_float16_erf", "--space", f"{SPACES}:three_way_split_space",
                 "--trials", "64", "--trials-per-round", "4", "--db", str(tmp_path / "c.sqlite"), "--farm", "local",
                 "--workers", "1", "--target", "llvm -num-cores=1", "--seed", "0"])
    err = capsys.readouterr().err
    assert code == 1
    assert "tunefarm tune: error: task 'wide_float16_erf' stopped after 8 trials, all failed with the same error: " \
           + ERROR in err
    assert Database(str(tmp_path / "c.sqlite")).count_records() <= 12
