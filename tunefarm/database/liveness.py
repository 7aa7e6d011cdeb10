"""Whether a job's driver is still alive, from what the jobs table records about it.

A job row says ``running`` until its driver calls ``finish_job``; a driver killed by SIGKILL, the OOM killer
or a full disk never does. So every reader decides for itself, from the row:

* ``status`` is not ``running``: the job ended (``finished``, ``failed``, ...); that status is shown.
* ``killed``: the driver ran in this process space (same kernel boot and PID namespace, ``pid_space``) and
  its process is gone (no such pid, a zombie, or the pid now belongs to a process started at another time:
  ``pid_start``, in clock ticks after boot, tells a reused pid apart).
* ``stale``: the driver cannot be checked from here (another host, another container, or a job written
  before jobs recorded their process) and its last sign of life (``heartbeat_us``, else ``started_us``) is
  older than ``HEARTBEAT_TIMEOUT_S``; also a live pid whose heartbeat is that old (a hung driver).
* otherwise ``running``.

Only ``running`` is alive: the claims of a ``killed`` or ``stale`` job no longer count (see ``claims.py``).
A job found ``killed`` is stored so (``store_killed``: status ``killed``, finished at its last heartbeat) by the
next process that looks at the jobs and can write the file; ``stale`` is never stored (a stale driver that
heartbeats again is alive).
Drivers heartbeat at least once per trial (``Database.heartbeat``, ``claim`` and ``commit_records`` all do),
so the timeout only has to exceed the longest pause between trials: a trial's own timeout plus a cost-model
refit, well under a minute; five minutes leaves a wide margin.
"""
from __future__ import annotations

import functools
import os
import socket

HEARTBEAT_TIMEOUT_S = 300.0
# the job columns ``job_state`` decides from, in its argument order (and as SQL, jobs aliased ``j``)
JOB_STATE_COLUMNS = ("status", "pid", "pid_space", "pid_start", "heartbeat_us", "started_us")
JOB_STATE_SQL = ", ".join("j." + c for c in JOB_STATE_COLUMNS)
RUNNING = "running"
KILLED = "killed"
STALE = "stale"


@functools.lru_cache(maxsize=1)
def pid_space() -> str:
    """Where a pid of this process means something: boot id and PID namespace (hostname elsewhere)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return "host:" + socket.gethostname()
    return f"{boot}/{ns}"


def process_start(pid: int) -> int | None:
    """Start time of process ``pid`` in clock ticks after boot (None where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the command name in parentheses may hold spaces
    if fields[0] in (b"Z", b"X"):  # a zombie or a dead task has exited
        return -1
    return int(fields[19])


@functools.lru_cache(maxsize=None)
def _own_start_of(pid: int) -> int | None:
    return process_start(pid)


def _own_start() -> int | None:
    return _own_start_of(os.getpid())  # keyed by pid: a forked child is another process


def this_process() -> tuple[int, str, str, int | None]:
    """``(pid, host, pid_space, pid_start)`` of the calling process, as ``start_job`` records them."""
    pid = os.getpid()
    return pid, socket.gethostname(), pid_space(), process_start(pid)


def own_process() -> tuple[int, str, int | None]:
    """``(pid, pid_space, pid_start)`` of the calling process, from what is already known (no /proc read)."""
    return os.getpid(), pid_space(), _own_start()


def pid_alive(pid: int, start: int | None) -> bool:
    """Whether process ``pid`` of this process space still runs (and is the one started at ``start``)."""
    if pid == os.getpid():  # a driver asks about its own job on every claim: no need to read /proc
        return start is None or start == _own_start()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    except (OverflowError, ValueError):
        return False
    now_start = process_start(pid)
    if now_start == -1:
        return False
    return start is None or now_start is None or now_start == start


def job_state(status: str, pid: int | None, space: str | None, start: int | None, heartbeat_us: int | None,
              started_us: int, now_us: int) -> str:
    """The state to show and to trust for a job row (see the module docstring)."""
    if status != RUNNING:
        return status
    if pid is not None and space == pid_space() and not pid_alive(pid, start):
        return KILLED
    last = heartbeat_us if heartbeat_us is not None else started_us
    if now_us - last > HEARTBEAT_TIMEOUT_S * 1e6:
        return STALE
    return RUNNING


def dead_jobs(conn) -> list[int]:
    """Ids of jobs stored ``running`` whose driver ran in this process space and is gone (``killed``)."""
    rows = conn.execute("SELECT id, pid, pid_start FROM jobs WHERE status = ? AND pid IS NOT NULL AND pid_space = ?",
                        (RUNNING, pid_space())).fetchall()
    return [job for job, pid, start in rows if not pid_alive(pid, start)]


def store_killed(conn, jobs: list[int]) -> None:
    """Store ``killed`` for jobs found dead (the body of a write transaction), so the row says what readers see;
    the job ended at its last sign of life. Their claims end with them."""
    for job in jobs:
        if conn.execute("UPDATE jobs SET status = ?, finished_us = COALESCE(heartbeat_us, started_us) "
                        "WHERE id = ? AND status = ?", (KILLED, job, RUNNING)).rowcount:
            conn.execute("DELETE FROM claims WHERE job_id = ?", (job,))
