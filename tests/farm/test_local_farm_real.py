"""LocalFarm with real candidates: replay, LLVM build, check against the unscheduled program, timing; and
programs that really crash (out-of-bounds read in JIT code) or hang (10**12 iterations)."""
from __future__ import annotations

import time

import pytest

from farm_programs import (add_func, candidate, hang_func, matmul_func, oob_func, tiled_trace,
                           wrong_matmul_func)
from tunefarm.farm import LocalFarm, MeasureStatus
from tunefarm.ir.serialize import to_json
from tunefarm.testing import batch


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    with LocalFarm(num_workers=2, lock_path=str(tmp_path_factory.mktemp("lock") / "lock")) as f:
        yield f


def test_every_status_from_real_programs_in_one_batch(farm):
    mm = matmul_func(32)
    cands = [
        candidate(mm, tiled_trace(mm)),                                         # ok
        candidate(add_func(), tiled_trace(mm)),                                 # build_error (ScheduleError)
        candidate(wrong_matmul_func(32), reference_json=to_json(mm)),           # wrong_result
        candidate(oob_func()),                                                  # worker_lost (SIGSEGV)
        candidate(hang_func(), timeout_s=3.0),                                  # timeout
        candidate(mm, tiled_trace(mm, (None, 4))),                              # ok, after the faults
        candidate(mm),                                                          # ok, unscheduled
    ]
    t0 = time.monotonic()
    results = batch.measure(farm, cands)
    elapsed = time.monotonic() - t0
    assert [r.status.value for r in results] == ["ok", "build_error", "wrong_result", "worker_lost", "timeout",
                                                 "ok", "ok"], [r.error for r in results]
    assert "no block named 'C'" in results[1].error
    assert "SIGSEGV" in results[3].error
    assert "3 s budget" in results[4].error
    assert all(r.host for r in results)
    assert all(r.build_secs > 0 for r in results if r.ok)
    assert elapsed < 60
    # the tiled and the naive program both ran; their latencies are real numbers
    assert all(0 < s < 0.05 for r in (results[0], results[5], results[6]) for s in r.run_secs)


def test_pool_keeps_measuring_after_crashes(farm):
    mm = matmul_func(16)
    results = batch.measure(farm, [candidate(oob_func()), candidate(mm), candidate(oob_func()), candidate(mm)])
    assert [r.status for r in results] == [MeasureStatus.WORKER_LOST, MeasureStatus.OK,
                                           MeasureStatus.WORKER_LOST, MeasureStatus.OK]
