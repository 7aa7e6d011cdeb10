"""RayFarm on a local Ray with simulated measurements: statuses, crash/hang recovery, backpressure, recycling.

Simulated failures are real (a NULL dereference kills the actor process, a hang never returns), so what is
tested is Ray's actual behaviour with the farm's restart/kill/progress logic.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

from host_targets import not_this_host
from tunefarm.farm import MeasureInput, FarmError, MeasureStatus, RayFarm
from tunefarm.farm.measure_lock import HostMeasureLock
from tunefarm.testing.drills import worker_info
from tunefarm.testing import batch
from tunefarm.testing.simulate import SIMULATE, simulated_trace
from tunefarm.target import Target

HOST = str(Target.host())


def measure(farm, cands):
    """The candidates measured by the simulated handler (a batch of ``tunefarm.testing.batch``)."""
    return batch.measure(farm, cands, SIMULATE)


def submit(farm, cands):
    return batch.submit(farm, cands, SIMULATE)

pytestmark = pytest.mark.timeout(300)  # a farm bug must fail the test, not hang CI


def sim(behavior="ok", timeout_s=5.0, **kw) -> MeasureInput:
    return MeasureInput("sim-workload", {}, simulated_trace(behavior, **kw), HOST, timeout_s=timeout_s, repeat=2,
                     task="sim")


@pytest.fixture(scope="module")
def farm(local_ray, lock_path):
    with RayFarm(lock_path=lock_path) as f:
        yield f


def test_farm_uses_every_cpu_and_reports_the_host_target(farm):
    assert farm.num_workers == 2
    assert farm.target == Target.host()
    infos = worker_info(farm)
    assert len({i["pid"] for i in infos}) == 2


def test_each_failure_becomes_its_status_and_the_actors_come_back(farm):
    cands = ([sim("ok", build_secs=0.02)] * 3 + [sim("segfault"), sim("hang", timeout_s=1.0), sim("raise"),
             sim("wrong"), sim("build_error")] + [sim("ok")] * 4)
    before = farm.stats.worker_lost, farm.stats.timeouts
    results = measure(farm, cands)
    expected = (["ok"] * 3 + ["worker_lost", "timeout", "run_error", "wrong_result", "build_error"] + ["ok"] * 4)
    assert [r.status.value for r in results] == expected
    assert "budget" in results[4].error
    assert all(r.host for r in results)
    assert (farm.stats.worker_lost, farm.stats.timeouts) == (before[0] + 1, before[1] + 1)
    # a crasher ran once: the segfault did not take a second actor down
    assert farm.num_workers == 2
    assert [r.status for r in measure(farm, [sim("ok")] * 6)] == [MeasureStatus.OK] * 6


def test_backpressure_bounds_work_in_flight(farm):
    assert farm.wait_ready() == 2  # the actors restarted after the previous test's crash and kill
    farm.stats.max_in_flight = 0
    n = farm.num_workers * farm.inflight_per_worker + 20  # more than the farm holds
    results = dict(submit(farm, [sim("ok", build_secs=0.005)] * n))
    assert sorted(results) == list(range(n)) and all(r.ok for r in results.values())
    assert farm.stats.max_in_flight == farm.num_workers * farm.inflight_per_worker


def test_an_abandoned_batch_does_not_leak_into_the_next(farm):
    it = submit(farm, [sim("ok", build_secs=0.05)] + [sim("ok", build_secs=1.0)] * 3)
    next(it)
    it.close()  # the consumer stops with trials still running
    results = measure(farm, [sim("raise")] * 4)
    assert [r.status for r in results] == [MeasureStatus.RUN_ERROR] * 4
    assert farm.wait_ready() == 2


def test_lock_wait_is_not_charged_to_the_trial(farm, lock_path):
    blocker = HostMeasureLock(lock_path)
    blocker.acquire()
    threading.Timer(2.5, blocker.release).start()
    t0 = time.monotonic()
    results = measure(farm, [sim("ok", timeout_s=0.5)] * 2)
    assert time.monotonic() - t0 >= 2.0
    assert [r.status for r in results] == [MeasureStatus.OK] * 2, [r.error for r in results]
    blocker.close()


def test_a_second_farm_is_told_the_cpus_are_held(farm):
    # the module's farm holds both CPUs for its lifetime (Ray actors keep what they reserve)
    with pytest.raises(FarmError, match="held by other actors"):
        RayFarm(resource_wait_s=0.5)


def test_recycling_and_two_calls_in_flight_per_worker(farm, lock_path):
    # worker_cpus=0: this farm's actor reserves no CPU, so it can live next to the module's farm
    with RayFarm(lock_path=lock_path, num_workers=1, max_compiles=3, worker_cpus=0,
                 inflight_per_worker=2, metrics=False) as farm:
        first = worker_info(farm)[0]["pid"]
        results = measure(farm, [sim("ok")] * 5)
        assert all(r.ok for r in results)
        assert farm.stats.workers_recycled == 1
        assert farm.wait_ready() == 1 and worker_info(farm)[0]["pid"] != first
        assert farm.stats.max_in_flight == 2
        # a crash with a second call queued behind it: the queued one is re-run, not blamed
        results = measure(farm, [sim("segfault"), sim("ok"), sim("ok")])
        assert [r.status.value for r in results] == ["worker_lost", "ok", "ok"]


def test_a_long_value_comes_back_whole(farm):
    """Values over ``PACK_ABOVE`` characters travel compressed (a search reply is some 120 KB): the driver gets
    the same value, and the worker's journal keeps it as text."""
    from tunefarm.farm import Work
    from tunefarm.farm.ray_worker import PACK_ABOVE

    text = "".join(f"{i:07d}," for i in range(3 * PACK_ABOVE // 8))  # compressible, as trace text is
    tickets = {farm.put(Work("tunefarm.testing.handlers:echo", {"text": text, "k": k})): k for k in range(3)}
    done = []
    while len(done) < 3:
        done += farm.poll(60)
    assert {tickets[d.ticket]: d.value["payload"] for d in done} == {k: {"text": text, "k": k} for k in range(3)}
    journals = [i["journal"] for i in worker_info(farm)]
    assert any(text in json.dumps(j) for j in journals)


def test_a_reply_lost_with_its_worker_is_recovered_from_the_journal(farm, lock_path):
    # lost_reply: measured and journalled, then the process dies before Ray sends the reply (what a crash of
    # the next queued trial can do to it); the restarted actor's journal gives the result back
    with RayFarm(lock_path=lock_path, num_workers=1, worker_cpus=0, metrics=False) as f:
        assert f.inflight_per_worker == 32
        cands = [sim("lost_reply", run_secs=0.003), sim("ok"), sim("segfault"), sim("ok"),
                 sim("lost_reply", run_secs=0.003), sim("segfault")]
        results = measure(f, cands)
        assert [r.status.value for r in results] == ["ok", "ok", "worker_lost", "ok", "ok", "worker_lost"], \
            [r.error for r in results]
        assert results[0].run_secs == [0.003, 0.003] and results[4].run_secs == [0.003, 0.003]
        # both lost replies come back from the journal; an "ok" item whose reply was still being sent when the
        # next item's segfault killed the process may come back the same way (it ran; it is not re-run)
        assert 2 <= f.stats.recovered <= 4
        assert (f.stats.worker_lost, f.stats.requeued) == (2, 0)
        assert f.stats.completed == len(cands)


def test_a_target_no_node_has_is_refused(local_ray):
    with pytest.raises(FarmError, match="no node has the CPU"):
        RayFarm(target=not_this_host())
    with pytest.raises(ValueError, match="num_workers"):
        RayFarm(num_workers=0)


def test_real_candidates_on_ray_workers(farm, lock_path):
    """Real replay/build/check/time on Ray actors, including a real segfault and a real hang."""
    import farm_programs as fp
    from tunefarm.ir.serialize import to_json

    mm = fp.matmul_func(32)
    cands = [fp.candidate(mm, fp.tiled_trace(mm)),
             fp.candidate(fp.add_func(), fp.tiled_trace(mm)),
             fp.candidate(fp.wrong_matmul_func(32), reference_json=to_json(mm)),
             fp.candidate(fp.oob_func()),
             fp.candidate(fp.hang_func(), timeout_s=3.0),
             fp.candidate(mm, fp.tiled_trace(mm, (None, 4)))]
    # worker_cpus=0: next to the module's simulated farm, which holds the CPUs
    with RayFarm(lock_path=lock_path, num_workers=2, worker_cpus=0, metrics=False) as real:
        results = batch.measure(real, cands)
        assert [r.status.value for r in results] == ["ok", "build_error", "wrong_result", "worker_lost",
                                                     "timeout", "ok"], [r.error for r in results]
        assert results[0].run_secs and results[0].build_secs > 0
        assert real.num_workers == 2


def test_workers_that_cannot_start_are_a_clear_farm_error(farm, tmp_path):
    bad = str(tmp_path / "no-such-dir" / "lock")
    with pytest.raises(FarmError, match="no measurement worker started.*measurement lock file.*no-such-dir"):
        RayFarm(lock_path=bad, num_workers=1, worker_cpus=0, start_timeout_s=60)


def test_a_frozen_worker_is_charged_for_the_item_it_runs_not_for_the_one_the_driver_last_saw(local_ray, tmp_path):
    """Two items in one actor call: the first finishes (its reply travels with the call's), the second starts,
    and the worker is stopped before a progress query tells the driver. The farm kills the silent worker
    believing the first runs; the restarted actor's journal says the first finished (its result is kept, it is
    not run again) and the second was running: that one is the timeout."""
    import os
    import signal

    from tunefarm.farm import DoneStatus, Work

    ran = tmp_path / "ran.txt"
    with RayFarm(num_workers=1, worker_cpus=0, metrics=False, inflight_per_worker=4, progress_timeout_s=3.0) as f:
        f.put(Work("tunefarm.testing.handlers:echo", {}, timeout_s=60))
        while not f.poll(1.0):
            pass  # the actor is up
        pid = worker_info(f)[0]["pid"]
        # the actor is sent one call, and the two items put meanwhile go together in its next one
        f.put(Work("tunefarm.testing.handlers:tally", {"path": str(ran), "tag": "before", "secs": 0.2},
                   timeout_s=60))
        first = f.put(Work("tunefarm.testing.handlers:tally", {"path": str(ran), "tag": "first", "secs": 0.2},
                           timeout_s=60))
        second = f.put(Work("tunefarm.testing.handlers:tally", {"path": str(ran), "tag": "second", "secs": 60},
                            timeout_s=60))
        got, deadline = {}, time.monotonic() + 60
        while "second" not in (ran.read_text() if ran.exists() else "") and time.monotonic() < deadline:
            got.update((d.ticket, d) for d in f.poll(0.005))
        os.kill(pid, signal.SIGSTOP)  # the first finished; the driver has heard of neither
        try:
            assert first not in got, "the call's reply came before the second item ended"
            while len(got) < 3 and time.monotonic() < deadline:
                got.update((d.ticket, d) for d in f.poll(1.0))
        finally:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert got[first].status is DoneStatus.OK and got[first].value["start"] > 0
        assert got[second].status is DoneStatus.TIMEOUT and "stopped answering" in got[second].error
        assert ran.read_text().split() == ["before", "first", "second"]  # none ran again
        assert f.stats.recovered == 1
