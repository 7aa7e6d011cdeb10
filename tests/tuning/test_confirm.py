"""Confirming the winner: a job's confirmed best agrees with a fresh standalone timing of that program."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tunefarm
from host_targets import not_this_host
from tuning_helpers import check_against_reference
from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning import confirm as confirm_mod
from tunefarm.tuning.api import tune


def _bench_in_a_new_process(db_path: str) -> dict:
    """``tunefarm bench`` run on the database in a process of its own, as a user re-times a study's best later:
    its one row (the best record rebuilt, checked, timed in alternation with the unscheduled program)."""
    done = subprocess.run([sys.executable, "-m", "tunefarm", "bench", "--db", db_path, "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(done.stdout)
    return row


@pytest.mark.slow  # three tuning jobs, their confirmations and a tunefarm bench of each: about 60 s when loaded
def test_the_confirmed_best_agrees_with_a_fresh_timing_in_three_runs_of_three(farm, target, tmp_path):
    func = builtin_workload("matmul-64")
    for run in range(3):
        path = str(tmp_path / f"r{run}.sqlite")
        result = tune(func, target, max_trials=12, trials_per_round=6, database=path, farm=farm, seed=run + 1,
                      progress=False, confirm=3)
        (conf,) = result.confirmed
        df = result.database.records()
        n_ok = df[df.status == "ok"].program_hash.nunique()  # (a trial of a loaded host may time out)
        assert conf.skipped is None and not conf.failed and len(conf.programs) == min(3, n_ok) >= 1, \
            (conf, df.status.value_counts().to_dict())
        best = result.best_record()
        assert best.confirmed is not None, "the job's best carries its confirmed figure"
        med, p10, p90 = best.confirmed
        assert best.record_id == conf.programs[0].record_id  # best ranks by the confirmed median
        assert all(p.sessions >= confirm_mod.MIN_SESSIONS and p.samples == 1 + (p.sessions - 1) * confirm_mod.BLOCKS
                   for p in conf.programs)  # a 5 us program: one calibrating block, then BLOCKS per session
        row = _bench_in_a_new_process(path)
        assert row["check"] == "ok" and row["stored_us"] == pytest.approx(best.median_secs * 1e6)  # that program
        fresh = row["tuned_us"] * 1e-6
        print(f"run {run}: confirmed {med * 1e6:.3f} us (p10-p90 {p10 * 1e6:.3f}-{p90 * 1e6:.3f}), "
              f"tunefarm bench {fresh * 1e6:.3f} us")
        assert p10 <= fresh <= p90, f"run {run}: fresh {fresh * 1e6:.3f} us outside {p10 * 1e6:.3f}-{p90 * 1e6:.3f}"
        check_against_reference(tunefarm.compile(func, database=result.database), func)


def test_confirm_on_demand_refuses_bad_arguments_and_skips_a_target_this_host_cannot_time(farm, target, tmp_path):
    from tunefarm.database import open_database

    db = open_database(str(tmp_path / "d.sqlite"))
    with pytest.raises(ValueError, match="top must be an integer >= 1"):
        confirm_mod.confirm(db, top=0)
    func = builtin_workload("add-1024")
    tune(func, target, max_trials=4, trials_per_round=4, database=db, farm=farm, seed=3, progress=False, confirm=0)
    assert db.records().confirmed_us.isna().all()  # confirm=0: the job confirmed nothing
    (done,) = confirm_mod.confirm(db, func, top=2)
    assert len(done.programs) == 2 and db.records().confirmed_us.notna().sum() == 2
    assert confirm_mod.host_can_time(str(target)) and not confirm_mod.host_can_time(not_this_host("+avx2"))
