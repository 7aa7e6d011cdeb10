"""``quiet_host``: while a confirmation holds the whole host, no worker of it can take a timing slot."""
from __future__ import annotations

import multiprocessing
import threading

from tunefarm.farm.measure_lock import HostMeasureLock
from tunefarm.farm.quiet_host import quiet_host


def _try_in_another_process(path: str, slots: int, out) -> None:
    out.put(HostMeasureLock(path, slots).try_acquire())


def _another_process_can_time(path: str, slots: int) -> bool:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    p = ctx.Process(target=_try_in_another_process, args=(path, slots, out))
    p.start()
    got = out.get(timeout=60)
    p.join(60)
    return got


def test_every_slot_is_held_inside_and_free_after(tmp_path):
    path = str(tmp_path / "measure.lock")
    for slots in (1, 3):
        with quiet_host(path, slots) as held:
            assert held == slots
            assert not HostMeasureLock(path, slots).try_acquire()  # another descriptor of this process
            assert not _another_process_can_time(path, slots)
        assert _another_process_can_time(path, slots)


def test_a_quiet_host_waits_for_a_timing_loop_in_progress(tmp_path):
    path = str(tmp_path / "measure.lock")
    worker = HostMeasureLock(path, 2)
    assert worker.try_acquire()
    done = []

    def confirm():
        with quiet_host(path, 2) as held:
            done.append(held)  # every slot, once the worker's was free

    t = threading.Thread(target=confirm)
    t.start()
    t.join(0.3)
    assert t.is_alive() and not done  # still waiting for the worker's slot
    worker.release()
    t.join(30)
    assert done == [2]
