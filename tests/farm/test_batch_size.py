"""Several items per driver step: a RayFarm sizes its actor calls by time (many short items per call, few long
ones: farm/batch_size.py, on a real local Ray); a LocalFarm's poll hands back several results while every worker
is still fed (``LocalFarm._drive``)."""
from __future__ import annotations

import math

import pytest

from tunefarm.farm import DoneStatus, Work
from tunefarm.farm.batch_size import BATCH_SECS, BatchSizer

H = "tunefarm.testing.handlers:"
pytestmark = pytest.mark.timeout(300)


def test_the_batch_carries_about_half_a_second_of_work():
    s = BatchSizer(8)
    assert s.size == 8 and s.item_secs is None  # nothing known yet: the farm's bound
    assert not s.observe([])
    assert s.observe([0.25] * 3) and s.size == round(BATCH_SECS / 0.25) == 2
    for _ in range(10):
        s.observe([3.0] * 4)
    assert s.size == 1  # an item longer than a call's worth still goes one at a time
    for _ in range(20):
        s.observe([0.01] * 4)
    assert s.size == 8  # short items: the bound, never beyond it


def test_noise_does_not_resize_and_bad_clocks_are_ignored():
    s = BatchSizer(8)
    s.observe([0.1] * 30)
    assert s.size == 5
    assert not s.observe([0.11, 0.09, 0.12])  # within a quarter of the size: stays
    assert not s.observe([math.nan, -1.0, math.inf]) and s.item_secs == pytest.approx(0.1, rel=0.05)
    with pytest.raises(ValueError, match="max_batch"):
        BatchSizer(0)


def _run(farm, works) -> list:
    for w in works:
        farm.put(w)
    done = []
    while farm.pending:
        done += farm.poll(60)
    assert all(d.status is DoneStatus.OK for d in done), [d.error for d in done]
    return done


def test_a_ray_farm_holds_fewer_long_items_and_more_short_ones(local_ray):
    from tunefarm.farm import RayFarm

    with RayFarm(num_workers=1, worker_cpus=0, inflight_per_worker=8, metrics=False) as farm:
        assert farm.items_per_worker == 8 and farm.capacity == 8  # before any reply: the bound
        _run(farm, [Work(H + "pause", {"secs": 0.3}) for _ in range(12)])
        assert farm.items_per_worker == 4 and farm.capacity == 4  # two calls of round(0.5 / 0.3) = 2 items
        farm.stats.max_in_flight = 0
        _run(farm, [Work(H + "pause", {"secs": 0.3}) for _ in range(8)])
        assert farm.stats.max_in_flight == 4  # the farm sent no more than it holds
        _run(farm, [Work(H + "echo", i) for i in range(80)])
        assert farm.items_per_worker == 8  # short items: back to the bound
        assert sorted(farm.rooms().values()) == [8]


def test_a_local_farm_poll_hands_back_several_results_while_its_workers_are_fed(lock_path):
    from tunefarm.farm import LocalFarm
    from tunefarm.farm.local_farm import LINGER_S

    with LocalFarm(num_workers=1, lock_path=lock_path, inflight_per_worker=4) as farm:
        _run(farm, [Work(H + "echo", 0)])  # the worker is up
        for i in range(4):
            farm.put(Work(H + "echo", i))
        first = farm.poll(60)
        assert len(first) >= 2  # one result alone waited: the worker still held three items
        rest = []
        while farm.pending:
            rest += farm.poll(60)
        assert sorted(d.value["payload"] for d in first + rest) == [0, 1, 2, 3]
        # long items: a result waits LINGER_S at most, not for the next item to end
        assert LINGER_S < 0.5
        for _ in range(4):
            farm.put(Work(H + "pause", {"secs": 0.5}))
        assert len(farm.poll(60)) == 1
        while farm.pending:
            farm.poll(60)
