"""LocalFarm: run work items in worker processes on this machine.

Why our own small process pool instead of ``ProcessPoolExecutor``: the executor marks the whole pool broken
when one worker dies (a segfault in JIT code is routine while tuning) and cannot kill the one worker stuck in a
hung kernel. Here every worker is a fresh interpreter (``python -m tunefarm.farm.local_worker``, so, unlike a
``spawn`` child, it never re-imports the user's ``__main__`` script) with a pipe each way, and the parent waits
on all pipes at once (``select.poll``; a dead worker's pipe reads as end-of-file):
- a worker that dies mid-item turns that item into LOST and is replaced; the others go on. Items it had queued
  but not started are re-run elsewhere without blame (a few times);
- an item past its budget gets its worker SIGKILLed (hung native code ignores everything else) -> TIMEOUT;
- a worker that stops answering (frozen by SIGSTOP, swapped out, stuck with the interpreter lock held) is
  found the same way for every kind of item: a worker says it is alive every second (local_worker.py) from a thread of
  its own, and one silent for ``SILENCE_S`` while it runs an item is SIGKILLed -> TIMEOUT, its queued items
  re-run elsewhere (a search item's 300 s budget is no reason to wait 300 s for a frozen process);
- a worker retires after ``max_compiles`` LLVM builds (llvmlite leaks ~90 KB per optimizer run).

Each worker has up to ``inflight_per_worker`` items: it starts the next one without a round trip and says
when an item *starts* (its budget clock starts there). An item queued behind a slow one is taken back
(``cancel``) when another worker runs out of work, so a slow item never holds up a fast one.

Messages on the pipes are JSON, never pickles; the parent writes without blocking (a worker busy in a long
item may not read its pipe for a while). The budget excludes time a worker reports as paused (waiting for the
host measurement lock, computing the workload's reference), capped by ``pause_limit_s``.
"""
from __future__ import annotations

import collections
import fcntl
import json
import math
import multiprocessing.connection as mpc
import os
import select
import signal
import socket
import subprocess
import sys
import time

from .base import PRELOAD, Farm, FarmError
from .dispatch import Item, WorkQueue
from .local_worker import frame
from .measure_lock import timing_slots as check_timing_slots
from .trial_clock import pause_limit_error
from .work import DoneStatus
from ..target import as_target

_START_TIMEOUT_S = 120.0
_MAX_START_FAILURES = 3
_MAX_START_KILLS = 10  # workers SIGKILLed during start-up in a row before the farm gives up
SILENCE_S = 10.0  # a worker running an item that said nothing for this long has stopped: it is killed
LINGER_S = 0.1    # longest a finished item waits in poll for others while every worker is still well fed
PIPE_BYTES = 1 << 20  # a worker's pipe to the parent: a search reply fits, so a worker never waits for a read


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class _Sent:
    """An item sent to a worker under a token (a re-run gets a new token)."""

    __slots__ = ("item", "token", "cancelling")

    def __init__(self, item: Item, token: int):
        self.item, self.token, self.cancelling = item, token, False


class _Worker:
    """Parent-side handle of one worker process and the items it was sent (the first one runs)."""

    def __init__(self, preload: str, lock_path: str | None, timing_slots: int | None):
        to_parent_r, to_parent_w = os.pipe()
        to_child_r, to_child_w = os.pipe()
        try:
            fcntl.fcntl(to_parent_w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass  # the host caps pipes lower (fs.pipe-max-size): a big reply then waits for the parent's read
        cmd = [sys.executable, "-m", "tunefarm.farm.local_worker", "--read-fd", str(to_child_r),
               "--write-fd", str(to_parent_w), "--preload", preload]
        if lock_path:
            cmd += ["--lock-path", lock_path]
        if timing_slots is not None:
            cmd += ["--timing-slots", str(timing_slots)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # import what the parent imports
        try:
            self.process = subprocess.Popen(cmd, pass_fds=(to_child_r, to_parent_w), env=env,
                                            stdin=subprocess.DEVNULL)
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        self.conn = mpc.Connection(to_parent_r, writable=False)
        self.readable = select.poll()  # "is another message waiting?" (Connection.poll builds a selector per call)
        self.readable.register(to_parent_r, select.POLLIN)
        self.wfd = to_child_w
        os.set_blocking(self.wfd, False)
        self._out = bytearray()
        self.ready = False
        self.worker_id = ""
        self.compiles = 0
        self.retiring = False
        self.sent: collections.deque[_Sent] = collections.deque()
        self.shared_keys: set[str] = set()
        self.spawned_at = time.monotonic()
        self.head_since = 0.0                   # when the first sent item became the next to run
        self.started: float | None = None       # when it started (None: not yet)
        self.paused_since: float | None = None
        self.paused_reason: str | None = None
        self.paused_total = 0.0
        self.heard = time.monotonic()           # its last message

    # --- the pipe to the worker
    def send(self, obj=None, raw: str | None = None) -> None:
        data = (raw if raw is not None else json.dumps(obj, separators=(",", ":"))).encode()
        self._out += frame(data)
        self.flush()

    def flush(self) -> None:
        try:
            while self._out:
                del self._out[:os.write(self.wfd, self._out)]
        except BlockingIOError:
            pass  # the pipe is full: the rest goes when it is writable again
        except OSError:
            self._out.clear()  # it died: its pipe reads as end-of-file, and that is handled there

    @property
    def wants_write(self) -> bool:
        return bool(self._out)

    # --- items
    def assign(self, sent: _Sent, shared: dict[str, str]) -> None:
        if not self.sent:
            self._next_head()
        self.sent.append(sent)
        item = sent.item
        self.send(raw='["run",%d,%s,%s,%s]' % (sent.token, json.dumps(item.work.handler), item.payload_text,
                                               json.dumps(shared, separators=(",", ":"))))

    def _next_head(self) -> None:
        self.head_since = time.monotonic()
        self.started = self.paused_since = None
        self.paused_total = 0.0

    def pop_head(self) -> _Sent:
        sent = self.sent.popleft()
        self._next_head()
        return sent

    def deadline(self, pause_limit_s: float) -> float | None:
        """Monotonic time at which the running item is over budget (or start-up is too slow)."""
        if not self.ready:
            return self.spawned_at + _START_TIMEOUT_S
        if not self.sent:
            return None
        timeout_s = self.sent[0].item.work.timeout_s
        if self.started is None:  # it should start at once: the worker was idle or just finished one
            return self.head_since + timeout_s
        silent = self.heard + SILENCE_S
        if self.paused_since is not None:
            return min(silent, self.paused_since + pause_limit_s)
        return min(silent, self.started + self.paused_total + timeout_s)

    # --- the process
    def stop(self) -> None:
        """Ask the worker to exit after its items."""
        self.send(None)

    def exit_code(self, wait_s: float) -> int | None:
        try:
            return self.process.wait(wait_s)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.kill()  # SIGKILL: hung native code ignores anything gentler
            except ProcessLookupError:
                pass
        self.exit_code(5)
        self.close_pipes()

    def close_pipes(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        try:
            os.close(self.wfd)
        except OSError:
            pass


class LocalFarm(Farm):
    """A pool of worker processes on this machine.

    - ``num_workers``: processes (default: one per core; building runs on all of them, timings take the host
      measurement lock so they never overlap);
    - ``target``: the target measured on (default ``Target.host()``);
    - ``max_compiles``: recycle a worker after this many LLVM builds;
    - ``lock_path``: the host measurement lock file (default: measure_lock.default_lock_path());
    - ``pause_limit_s``: longest an item may stay paused (waiting for the lock or its workload's reference);
    - ``inflight_per_worker``: items sent to a worker at once (8: it starts the next without a round trip, and
      ``poll`` hands the caller several results per call, see ``_drive``: with 4, a job's step claimed and
      stored half as many trials, and the driver's CPU per trial was 0.1 ms higher);
    - ``timing_slots``: timing loops allowed at once on this host (measure_lock.py; default: the workers'
      ``TUNEFARM_TIMING_SLOTS``, else the host's default: one per four physical cores from 8 cores on).
    """

    def __init__(self, num_workers: int | None = None, target=None, max_compiles: int = 500,
                 lock_path: str | None = None, pause_limit_s: float = 300.0, *, inflight_per_worker: int = 8,
                 timing_slots: int | None = None):
        super().__init__()
        self._target = as_target(target or None)  # no target (None, "") is this host
        n = num_workers if num_workers is not None else (os.cpu_count() or 1)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
        if not isinstance(max_compiles, int) or max_compiles < 1:
            raise ValueError(f"max_compiles must be an integer >= 1, got {max_compiles!r}")
        if not isinstance(inflight_per_worker, int) or inflight_per_worker < 1:
            raise ValueError(f"inflight_per_worker must be an integer >= 1, got {inflight_per_worker!r}")
        if timing_slots is not None:
            check_timing_slots(timing_slots)
        self._n = n
        self.max_compiles = max_compiles
        self.lock_path = lock_path
        self.pause_limit_s = float(pause_limit_s)
        self.inflight_per_worker = inflight_per_worker
        self.timing_slots = timing_slots
        self._workers: list[_Worker] = []
        self._retiring: list[_Worker] = []     # told to exit, not yet reaped
        self._queue = WorkQueue()
        self._item_secs = 0.0  # moving mean of the items' run time (0 until one ends: no nap before)
        self._next_token = 0
        self._start_failures = self._start_kills = 0
        self._host = socket.gethostname()

    @property
    def target(self):
        return self._target

    @property
    def num_workers(self) -> int:
        return self._n

    @property
    def items_per_worker(self) -> int:
        """Items a worker holds (runs or has been sent) at most: ``inflight_per_worker``."""
        return self.inflight_per_worker

    @property
    def capacity(self) -> int:
        return self._n * self.items_per_worker  # dead or retired workers are replaced at once

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the current workers (what a benchmark reads their CPU time from)."""
        return [w.process.pid for w in self._workers]

    # ------------------------------------------------------------------ worker lifecycle
    def _ensure_workers(self) -> None:
        """Start workers while items wait or run (a farm nobody uses keeps no processes)."""
        if len(self._items) <= len(self._finished):
            return
        while sum(1 for w in self._workers if not w.retiring) < self._n:
            self._workers.append(_Worker(PRELOAD, self.lock_path, self.timing_slots))
            self.stats.workers_started += 1

    def _start_failed(self, w: _Worker, why: str) -> None:
        self._drop(w)
        w.kill()
        self._start_failures += 1
        if self._start_failures >= _MAX_START_FAILURES:
            raise FarmError(f"workers fail to start ({self._start_failures} times): {why}")

    def _drop(self, w: _Worker) -> None:
        """Forget a worker that is dead or about to be killed; items it had not started go back in line."""
        if w in self._workers:
            self._workers.remove(w)
        self.stats.uptime.down(w)
        for sent in w.sent:
            self._requeue_unblamed(sent.item)
        w.sent.clear()

    def _retire_if_drained(self, w: _Worker) -> None:
        if w.retiring and not w.sent and w in self._workers:
            self._workers.remove(w)
            self.stats.uptime.down(w)
            w.stop()
            self._retiring.append(w)

    def _reap_retired(self, block: bool = False) -> None:
        for w in list(self._retiring):
            w.flush()
            if w.exit_code(5 if block else 0) is None:
                if not block:
                    continue
                w.kill()
            w.close_pipes()
            self._retiring.remove(w)

    # ------------------------------------------------------------------ dispatch
    def _enqueue(self, item: Item) -> None:
        self._queue.push(item)
        self._ensure_workers()
        self._dispatch()

    def _open(self, w: _Worker) -> bool:
        return w.ready and not w.retiring

    def rooms(self) -> dict[str, int]:
        n = self.inflight_per_worker
        return {w.worker_id: n - len(w.sent) for w in self._workers if self._open(w) and len(w.sent) < n}

    def _dispatch(self) -> None:
        """Fill the least loaded workers first; take queued-behind items back for workers left idle."""
        rooms = {w.worker_id: w for w in self._workers if self._open(w)}
        if len(self._queue) and all(len(w.sent) >= self.inflight_per_worker for w in rooms.values()):
            return  # every worker is full (what most puts of a long stream find)

        def has_room(worker_id: str) -> bool:
            w = rooms.get(worker_id)
            return w is not None and len(w.sent) < self.inflight_per_worker

        for depth in range(self.inflight_per_worker):
            for w in rooms.values():
                if len(self._queue) and len(w.sent) == depth:
                    item = self._queue.take(w.worker_id, has_room)
                    if item is not None:
                        self._send(w, item)
        self.stats.max_in_flight = max(self.stats.max_in_flight, sum(len(w.sent) for w in self._workers))
        if not len(self._queue):
            self._take_back_for_idle(list(rooms.values()))

    def _send(self, w: _Worker, item: Item) -> None:
        self._next_token += 1
        keys = (item.work.shared or {}).keys() - w.shared_keys
        w.shared_keys.update(keys)
        w.assign(_Sent(item, self._next_token), {k: self._shared_texts[k] for k in keys})

    def _take_back_for_idle(self, open_workers: list[_Worker]) -> None:
        """Ask busy workers to give back items queued behind their running one, one per idle worker."""
        idle = sum(1 for w in open_workers if not w.sent)
        asked = sum(1 for w in self._workers for s in w.sent if s.cancelling)
        for w in self._workers:
            if idle <= asked:
                return
            for sent in list(w.sent)[1:]:
                if not sent.cancelling and idle > asked:
                    sent.cancelling = True
                    w.send(["cancel", sent.token])
                    asked += 1

    # ------------------------------------------------------------------ the event loop
    def _drive(self, timeout_s: float | None) -> None:
        """Wait for finished items; return once the caller has something to do about them: some worker is down
        to half of its items (it wants more), the first result has waited ``LINGER_S``, or ``timeout_s`` is over.
        While every worker still holds more, a result waits (briefly) for the next ones: a job's step (refill,
        claim, store) then serves several results instead of one, and no worker idles for it."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        linger_until = None
        self._ensure_workers()
        self._dispatch()
        while True:
            self._wait_and_handle(min((t for t in (end, linger_until) if t is not None), default=None))
            self._ensure_workers()
            self._dispatch()
            now = time.monotonic()
            if self._finished:
                linger_until = linger_until or now + LINGER_S
                if now >= linger_until or self._wants_more():
                    return
                self._nap((linger_until if end is None else min(linger_until, end)) - now)
            if end is not None and now >= end:
                return

    def _nap(self, left_s: float) -> None:
        """While every worker is well fed, let its messages gather instead of waking for each: sleep until the
        first worker could be down to half its items (at the mean item time), at most ``left_s``. Every
        message (an item's end and the next one's start, the lock's pause and resume) woke the driver, 1.5
        wake-ups per trial; the pipes hold a search reply (``PIPE_BYTES``), so no worker waits for the read."""
        if any(w.wants_write for w in self._workers):
            return  # an item still being written: the pipe takes more as the worker reads
        half = self.inflight_per_worker // 2
        spare = min((len(w.sent) - half for w in self._workers if self._open(w)), default=0)
        secs = min(left_s, spare * self._item_secs)
        if secs > 0.001:
            time.sleep(secs)

    def _wants_more(self) -> bool:
        """A worker that takes items holds at most half of ``inflight_per_worker`` (or nothing takes items)."""
        half = self.inflight_per_worker // 2
        open_workers = [w for w in self._workers if self._open(w)]
        return not open_workers or any(len(w.sent) <= half for w in open_workers)

    def _wait_and_handle(self, end: float | None) -> None:
        times = [d for w in self._workers if (d := w.deadline(self.pause_limit_s)) is not None]
        if end is not None:
            times.append(end)
        wait_ms = None if not times else max(0, math.ceil((min(times) - time.monotonic()) * 1000))
        poller = select.poll()
        by_fd: dict[int, _Worker] = {}
        for w in self._workers:
            by_fd[w.conn.fileno()] = w
            poller.register(w.conn.fileno(), select.POLLIN)
            if w.wants_write:
                by_fd[w.wfd] = w
                poller.register(w.wfd, select.POLLOUT)
        for fd, _ in poller.poll(wait_ms) if by_fd else ():
            w = by_fd[fd]
            if w not in self._workers:
                continue  # dropped while handling an earlier event of this round
            if fd == w.wfd:
                w.flush()
            else:
                self._drain(w)
        now = time.monotonic()
        for w in list(self._workers):
            deadline = w.deadline(self.pause_limit_s)
            if deadline is None or now < deadline:
                continue
            if not w.ready:
                self._start_failed(w, f"no ready message within {_START_TIMEOUT_S:.0f} s")
            else:
                self._timed_out(w)
        self._reap_retired()

    def _drain(self, w: _Worker) -> None:
        """Handle every message the worker has sent; end-of-file means it died."""
        while w in self._workers:
            try:
                if not w.readable.poll(0):
                    return
                msg = json.loads(w.conn.recv_bytes())
            except (EOFError, OSError):
                return self._lost(w)
            w.heard = time.monotonic()
            kind = msg[0]
            if kind == "ready":
                w.ready, w.worker_id = True, msg[1]
                self.stats.uptime.up(w)
                self._start_failures = self._start_kills = 0
            elif kind == "failed":
                return self._start_failed(w, msg[1])
            elif kind == "start":
                self._started(w, msg[1])
            elif kind == "progress":
                self._progress(w, msg[1], msg[2])
            elif kind == "cancelled":
                self._cancelled(w, msg[1])
            elif kind == "done":
                self._done(w, *msg[1:])

    def _started(self, w: _Worker, token: int) -> None:
        while w.sent and w.sent[0].token != token:  # cannot happen: items start in the order they were sent
            self._requeue_unblamed(w.pop_head().item)
        if w.sent:
            w.started = time.monotonic()
            w.sent[0].cancelling = False  # too late to take it back

    def _progress(self, w: _Worker, event: str, reason: str | None) -> None:
        if event == "pause" and w.paused_since is None:
            w.paused_since, w.paused_reason = time.monotonic(), reason
        elif event == "resume" and w.paused_since is not None:
            w.paused_total += time.monotonic() - w.paused_since
            w.paused_since = None

    def _cancelled(self, w: _Worker, token: int) -> None:
        for sent in w.sent:
            if sent.token == token:
                w.sent.remove(sent)
                sent.item.prefer = None  # moved off a busy worker: it must not wait for that one again
                self._queue.push(sent.item, front=True)
                return

    def _done(self, w: _Worker, token: int, status: str, value, error, busy_secs: float, compiles: int) -> None:
        if not w.sent or w.sent[0].token != token:
            return  # cannot happen: replies come in order, for items we still track
        sent = w.pop_head()
        self._finish(sent.item, DoneStatus(status), value, error, w.worker_id, self._host, busy_secs)
        if math.isfinite(busy_secs) and busy_secs >= 0:
            self._item_secs += 0.1 * (busy_secs - self._item_secs)  # the recent items' mean (_nap)
        w.compiles = compiles
        if compiles >= self.max_compiles and not w.retiring:
            w.retiring = True
            self.stats.workers_recycled += 1
        self._retire_if_drained(w)

    def _lost(self, w: _Worker) -> None:
        """The process died (segfault in JIT code, OOM kill, external SIGKILL)."""
        running = w.sent.popleft() if w.sent and w.started is not None else None
        self._drop(w)
        code = w.exit_code(5)
        w.kill()
        if running is not None:
            busy = time.monotonic() - w.started
            self._finish(running.item, DoneStatus.LOST, error=f"worker died with {_describe_exit(code)} while "
                         "running it", worker=w.worker_id, host=self._host, busy_secs=busy)
        elif not w.ready:
            # SIGKILL from outside (an operator, the OOM killer) says nothing about whether workers can start:
            # it is only counted toward a looser bound, so a storm of kills still ends the farm eventually
            killed = code == -signal.SIGKILL
            self._start_kills += killed
            self._start_failures += not killed
            if self._start_failures >= _MAX_START_FAILURES or self._start_kills >= _MAX_START_KILLS:
                raise FarmError(f"workers fail to start ({self._start_failures + self._start_kills} times): a "
                                f"worker exited during start-up with {_describe_exit(code)}")

    def _timed_out(self, w: _Worker) -> None:
        running = w.sent.popleft()
        timeout_s = running.item.work.timeout_s
        if w.started is not None and time.monotonic() - w.heard >= SILENCE_S:
            text = f"the worker stopped answering for {SILENCE_S:g} s while running the item; worker killed"
        elif w.started is None:
            text = f"item did not start within its {timeout_s:g} s budget; worker killed"
        elif w.paused_since is not None:
            text = pause_limit_error(w.paused_reason, self.pause_limit_s)
        else:
            text = f"item exceeded its {timeout_s:g} s budget; worker killed"
        busy = time.monotonic() - w.started if w.started is not None else 0.0
        self._drop(w)
        w.kill()
        self._finish(running.item, DoneStatus.TIMEOUT, error=text, worker=w.worker_id, host=self._host,
                     busy_secs=busy)

    def _abandon(self) -> None:
        self._queue.clear()
        for w in list(self._workers):
            if w.sent:
                w.sent.clear()
                self._drop(w)
                w.kill()

    def close(self) -> None:
        if self._closed:
            return
        for w in list(self._workers):
            if w.sent:  # kill what is in flight
                w.sent.clear()
                self._drop(w)
                w.kill()
            else:
                self._workers.remove(w)
                self.stats.uptime.down(w)
                w.stop()
                self._retiring.append(w)
        self._queue.clear()
        self._reap_retired(block=True)
        super().close()

    def __del__(self):  # pragma: no cover - best effort at interpreter exit
        try:
            for w in self._workers + self._retiring:
                if w.process.poll() is None:
                    w.process.kill()
        except Exception:
            pass
