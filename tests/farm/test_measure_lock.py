"""The per-host measurement lock: exclusive across processes, released when its holder dies."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tunefarm.farm.measure_lock import HostMeasureLock

HOLDER = textwrap.dedent("""
    import sys, time
    from tunefarm.farm.measure_lock import HostMeasureLock
    path, hold, rounds, log = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    lock = HostMeasureLock(path)
    for _ in range(rounds):
        with lock:
            start = time.monotonic()
            time.sleep(hold)
            end = time.monotonic()
        with open(log, "a") as f:
            f.write(f"{start} {end}\\n")
        time.sleep(0.001)
""")


def test_holders_in_different_processes_never_overlap(tmp_path):
    lock, log = str(tmp_path / "m.lock"), str(tmp_path / "log")
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, lock, "0.02", "8", log]) for _ in range(3)]
    for p in procs:
        assert p.wait(60) == 0
    spans = sorted(tuple(map(float, line.split())) for line in open(log))
    assert len(spans) == 24
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s1 >= e0, f"timings overlapped: {(s0, e0)} and {(s1, e1)}"


def test_lock_of_a_killed_holder_is_released(tmp_path):
    path = str(tmp_path / "m.lock")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path, "3600", "1", str(tmp_path / "log")])
    mine = HostMeasureLock(path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until the child holds it
        try:
            mine.acquire(timeout=0)
            mine.release()
            time.sleep(0.05)
        except TimeoutError:
            break
    else:
        pytest.fail("the child never took the lock")
    with pytest.raises(TimeoutError, match="not acquired"):
        mine.acquire(timeout=0.1)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(10)
    waited = mine.acquire(timeout=10)
    assert mine.held and waited < 10
    mine.release()
    mine.close()


def test_two_lock_objects_in_one_process_exclude_each_other(tmp_path):
    a, b = HostMeasureLock(str(tmp_path / "x")), HostMeasureLock(str(tmp_path / "x"))
    with a:
        with pytest.raises(TimeoutError):
            b.acquire(timeout=0.05)
    assert b.acquire(timeout=1) < 1
    b.release()
    with pytest.raises(RuntimeError, match="not held"):
        b.release()
    a.close()
    b.close()
