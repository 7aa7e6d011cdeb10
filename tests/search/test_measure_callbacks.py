"""Measure callbacks: the job's own consumers are a list, and a user's callbacks see every measured result once;
one that raises is reported once and the job finishes."""
from __future__ import annotations

import logging

import pytest

import tunefarm
from tunefarm.runtime.measure_result import MeasureResult
from tunefarm.tuning.callbacks import (AddToDatabase, MeasureCallback, Measured, UpdateCostModel, UpdateSearch,
                                       UpdateTask)


def test_a_callback_sees_each_measured_result_once_with_its_task(tmp_path, farm, target, mm64):
    seen = []
    r = tunefarm.tune(mm64, target=target, max_trials=12, trials_per_round=4, database=str(tmp_path / "d.sqlite"),
                      farm=farm, seed=5, progress=False, task_name="mm64",
                      callbacks=[lambda task, m: seen.append((task.name, task.key, m))])
    assert r.trials == 12 == len(seen)
    assert {(name, key) for name, key, _ in seen} == {("mm64", r.workload_keys[0])}
    assert all(isinstance(m, Measured) and isinstance(m.result, MeasureResult) for *_, m in seen)
    stored = r.database.records()
    assert sorted(m.candidate.hash for *_, m in seen) == sorted(stored.program_hash)
    ok = [m for *_, m in seen if m.result.ok]
    assert ok and all(m.latency == min(m.result.run_secs) for m in ok)


class Counting(MeasureCallback):
    """A callback written as the job's own are: it gets the job too."""

    def __init__(self):
        self.n = 0
        self.trials_seen = []

    def apply(self, job, task, measured):
        self.n += 1
        self.trials_seen.append(task.state.trials)  # the job's own callbacks ran first


def test_a_raising_callback_is_reported_once_and_the_job_finishes(tmp_path, farm, target, mm64, caplog):
    calls = []

    def broken(task, measured):
        calls.append(measured)
        raise RuntimeError("the user's bug")

    counting = Counting()
    with caplog.at_level(logging.ERROR, logger="tunefarm.tuning"):
        r = tunefarm.tune(mm64, target=target, max_trials=10, trials_per_round=5,
                          database=str(tmp_path / "d.sqlite"), farm=farm, seed=6, progress=False,
                          callbacks=[broken, counting])
    assert r.trials == 10 and r.database.count_records() == 10
    assert set(r.database.jobs().status) == {"finished"}
    assert len(calls) == 1
    reports = [rec for rec in caplog.records if "the user's bug" in rec.getMessage()]
    assert len(reports) == 1 and reports[0].exc_info is not None
    assert counting.n == 10 and counting.trials_seen == list(range(1, 11))


def test_the_default_list_and_a_callback_that_cannot_be_called(mm64):
    kinds = [type(cb) for cb in MeasureCallback.Default()]
    assert kinds[:3] == [AddToDatabase, UpdateSearch, UpdateCostModel] and kinds[-1] is UpdateTask
    with pytest.raises(TypeError, match="a measure callback must be a MeasureCallback or a callable"):
        tunefarm.tune(mm64, max_trials=4, callbacks=[42])  # refused before any farm starts
