"""Confirming the winner: a job's confirmed best agrees with a fresh standalone timing of that program."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from host_targets import not_this_host
from tuning_helpers import check_against_reference
from tunefarm.farm.quiet_host import quiet_host
from tunefarm.search.workloads import builtin_workload
from tunefarm.tuning import confirm as confirm_mod
from tunefarm.tuning.api import tune


def _fresh_median(db, rec, func) -> float:
    """The program built again and timed alone, as a user would time it: blocks of back-to-back calls, the median
    of three times the confirmation's rounds (a longer timing than the confirmation's own, so that it is the
    reference), nothing else timing on the host."""
    built = confirm_mod._built(db, rec, func)
    with quiet_host():
        samples = confirm_mod.interleaved_rounds({"fresh": built}, 3 * confirm_mod.ROUNDS, confirm_mod.MAX_SECONDS)
    return float(np.median(samples["fresh"]))


@pytest.mark.slow  # three tuning jobs and their timings: about 40 s on a loaded 2-core machine
def test_the_confirmed_best_agrees_with_a_fresh_timing_in_three_runs_of_three(farm, target, tmp_path):
    func = builtin_workload("matmul-64")
    for run in range(3):
        result = tune(func, target, max_trials=12, trials_per_round=6, database=str(tmp_path / f"r{run}.sqlite"),
                      farm=farm, seed=run + 1, progress=False, confirm=3)
        (conf,) = result.confirmed
        assert conf.skipped is None and not conf.failed and len(conf.programs) == 3
        best = result.best_record()
        assert best.confirmed is not None, "the job's best carries its confirmed figure"
        med, p10, p90 = best.confirmed
        assert best.record_id == conf.programs[0].record_id  # best ranks by the confirmed median
        assert all(p.rounds >= confirm_mod.MIN_ROUNDS for p in conf.programs)
        fresh = _fresh_median(result.database, best, func)
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
