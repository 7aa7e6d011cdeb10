"""The differential schedule fuzzer: a short run in the default suite (the long run is
``python -m tunefarm.testing.schedule_fuzz --programs N``)."""
from __future__ import annotations

import random

import numpy as np

from tunefarm.runtime.build_module import build
from tunefarm.script import from_source
from tunefarm.testing import schedule_fuzz as F
from tunefarm.testing.fuzz_programs import PROGRAMS


def test_random_schedules_built_and_run_match_the_unscheduled_program():
    stats = F.fuzz(32, seed=11)
    assert stats.programs == 32
    assert stats.mismatches == [] and stats.build_errors == []
    assert stats.refused_requests > 0  # the programs include ones whose loops must not run concurrently
    # every program ran once, a parallel one PARALLEL_RUNS times
    assert stats.runs == stats.programs - stats.too_large + (F.PARALLEL_RUNS - 1) * stats.parallel_programs
    assert 0 < stats.builds <= stats.programs


def test_the_comparison_sees_a_wrong_result():
    func = from_source(PROGRAMS["stencil"])
    ref = F.Reference(func, seed=3)
    wrong = from_source(PROGRAMS["stencil"].replace("B[vi] + B[vi + 1] + B[vi + 2]", "B[vi] + B[vi + 1]"))
    args = ref.fresh()
    build(wrong)(*args)
    assert "argument 1" in ref.mismatch(args)
    args = ref.fresh()
    build(func)(*args)
    assert ref.mismatch(args) is None
    assert not np.shares_memory(ref.fresh()[0], ref.arrays[0])  # each run starts from the same inputs


def test_the_racy_programs_never_get_a_parallel_loop_over_their_dependence():
    """Over many random schedules of the two programs whose iterations depend on each other, every accepted
    parallel / vectorized loop is one the checks allow (the run compares each build with the reference)."""
    for name in ("colsum_racy", "prefix_sum"):
        func = from_source(PROGRAMS[name])
        refs = {name: F.Reference(func, seed=5)}
        stats = F.Stats()
        rng = random.Random(name)
        cands = [F.Candidate(name, F.random_schedule(rng, func)[0]) for _ in range(24)]
        built = F._Built()
        try:
            F.check_programs(cands, refs, stats, built)
        finally:
            built.release()
        assert stats.mismatches == [] and stats.build_errors == []
        assert stats.runs >= len(cands) - stats.too_large


def test_the_script_prints_its_figures(capsys):
    assert F.main(["--programs", "8", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    for line in ("programs tried: 8", "parallel programs: ", "runs: ", "mismatches: 0"):
        assert line in out
    assert F.main(["--programs", "1000", "--max-minutes", "0"]) == 0  # out of time before the first program
    assert "programs tried: 0" in capsys.readouterr().out
