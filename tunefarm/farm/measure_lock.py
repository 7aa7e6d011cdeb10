"""The per-host measurement lock: at most ``slots`` timing loops run at once on one machine (default: one per
four physical cores on hosts of 8 or more, else one).

Building (replay, lowering, LLVM) runs on every core at once, but two timing loops running side by side share
caches, memory bandwidth and turbo budget and disturb each other's numbers. Every worker on a host therefore
takes the lock around its timing loop.

Timing slots: the number of timing loops a host lets run at once is a per-host setting,
``TUNEFARM_TIMING_SLOTS`` in the environment of the measuring processes; a farm's ``timing_slots`` argument sets
it for its workers. Every process measuring on a host must use the same number, so the default is decided by
the host alone (``default_timing_slots``): one slot per four physical cores on a host of 8 or more physical
cores, else 1. Why, measured with ``benchmarks/bench_label_noise.py --neighbours K`` (programs of one job,
three shuffled sessions, K other processes timing kernels on other cores meanwhile) on a 16-core Xeon:

    K other timing loops   matmul 128^3: sessions agree / agree with K=0 / slow-down   matmul 512^3: same
    0                      0.963 / -     / -                                           0.892 / -     / -
    3                      0.944 / 0.950 / 1.04x                                       0.886 / 0.890 / 0.97x
    7                      0.924 / 0.938 / 1.25x                                       0.887 / 0.907 / 1.02x
    13                     0.926 / 0.941 / 1.08x                                       0.918 / 0.899 / 1.47x

Rankings barely move even at 13 neighbours, but absolute times inflate by up to 1.5x from 8 timing loops on;
four loops (K=3) on 16 cores cost about 4% and keep the labels as consistent as one host's sessions are with
each other. On a 2-core VM a second loop did no harm either (pairs ordered alike 0.91-0.94 with a neighbour,
0.90-0.93 alone), but a small host has little to gain and one noisy neighbour less is worth more there, so
hosts under 8 physical cores keep 1. Re-check a host of your own with the same benchmark.
Slot 0 is the lock file itself and slot ``k`` the file
``<path>.<k>``; with several slots a waiter takes the first free one, and waiters queue on ``<path>.gate`` so
that only one of them at a time looks for a slot that frees up.

Why ``fcntl.flock`` on a file:
- it is one lock per *host*, shared by every process that opens the same path: LocalFarm workers, Ray actors
  of any number of Ray "nodes" started on the same machine, even two users' jobs (the file is made
  world-writable when we create it);
- the kernel releases it when the holder's file descriptor closes, which includes the holder dying by a
  segfault or SIGKILL. A lock expressed as "a file exists" or a semaphore would stay held by a dead worker and
  stall the host; flock cannot go stale;
- with one slot it is blocking without polling, and costs a couple of system calls per acquisition.

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
SLOTS_ENV_VAR = "TUNEFARM_TIMING_SLOTS"
_POLL_S = 0.001  # how often a waiter with a timeout, or the one waiter of a many-slot lock, looks again


def default_lock_path() -> str:
    """``$TUNEFARM_MEASURE_LOCK`` or ``<tmp>/tunefarm-measure.lock`` (the same path for every user)."""
    return os.environ.get(ENV_VAR) or os.path.join(tempfile.gettempdir(), "tunefarm-measure.lock")


def physical_cores(cpuinfo: str | None = None) -> int:
    """Physical cores of this machine (distinct package and core ids in ``/proc/cpuinfo``; logical CPUs where
    it says nothing): the machine's, not this process's affinity, so every process on the host agrees."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    cores, package, logical = set(), "", 0
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "processor":
            logical += 1
        elif key == "physical id":
            package = value.strip()
        elif key == "core id":
            cores.add((package, value.strip()))
    return len(cores) or logical or os.cpu_count() or 1


def slots_for(physical: int) -> int:
    """The default timing slots of a host with ``physical`` cores (see the module doc)."""
    return physical // 4 if physical >= 8 else 1


def default_timing_slots() -> int:
    return slots_for(physical_cores())


def timing_slots(value: int | None = None) -> int:
    """``value``, else ``$TUNEFARM_TIMING_SLOTS``, else the host's default: how many timing loops may run at
    once on this host."""
    raw = value if value is not None else os.environ.get(SLOTS_ENV_VAR) or default_timing_slots()
    try:
        n = int(raw) if not isinstance(raw, (bool, float)) else -1
    except ValueError:
        n = -1
    if n < 1:
        raise ValueError(f"timing slots ({SLOTS_ENV_VAR}) must be an integer >= 1, got {raw!r}")
    return n


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
    """A crash-safe lock with ``slots`` slots shared by all measuring processes of this host.

    ``slots``: None reads ``$TUNEFARM_TIMING_SLOTS`` (default: ``default_timing_slots()``). Use as a context manager around the timing
    loop. ``acquire`` returns the seconds spent waiting.
    """

    def __init__(self, path: str | None = None, slots: int | None = None):
        self.path = path or default_lock_path()
        self.slots = timing_slots(slots)
        self._fds: dict[str, int] = {}
        self._held: str | None = None  # path of the slot file we hold

    def slot_path(self, k: int) -> str:
        return self.path if k == 0 else f"{self.path}.{k}"

    def open(self) -> "HostMeasureLock":
        """Open the lock files now (workers do it at start-up, so a bad path fails early and clearly)."""
        for k in range(self.slots):
            self._fd(self.slot_path(k))
        if self.slots > 1:
            self._fd(self.path + ".gate")
        return self

    def _fd(self, path: str) -> int:
        fd = self._fds.get(path)
        if fd is None:
            try:
                fd = self._fds[path] = _open_lock_file(path)
            except OSError as e:
                raise OSError(f"cannot open the host measurement lock file {path!r}: {e.strerror}") from None
        return fd

    def _try(self, path: str) -> bool:
        try:
            fcntl.flock(self._fd(path), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _take(self, path: str, deadline: float | None) -> bool:
        """Lock ``path``: blocking in the kernel without a deadline, else polling until it passes."""
        if deadline is None:
            fcntl.flock(self._fd(path), fcntl.LOCK_EX)
            return True
        while not self._try(path):
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
        return True

    def _take_free_slot(self, deadline: float | None) -> str | None:
        """The first free slot, waiting for one (as the only waiter: the caller holds the gate)."""
        while True:
            for k in range(self.slots):
                if self._try(self.slot_path(k)):
                    return self.slot_path(k)
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(_POLL_S)

    def try_acquire(self) -> bool:
        """Take a free slot if there is one now, without waiting (a worker then need not report a pause)."""
        if self._held is not None:
            raise RuntimeError(f"measure lock {self.path} is already held by this object")
        paths = [self.path] if self.slots == 1 else [self.slot_path(k) for k in range(self.slots)]
        self._held = next((p for p in paths if self._try(p)), None)
        return self._held is not None

    def acquire(self, timeout: float | None = None) -> float:
        """Block until a slot is ours; with ``timeout``, raise ``TimeoutError`` after that many seconds."""
        if self._held is not None:
            raise RuntimeError(f"measure lock {self.path} is already held by this object")
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        if self.slots == 1:
            held = self.path if self._take(self.path, deadline) else None
        else:
            held = next((self.slot_path(k) for k in range(self.slots) if self._try(self.slot_path(k))), None)
            gate = self.path + ".gate"
            if held is None and self._take(gate, deadline):
                try:
                    held = self._take_free_slot(deadline)
                finally:
                    fcntl.flock(self._fd(gate), fcntl.LOCK_UN)
        if held is None:
            raise TimeoutError(f"measure lock {self.path} not acquired within {timeout} s")
        self._held = held
        return time.monotonic() - start

    def release(self) -> None:
        if self._held is None:
            raise RuntimeError(f"measure lock {self.path} is not held")
        fcntl.flock(self._fds[self._held], fcntl.LOCK_UN)
        self._held = None

    @property
    def held(self) -> bool:
        return self._held is not None

    def close(self) -> None:
        """Release (if held) and close the descriptors."""
        for fd in self._fds.values():
            os.close(fd)  # closing drops the flock too
        self._fds = {}
        self._held = None

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
