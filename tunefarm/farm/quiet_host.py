"""The whole host's timing: every slot of the host measurement lock at once, so nothing else times meanwhile.

A confirmation (``tuning/confirm.py``) compares the best programs of a job with each other; a farm worker timing
a candidate beside it would inflate its rounds unevenly. Holding every slot of ``HostMeasureLock`` (the same
files every worker of the host takes one of) keeps the host's other timing loops out while it runs; building,
search and training go on. Two processes wanting the whole host queue on ``<path>.quiet`` first, so neither
holds some slots while waiting for the other's (slots are then taken in one order: no deadlock).
"""
from __future__ import annotations

import contextlib
import fcntl
import os

from .measure_lock import HostMeasureLock


def _open(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666)  # shared with other users' workers, as the slots are
    return fd


@contextlib.contextmanager
def quiet_host(lock_path: str | None = None, slots: int | None = None):
    """Hold every timing slot of this host (the farm's lock path and slot count by default) inside the block."""
    lock = HostMeasureLock(lock_path, slots)  # only for its path and slot count: the files are opened here
    fds = []
    try:
        for path in [lock.path + ".quiet"] + [lock.slot_path(k) for k in range(lock.slots)]:
            fd = _open(path)
            fds.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)  # blocks while a worker times; the kernel drops it if we die
        yield lock.slots
    finally:
        for fd in reversed(fds):
            os.close(fd)  # closing releases the flock
        lock.close()
