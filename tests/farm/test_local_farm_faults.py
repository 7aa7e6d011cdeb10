"""LocalFarm process isolation with simulated measurements: every failure status, crashes, hangs, recycling.

The simulated measure handler (tunefarm/testing/simulate.py) fails for real: ``segfault`` dereferences NULL in
the worker process, ``hang`` never returns. The farm machinery around it is the production one.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from host_targets import not_this_host
from tunefarm.farm import MeasureInput, FarmError, LocalFarm, MeasureStatus
from tunefarm.farm.measure_lock import HostMeasureLock
from tunefarm.testing import batch
from tunefarm.testing.simulate import SIMULATE, simulated_trace
from tunefarm.target import Target

HOST = str(Target.host())


def measure(farm, cands):
    """The candidates measured by the simulated handler (a batch of ``tunefarm.testing.batch``)."""
    return batch.measure(farm, cands, SIMULATE)


def submit(farm, cands):
    return batch.submit(farm, cands, SIMULATE)


def sim(behavior="ok", timeout_s=5.0, **kw) -> MeasureInput:
    return MeasureInput("sim-workload", {}, simulated_trace(behavior, **kw), HOST, timeout_s=timeout_s, repeat=2)


@pytest.fixture
def farm(tmp_path):
    with LocalFarm(num_workers=2, lock_path=str(tmp_path / "lock")) as f:
        yield f


def test_each_failure_becomes_its_status_and_the_pool_goes_on(farm):
    cands = ([sim("ok", build_secs=0.02)] * 3 + [sim("segfault"), sim("hang", timeout_s=1.0), sim("raise"),
             sim("wrong"), sim("build_error")] + [sim("ok")] * 4)
    t0 = time.monotonic()
    results = measure(farm, cands)
    assert time.monotonic() - t0 < 30
    expected = (["ok"] * 3 + ["worker_lost", "timeout", "run_error", "wrong_result", "build_error"] + ["ok"] * 4)
    assert [r.status.value for r in results] == expected
    assert "SIGSEGV" in results[3].error
    assert "1 s budget" in results[4].error
    assert all(r.host for r in results)
    ok = results[0]
    assert ok.run_secs == [1e-4, 1e-4] and ok.build_secs >= 0.02
    assert farm.stats.worker_lost == 1 and farm.stats.timeouts == 1
    assert farm.stats.completed == len(cands)
    # the two dead workers were replaced; a second batch runs on the fresh pool
    assert [r.status for r in measure(farm, [sim("ok")] * 4)] == [MeasureStatus.OK] * 4
    assert len(farm.worker_pids) == 2


def test_results_stream_in_completion_order(farm):
    cands = [sim("ok", build_secs=1.0)] + [sim("ok", build_secs=0.01)] * 5
    order = [i for i, _ in submit(farm, cands)]
    assert sorted(order) == list(range(6))
    assert order[-1] == 0, "the slow candidate should finish last while the other worker streams the rest"


def test_lock_wait_is_not_charged_to_the_trial(tmp_path):
    path = str(tmp_path / "lock")
    blocker = HostMeasureLock(path)
    with LocalFarm(num_workers=1, lock_path=path) as farm:
        measure(farm, [sim("ok")])  # worker up
        blocker.acquire()
        it = submit(farm, [sim("ok", timeout_s=0.5)])
        time.sleep(0.01)
        # hold the lock for three times the trial's budget while the trial waits for it
        import threading
        threading.Timer(1.5, blocker.release).start()
        t0 = time.monotonic()
        (i, r), = list(it)
        assert r.status is MeasureStatus.OK, r.error
        assert time.monotonic() - t0 >= 1.3


def test_waiting_longer_than_the_pause_limit_is_a_timeout(tmp_path):
    path = str(tmp_path / "lock")
    blocker = HostMeasureLock(path)
    with LocalFarm(num_workers=1, lock_path=path, pause_limit_s=0.5) as farm:
        measure(farm, [sim("ok")])
        blocker.acquire()
        try:
            (r,) = measure(farm, [sim("ok", timeout_s=5)])
        finally:
            blocker.release()
        assert r.status is MeasureStatus.TIMEOUT and "measurement lock" in r.error


def test_workers_recycle_after_max_compiles(tmp_path):
    with LocalFarm(num_workers=1, lock_path=str(tmp_path / "l"), max_compiles=3) as farm:
        for _ in range(3):
            assert all(r.ok for r in measure(farm, [sim("ok")] * 3))
        # each worker retired after its 3rd build; a fresh one is started when the next batch comes
        assert farm.stats.workers_recycled == 3
        assert farm.stats.workers_started == 3
        assert all(r.ok for r in measure(farm, [sim("ok")]))
        assert farm.stats.workers_started == 4


def test_external_sigkill_of_a_busy_worker_is_worker_lost(farm):
    measure(farm, [sim("ok")] * 2)
    cands = [sim("ok", build_secs=3.0)] + [sim("ok")] * 3
    it = submit(farm, cands)
    time.sleep(0.5)  # candidate 0 occupies one worker for 3 s; kill both workers, one is busy with it
    first_pids = list(farm.worker_pids)
    for pid in first_pids:
        os.kill(pid, signal.SIGKILL)
    results = dict(it)
    assert sorted(results) == [0, 1, 2, 3]
    lost = [i for i, r in results.items() if r.status is MeasureStatus.WORKER_LOST]
    assert 0 in lost and len(lost) <= 2
    assert all(results[i].ok for i in results if i not in lost)
    assert not set(first_pids) & set(farm.worker_pids)


def test_abandoned_batch_does_not_leak_into_the_next(farm):
    it = submit(farm, [sim("ok", build_secs=0.5, run_secs=0.0)] * 2 + [sim("ok")] * 4)
    next(it)
    it.close()  # the consumer stops early: busy workers are stopped
    results = measure(farm, [sim("raise")] * 3)
    assert [r.status for r in results] == [MeasureStatus.RUN_ERROR] * 3


def test_bad_input_is_refused_up_front(farm):
    assert measure(farm, []) == []
    with pytest.raises(TypeError, match="MeasureInput"):
        measure(farm, [{"workload_key": "k"}])
    other = MeasureInput("k", {}, simulated_trace(), not_this_host())
    with pytest.raises(ValueError, match="different CPU"):
        measure(farm, [other])
    with pytest.raises(ValueError, match="num_workers"):
        LocalFarm(num_workers=0)
    with pytest.raises(ValueError, match="handler"):
        batch.measure(farm, [sim()], "os:system")
    farm.close()
    with pytest.raises(FarmError, match="closed"):
        measure(farm, [sim()])


def test_a_script_without_main_guard_can_use_the_farm(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(f"""
        from tunefarm.farm import MeasureInput, LocalFarm
        from tunefarm.testing import batch
        from tunefarm.testing.simulate import SIMULATE, simulated_trace
        farm = LocalFarm(num_workers=2, lock_path={str(tmp_path / 'l')!r})
        res = batch.measure(farm, [MeasureInput("k", {{}}, simulated_trace(), {HOST!r})] * 3, SIMULATE)
        farm.close()
        print("STATUSES", [r.status.value for r in res])
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "STATUSES ['ok', 'ok', 'ok']" in out.stdout


def test_workers_that_cannot_start_are_a_clear_farm_error(tmp_path):
    bad = str(tmp_path / "no-such-dir" / "lock")
    with LocalFarm(num_workers=1, lock_path=bad) as farm:
        with pytest.raises(FarmError, match="fail to start.*measurement lock file.*no-such-dir"):
            measure(farm, [sim("ok")])
