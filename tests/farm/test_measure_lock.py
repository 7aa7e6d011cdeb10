"""The per-host measurement lock: exclusive across processes, released when its holder dies."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tunefarm.farm.measure_lock import HostMeasureLock, default_timing_slots, physical_cores, slots_for

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


def _max_overlap(spans) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def test_two_timing_slots_let_two_holders_overlap_and_never_three(tmp_path):
    lock, log = str(tmp_path / "m.lock"), str(tmp_path / "log")
    env = dict(os.environ, TUNEFARM_TIMING_SLOTS="2")
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, lock, "0.1", "6", log], env=env) for _ in range(3)]
    for p in procs:
        assert p.wait(60) == 0
    spans = [tuple(map(float, line.split())) for line in open(log)]
    assert len(spans) == 18
    assert _max_overlap(spans) == 2, sorted(spans)


def test_a_lock_with_two_slots_in_one_process(tmp_path):
    path = str(tmp_path / "x")
    a, b, c = (HostMeasureLock(path, slots=2) for _ in range(3))
    assert a.slots == 2
    a.acquire()
    assert b.acquire(timeout=1) < 1  # the second slot is free
    with pytest.raises(TimeoutError, match="not acquired"):
        c.acquire(timeout=0.1)
    # a one-slot lock on the same path is slot 0: held by a
    with pytest.raises(TimeoutError):
        HostMeasureLock(path, slots=1).acquire(timeout=0.05)
    b.release()
    assert c.acquire(timeout=1) < 1 and c.held
    for lk in (a, b, c):
        lk.close()


def test_timing_slots_come_from_the_environment_and_bad_values_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEFARM_TIMING_SLOTS", "3")
    assert HostMeasureLock(str(tmp_path / "x")).slots == 3
    assert HostMeasureLock(str(tmp_path / "x"), slots=1).slots == 1
    monkeypatch.setenv("TUNEFARM_TIMING_SLOTS", "many")
    with pytest.raises(ValueError, match="TUNEFARM_TIMING_SLOTS.*'many'"):
        HostMeasureLock(str(tmp_path / "x"))
    monkeypatch.delenv("TUNEFARM_TIMING_SLOTS")
    assert HostMeasureLock(str(tmp_path / "x")).slots == default_timing_slots()
    with pytest.raises(ValueError, match=">= 1"):
        HostMeasureLock(str(tmp_path / "x"), slots=0)
    from tunefarm.farm import LocalFarm

    with pytest.raises(ValueError, match="timing slots"):
        LocalFarm(num_workers=1, timing_slots=0)


def _cpuinfo(packages: int, cores: int, threads: int) -> str:
    out, n = [], 0
    for p in range(packages):
        for c in range(cores):
            for _ in range(threads):
                out.append(f"processor\t: {n}\nphysical id\t: {p}\ncore id\t\t: {c}\n")
                n += 1
    return "\n".join(out)


def test_the_default_timing_slots_are_one_per_four_physical_cores_from_eight_cores_on():
    assert physical_cores(_cpuinfo(1, 16, 2)) == 16  # hyper-threads are not cores
    assert physical_cores(_cpuinfo(2, 8, 2)) == 16   # core ids repeat per package
    assert physical_cores("processor : 0\nprocessor : 1\n") == 2  # no topology: logical CPUs
    assert [slots_for(n) for n in (1, 2, 4, 7, 8, 12, 16, 64)] == [1, 1, 1, 1, 2, 3, 4, 16]
    assert default_timing_slots() == slots_for(physical_cores())
