"""Sampling instructions: distributions, recorded decisions, and decisions that do not fit."""
from __future__ import annotations

import math
import random
from collections import Counter

import pytest

import programs as P
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.schedule import sampling


def _all_tilings(extent: int, n: int, limit: int) -> set:
    if n == 1:
        return {(extent,)} if not limit or extent <= limit else set()
    out = set()
    for d in range(1, extent + 1):
        if extent % d == 0:
            out |= {(d, *rest) for rest in _all_tilings(extent // d, n - 1, limit)}
    return out


@pytest.mark.parametrize("extent,n,limit", [(16, 2, 4), (8, 3, 0), (12, 3, 6), (1, 4, 16), (7, 2, 16), (360, 2, 8)])
def test_perfect_tile_is_uniform_over_all_valid_tilings(extent, n, limit):
    rng = random.Random(0)
    valid = _all_tilings(extent, n, limit)
    draws = 400 * len(valid)
    counts = Counter(tuple(sampling.sample_perfect_tile(rng, extent, n, limit)) for _ in range(draws))
    assert set(counts) == valid
    expected = draws / len(valid)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    dof = max(1, len(valid) - 1)
    assert chi2 < dof + 6 * math.sqrt(2 * dof) + 10  # far beyond any plausible chance deviation


def test_sample_perfect_tile_records_its_decision_and_obeys_the_limit():
    sch = Schedule(P.matmul(128, 128, 128), seed=11)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    for _ in range(20):
        fork = sch.copy()
        tiles = fork.sample_perfect_tile(loop=j, n=2, max_innermost_factor=16)
        values = [fork.get(t) for t in tiles]
        assert math.prod(values) == 128 and values[1] <= 16
        assert fork.trace.decisions == {2: values}
        assert f"decision={values}" in str(fork.trace)


def test_perfect_tile_decisions_that_do_not_fit_are_rejected():
    sch = Schedule(P.matmul(128, 128, 128))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    for bad, match in [([3, 40], "multiplies to 120"), ([4, 4, 8], "2 positive integers"),
                       ([1, 128], "innermost factor 128 > max_innermost_factor 16"), ([0, 128], "positive"),
                       (7, "list of 2")]:
        with pytest.raises(ScheduleError, match=match) as info:
            sch.sample_perfect_tile(i, n=2, decision=bad)
        assert info.value.primitive == "sample_perfect_tile"
    with pytest.raises(ScheduleError, match="n must be a positive integer"):
        sch.sample_perfect_tile(i, n=0)
    rvs = sch.sample_perfect_tile(i, n=2, max_innermost_factor=-1, decision=[1, 128])  # -1: no limit
    assert [sch.get(v) for v in rvs] == [1, 128]


def test_sample_categorical_distribution_and_decisions():
    sch = Schedule(P.matmul(), seed=3)
    counts = Counter()
    for _ in range(4000):
        v = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.1, 0.2, 0.3, 0.4])
        counts[sch.get(v)] += 1
    for value, p in zip([0, 16, 64, 512], [0.1, 0.2, 0.3, 0.4]):
        assert abs(counts[value] / 4000 - p) < 0.04
    v = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25] * 4, decision=1)
    assert sch.get(v) == 16
    assert sch.trace.as_python()[-1] == \
        "v4000 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=1)"
    with pytest.raises(ScheduleError, match="not an index"):
        sch.sample_categorical(candidates=[1, 2], probs=[0.5, 0.5], decision=2)
    with pytest.raises(ScheduleError, match="one probability per candidate"):
        sch.sample_categorical(candidates=[1, 2], probs=[1.0])
    with pytest.raises(ScheduleError, match="positive sum"):
        sch.sample_categorical(candidates=[1, 2], probs=[0, 0])
    never = Counter(sch.get(sch.sample_categorical([1, 2, 3], [0.0, 1.0, 0.0])) for _ in range(50))
    assert never == {2: 50}


# ------------------------------------------------------------------------------------------------------------
# compute location
# ------------------------------------------------------------------------------------------------------------
def test_compute_location_candidates_follow_metaschedule():
    sch = Schedule(P.dense_bias_relu())
    dense, bias, relu = (sch.get_block(n) for n in ("dense", "bias", "relu"))
    assert sch.compute_location_candidates(bias) == [-2, -1, 0, 1]  # inline, root, relu's loops i and j
    assert sch.compute_location_candidates(dense) == [-1, 0, 1]  # a reduction cannot be inlined
    assert sch.compute_location_candidates(relu) == [-1]  # no consumer
    n_insts = len(sch.trace)
    assert len(sch.trace) == n_insts  # the query is not recorded


def test_sample_compute_location_samples_legal_locations_and_compute_at_uses_them():
    func = P.dense_bias_relu()
    seen = Counter()
    for seed in range(60):
        sch = Schedule(func, seed=seed)
        bias = sch.get_block("bias")
        loc = sch.sample_compute_location(bias)
        decision = sch.trace.decisions[1]
        seen[decision] += 1
        sch.compute_at(bias, loc)
        if decision == -2:
            assert sch.get(loc) == "inline" and 'T.block("bias")' not in sch.mod.script()
        elif decision == -1:
            assert sch.get(loc) == "root" and sch.mod["main"] is func  # nothing moved
        else:
            relu_loop = sch.get_loops(sch.get_block("relu"))[decision]
            assert sch.get(sch.get_loops(bias)[decision]) is sch.get(relu_loop)  # bias now sits under it
        if seed < 8:
            P.check_numerics(sch.mod, "dense_bias_relu")
        line = sch.trace.as_python()[2]
        assert line == "sch.compute_at(block=b0, loop=l1, preserve_unit_loops=False)"
        assert sch.trace.as_python()[1] == f"l1 = sch.sample_compute_location(block=b0, decision={decision})"
    assert set(seen) == {-2, -1, 0, 1} and min(seen.values()) >= 5


def test_compute_location_decisions_are_checked_and_replayed():
    func = P.dense_bias_relu()
    sch = Schedule(func)
    dense = sch.get_block("dense")
    with pytest.raises(ScheduleError, match=r"decision -2 is not a legal compute location.*legal: \[-1, 0, 1\]"):
        sch.sample_compute_location(dense, decision=-2)
    with pytest.raises(ScheduleError, match="decision 5 is not a legal"):
        sch.sample_compute_location(dense, decision=5)
    loc = sch.sample_compute_location(dense, decision=1)
    sch.compute_at(dense, loc)
    trace = sch.trace
    assert Schedule.from_trace(trace, func).mod.script() == sch.mod.script()
    root = Schedule.from_trace(trace, func, decisions={1: -1})
    assert root.mod["main"] is func
    with pytest.raises(ScheduleError, match=r"trace instruction 1 \(SampleComputeLocation\)"):
        Schedule.from_trace(trace, func, decisions={1: -2})
    with pytest.raises(ScheduleError, match="not a loop"):
        sch.split(sch.sample_compute_location(sch.get_block("relu")), [2, 2])
