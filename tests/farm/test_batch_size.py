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


def test_the_batch_carries_about_batch_secs_of_work():
    s = BatchSizer(8, batch_secs=0.5)
    assert s.size == 8 and s.item_secs is None  # nothing known yet: the farm's bound
    assert not s.observe([])
    assert s.observe([("m", 0.25)] * 3) and s.size == round(0.5 / 0.25) == 2
    for _ in range(10):
        s.observe([("m", 3.0)] * 4)
    assert s.size == 1  # an item longer than a call's worth still goes one at a time
    for _ in range(20):
        s.observe([("m", 0.01)] * 4)
    assert s.size == 8  # short items: the bound, never beyond it


def test_noise_does_not_resize_and_bad_clocks_are_ignored():
    s = BatchSizer(8, batch_secs=0.5)
    s.observe([("m", 0.1)] * 30)
    assert s.size == 5
    assert not s.observe([("m", 0.11), ("m", 0.09), ("m", 0.12)])  # within a quarter of the size: stays
    assert not s.observe([("m", math.nan), ("m", -1.0), ("m", math.inf)])
    assert s.item_secs == pytest.approx(0.1, rel=0.05) and s.secs("m") == pytest.approx(0.1, rel=0.05)
    with pytest.raises(ValueError, match="max_batch"):
        BatchSizer(0)


def test_each_handler_has_its_own_estimate_and_long_items_end_a_batch():
    s = BatchSizer(16, batch_secs=0.5)
    assert s.secs("search") == 0.0  # nothing known: a batch is bounded by its count alone
    for _ in range(30):
        s.observe([("measure", 0.05)] * 7 + [("search", 0.4)])
    assert s.secs("measure") == pytest.approx(0.05, rel=0.05) and s.secs("search") == pytest.approx(0.4, rel=0.05)
    assert 0.05 < s.item_secs < 0.4  # the mean of all
    assert s.size == round(0.5 / s.secs("measure")) == 10  # the size: the most common handler's, not the mean's
    assert s.secs("train") == s.item_secs  # a handler not seen yet counts as the mean
    search, measure = s.secs("search"), s.secs("measure")
    assert s.fits(search, measure) and not s.fits(search, search)  # one long item per batch
    assert not s.fits(search + 2 * measure, measure)  # 0.4 + 0.1 + 0.025 is past 0.5
    for _ in range(60):  # long items become the common kind: a call carries one
        s.observe([("search", 0.4)] * 7 + [("measure", 0.05)])
    assert s.size == 1


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
        secs = 0.6 * BATCH_SECS
        _run(farm, [Work(H + "pause", {"secs": secs}) for _ in range(12)])
        assert farm.items_per_worker == 4 and farm.capacity == 4  # two calls of round(1 / 0.6) = 2 items
        farm.stats.max_in_flight = 0
        _run(farm, [Work(H + "pause", {"secs": secs}) for _ in range(8)])
        assert farm.stats.max_in_flight == 4  # the farm sent no more than it holds
        _run(farm, [Work(H + "echo", i) for i in range(80)])
        assert farm.items_per_worker == 8  # short items: back to the bound
        assert sorted(farm.rooms().values()) == [8]


def test_a_ray_farm_batch_takes_one_long_item_with_short_ones_not_several(local_ray):
    """Each item counts at its handler's mean run time, and a batch takes no item that would bring it to a
    call's worth: long items (search requests, in a job) do not wait for each other's end in one call."""
    from tunefarm.farm import RayFarm

    with RayFarm(num_workers=1, worker_cpus=0, inflight_per_worker=16, metrics=False) as farm:
        _run(farm, [Work(H + "echo", i) for i in range(24)] + [Work(H + "spin", {"secs": 0.8 * BATCH_SECS})])
        assert farm._sizer.secs(H + "spin") > 2 * BATCH_SECS / 3 > farm._sizer.secs(H + "echo")
        sent = []
        real_send = farm._send
        farm._send = lambda slot, items: (sent.append([i.work.handler for i in items]), real_send(slot, items))[1]
        done = _run(farm, [Work(H + "spin", {"secs": 0.8 * BATCH_SECS}) for _ in range(3)] + [Work(H + "echo", i) for i in range(9)])
        assert len(done) == 12 and sum(len(b) for b in sent) == 12
        assert all(b.count(H + "spin") == 1 for b in sent if H + "spin" in b), sent
        assert max(len(b) for b in sent) > 1, sent  # short items still go several to a call
