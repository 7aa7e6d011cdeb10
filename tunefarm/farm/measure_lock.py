"""The per-host measurement lock: timings on one machine never overlap.

Building (replay, lowering, LLVM) runs on every core at once, but two timing loops running side by side share
caches, memory bandwidth and turbo budget and disturb each other's numbers. Every worker on a host therefore
takes one exclusive lock around its timing loop.

Why ``fcntl.flock`` on a file:
- it is one lock per *host*, shared by every process that opens the same path: LocalFarm workers, Ray actors
  of any number of Ray "nodes" started on the same machine, even two users' jobs (the file is made
  world-writable when we create it);
- the kernel releases it when the holder's file descriptor closes, which includes the holder dying by a
  segfault or SIGKILL. A lock expressed as "a file exists" or a semaphore would stay held by a dead worker and
  stall the host; flock cannot go stale;
- it is blocking without polling, and costs a couple of system calls per acquisition.

The lock belongs to an open file description, so each ``HostMeasureLock`` opens its own descriptor: two
threads or two objects in one process also exclude each other. Processes started with ``spawn`` do not inherit
descriptors, so a child never shares its parent's lock by accident.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
import time

ENV_VAR = "TUNEFARM_MEASURE_LOCK"


def default_lock_path() -> str:
    """``$TUNEFARM_MEASURE_LOCK`` or ``<tmp>/tunefarm-measure.lock`` (the same path for every user)."""
    return os.environ.get(ENV_VAR) or os.path.join(tempfile.gettempdir(), "tunefarm-measure.lock")


def _open_lock_file(path: str) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        # another user's lock file we may not open read-write: a read-only descriptor can still hold flock
        fd = os.open(path, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o666)  # let other users' workers on this host share the lock
    except OSError:
        pass
    return fd


class HostMeasureLock:
    """An exclusive, crash-safe lock shared by all measuring processes of this host.

    Use as a context manager around the timing loop. ``acquire`` returns the seconds spent waiting.
    """

    def __init__(self, path: str | None = None):
        self.path = path or default_lock_path()
        self._fd: int | None = None
        self._held = False

    def open(self) -> "HostMeasureLock":
        """Open the lock file now (workers do it at start-up, so a bad path fails early and clearly)."""
        self._ensure_open()
        return self

    def _ensure_open(self) -> int:
        if self._fd is None:
            try:
                self._fd = _open_lock_file(self.path)
            except OSError as e:
                raise OSError(f"cannot open the host measurement lock file {self.path!r}: {e.strerror}") from None
        return self._fd

    def acquire(self, timeout: float | None = None) -> float:
        """Block until the lock is ours; with ``timeout``, raise ``TimeoutError`` after that many seconds."""
        if self._held:
            raise RuntimeError(f"measure lock {self.path} is already held by this object")
        fd = self._ensure_open()
        start = time.monotonic()
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() - start >= timeout:
                        raise TimeoutError(f"measure lock {self.path} not acquired within {timeout} s") from None
                    time.sleep(0.001)
        self._held = True
        return time.monotonic() - start

    def release(self) -> None:
        if not self._held:
            raise RuntimeError(f"measure lock {self.path} is not held")
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def close(self) -> None:
        """Release (if held) and close the descriptor."""
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock too
            self._fd = None
            self._held = False

    def __enter__(self) -> "HostMeasureLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self):  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
