"""The main job's latency report is honest by construction: what it times, how, and what it prints.

No figure is asserted (timings are not tests); the structure that makes a rerun's ratios land inside the
printed spread is: every contender timed in every round, in a rotating order, in this process; baselines held
to the compiled model's thread count; medians with their 10th-90th percentile range; ratios per round.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from tunefarm.cli.main_job import LATENCY_COLUMNS, CheckFailed, check_against_numpy, run_mlp_job
from tunefarm.cli.side_by_side import Spread, ratio_spread, time_side_by_side
from tunefarm.nn.models import mlp_reference

from graph_helpers import ROOT


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_contenders_take_turns_in_every_round_in_a_rotating_order():
    calls: list[str] = []
    contenders = {name: (calls.append, (name,)) for name in ("a", "b", "c")}
    samples = time_side_by_side(contenders, rounds=4, min_time=0.0005)
    assert {k: len(v) for k, v in samples.items()} == {"a": 4, "b": 4, "c": 4}
    blocks = [name for k, name in enumerate(calls) if k == 0 or calls[k - 1] != name]  # one entry per block
    timed = blocks[-12:]  # after one calibration block per contender
    assert [timed[3 * r:3 * r + 3] for r in range(4)] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"],
                                                          ["a", "b", "c"]]
    assert all(t > 0 for ts in samples.values() for t in ts)


def test_numpy_is_held_to_the_thread_count_of_the_compiled_model():
    assert _blas_threads(), "numpy's BLAS is not visible to threadpoolctl"
    seen = []
    time_side_by_side({"numpy": (lambda: seen.append(_blas_threads()), ())}, rounds=2, min_time=0.0005, threads=3)
    assert seen and all(t and set(t) == {3} for t in seen)
    assert set(_blas_threads()) == {1}  # restored (the test configuration runs BLAS on one thread)


def test_ratios_are_taken_round_by_round_and_summarised_with_their_spread():
    samples = {"numpy": [10.0, 20.0, 12.0, 40.0, 11.0], "tuned": [5.0, 10.0, 6.0, 20.0, 5.5]}
    r = ratio_spread(samples, "numpy", "tuned")
    assert r == Spread(2.0, 2.0, 2.0)  # load that hits both sides alike cancels
    s = Spread.of(samples["numpy"])
    assert s.p10 <= s.median <= s.p90 and s.median == 12.0
    assert r.text(suffix="x") == "2.00x [2.00-2.00]"


def test_main_job_prints_three_rows_per_batch_with_spreads_and_checks_both_builds(tmp_path):
    lines: list[str] = []
    results = run_mlp_job(None, trials=0, db_path=str(tmp_path / "t.sqlite"), farm="local", workers=1,
                          batch_sizes=(1, 4), rounds=5, out=lambda s="": lines.extend(str(s).splitlines()))
    assert lines[0] == ("weights: the course's FashionMNIST weights (fasionmnist_mlp_params.npz, shipped with "
                        "tunefarm, sha256 verified)")
    assert sum("identical argmax (tuned and untuned)" in ln for ln in lines) == 2
    programs = ["untuned", "tuned", "numpy"] + (["torch"] if "torch" in sys.modules else [])
    for batch in (1, 4):
        b = results["batches"][batch]
        assert list(b["samples"]) == programs and all(len(v) == 5 for v in b["samples"].values())
        assert [r["program"] for r in b["rows"]] == programs
        for row in b["rows"]:
            s = row["spread"]
            assert s.p10 <= s.median <= s.p90 and row["median_us"] == s.median
            assert (row["vs_numpy"] is None) == (row["program"] == "numpy")
            assert (row["vs_untuned"] is None) == (row["program"] == "untuned")
    header = next(k for k, ln in enumerate(lines) if ln.split() == LATENCY_COLUMNS)
    table = lines[header + 1: header + 1 + 2 * len(programs)]
    assert [ln.split()[:2] for ln in table] == [[str(b), p] for b in (1, 4) for p in programs]
    assert all(len(ln) <= 120 for ln in lines)
    kernels = [r["kernel"] for r in results["kernels"]]
    assert kernels == ["fused_matmul_add_relu_1x128", "fused_matmul1_add1_1x10", "fused_matmul_add_relu_4x128",
                       "fused_matmul1_add1_4x10"]  # one name per workload: batch sizes do not share names


def test_nothing_to_measure_starts_no_ray_and_bad_input_fails_before(tmp_path):
    code = ("import sys; from tunefarm.cli import main; "
            f"rc = main(['tune-model', 'mlp', '--trials', '0', '--batch', '2', '--db', {str(tmp_path / 'a.sqlite')!r}]); "
            "print('ray imported:', 'ray' in sys.modules, 'rc', rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "ray imported: False rc 0" in proc.stdout
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 500)
    code = ("import sys; from tunefarm.cli import main; "
            f"rc = main(['tune', 'matmul-64', '--trials', '4', '--db', {str(junk)!r}]); "
            "print('ray imported:', 'ray' in sys.modules, 'rc', rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert "ray imported: False rc 1" in proc.stdout, proc.stderr
    assert "not a tunefarm database" in proc.stderr


def test_a_build_that_drifts_from_numpy_fails_the_check_and_names_itself(mlp_params):
    with pytest.raises(CheckFailed, match="batch 3: the untuned model differs from numpy by 1.0.e-03"):
        check_against_numpy(lambda x: mlp_reference(x, mlp_params) + 1e-3, mlp_params, 3, what="untuned model")
