"""LocalFarm: measure candidates in worker processes on this machine.

Why our own small process pool instead of ``ProcessPoolExecutor``: the executor marks the whole pool broken
when one worker dies (a segfault in JIT code is routine while tuning) and cannot kill the one worker stuck in a
hung kernel. Here every worker is a fresh interpreter (``python -m tunefarm.farm.local_worker``, so, unlike a
``spawn`` child, it never re-imports the user's ``__main__`` script) with a pipe each way, and the parent waits
on all pipes at once (``multiprocessing.connection.wait``; a dead worker's pipe reads as end-of-file):
- a worker that dies mid-trial turns that trial into ``worker_lost`` and is replaced; the others go on;
- a trial past its budget gets its worker SIGKILLed (hung native code ignores everything else) -> ``timeout``;
- a worker retires after ``max_compiles`` LLVM builds (llvmlite leaks ~90 KB per optimizer run).

Messages on the pipes are JSON (``send_bytes``), never pickles. The budget excludes time a worker reports as
paused (waiting for the host measurement lock, computing the workload's reference), capped by
``pause_limit_s``.
"""
from __future__ import annotations

import collections
import json
import multiprocessing.connection as mpc
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

from .base import Farm, FarmError
from .candidate import Candidate
from .result import MeasureResult, MeasureStatus

_START_TIMEOUT_S = 120.0
_MAX_START_FAILURES = 3


def _send(conn, obj) -> None:
    conn.send_bytes(json.dumps(obj, separators=(",", ":")).encode())


def _recv(conn):
    return json.loads(conn.recv_bytes())


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class _Worker:
    """Parent-side handle of one worker process and its current trial."""

    def __init__(self, measurer: str, lock_path: str | None):
        to_parent_r, to_parent_w = os.pipe()
        to_child_r, to_child_w = os.pipe()
        cmd = [sys.executable, "-m", "tunefarm.farm.local_worker", "--read-fd", str(to_child_r),
               "--write-fd", str(to_parent_w), "--measurer", measurer]
        if lock_path:
            cmd += ["--lock-path", lock_path]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # import what the parent imports
        try:
            self.process = subprocess.Popen(cmd, pass_fds=(to_child_r, to_parent_w), env=env,
                                            stdin=subprocess.DEVNULL)
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        self.conn = mpc.Connection(to_parent_r, writable=False)
        self.out = mpc.Connection(to_child_w, readable=False)
        self.ready = False
        self.compiles = 0
        self.index: int | None = None      # candidate index being measured
        self.token: int | None = None
        self.timeout_s = 0.0
        self.started = 0.0
        self.paused_since: float | None = None
        self.paused_total = 0.0
        self.spawned_at = time.monotonic()

    @property
    def busy(self) -> bool:
        return self.index is not None

    def assign(self, index: int, token: int, wire: tuple, timeout_s: float) -> None:
        self.index, self.token, self.timeout_s = index, token, timeout_s
        self.started = time.monotonic()
        self.paused_since, self.paused_total = None, 0.0
        _send(self.out, [token, list(wire)])

    def clear(self) -> None:
        self.index = self.token = None
        self.paused_since = None

    def deadline(self, pause_limit_s: float) -> float:
        """Monotonic time at which this trial is over budget."""
        if self.paused_since is not None:
            return self.paused_since + pause_limit_s
        return self.started + self.paused_total + self.timeout_s

    def stop(self) -> None:
        """Ask the worker to exit after its current trial (it is idle when we do)."""
        try:
            _send(self.out, None)
        except OSError:
            pass

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
        for c in (self.conn, self.out):
            try:
                c.close()
            except OSError:
                pass


class LocalFarm(Farm):
    """A pool of measuring processes on this machine.

    - ``num_workers``: processes (default: one per core; building runs on all of them, timings take the host
      measurement lock so they never overlap);
    - ``target``: the target measured on (default ``Target.host()``);
    - ``max_compiles``: recycle a worker after this many LLVM builds;
    - ``measurer``: ``"tunefarm"`` (real) or ``"simulate"`` (see simulate.py);
    - ``lock_path``: the host measurement lock file (default: measure_lock.default_lock_path());
    - ``pause_limit_s``: longest a trial may wait for the lock or its workload's reference.
    """

    def __init__(self, num_workers: int | None = None, target=None, max_compiles: int = 500,
                 measurer: str = "tunefarm", lock_path: str | None = None, pause_limit_s: float = 300.0):
        super().__init__()
        from tunefarm.target import Target

        self._target = target if isinstance(target, Target) else Target(target) if target else Target.host()
        n = num_workers if num_workers is not None else (os.cpu_count() or 1)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
        if not isinstance(max_compiles, int) or max_compiles < 1:
            raise ValueError(f"max_compiles must be an integer >= 1, got {max_compiles!r}")
        if measurer not in ("tunefarm", "simulate"):
            raise ValueError(f"unknown measurer {measurer!r}; use 'tunefarm' or 'simulate'")
        self._n = n
        self.max_compiles = max_compiles
        self.measurer = measurer
        self.lock_path = lock_path
        self.pause_limit_s = float(pause_limit_s)
        self._workers: list[_Worker] = []
        self._retiring: list[_Worker] = []
        self._next_token = 0
        self._start_failures = 0
        self._host = socket.gethostname()

    @property
    def target(self):
        return self._target

    @property
    def num_workers(self) -> int:
        return self._n

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the current workers (for diagnostics and fault drills)."""
        return [w.process.pid for w in self._workers]

    # ------------------------------------------------------------------ worker lifecycle
    def _spawn(self) -> _Worker:
        w = _Worker(self.measurer, self.lock_path)
        self.stats.workers_started += 1
        self._workers.append(w)
        return w

    def _ensure_workers(self) -> None:
        while len(self._workers) < self._n:
            self._spawn()

    def _start_failed(self, w: _Worker, why: str) -> None:
        self._remove(w)
        w.kill()
        self._start_failures += 1
        if self._start_failures >= _MAX_START_FAILURES:
            raise FarmError(f"measurement workers fail to start ({self._start_failures} times): {why}")

    def _remove(self, w: _Worker) -> None:
        if w in self._workers:
            self._workers.remove(w)

    def _retire(self, w: _Worker) -> None:
        """Let an idle worker exit on its own."""
        self._remove(w)
        w.stop()
        self._retiring.append(w)

    def _reap_retired(self, block: bool = False) -> None:
        for w in list(self._retiring):
            if w.exit_code(5 if block else 0) is None:
                if not block:
                    continue
                w.kill()
            w.close_pipes()
            self._retiring.remove(w)

    # ------------------------------------------------------------------ the event loop
    def submit(self, candidates: Sequence[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        cands = self._check_candidates(candidates)
        return self._run(cands)

    def _run(self, cands: list[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        with self._batch():
            yield from self._run_batch(cands)

    def _run_batch(self, cands: list[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        cpu0 = time.process_time()
        self.stats.submitted += len(cands)
        texts: dict[str, str] = {}
        queue = collections.deque(range(len(cands)))
        done = 0
        try:
            while done < len(cands):
                self._ensure_workers()
                for w in self._workers:  # hand work to every ready idle worker
                    if queue and w.ready and not w.busy:
                        i = queue.popleft()
                        c = cands[i]
                        text = texts.get(c.workload_key)
                        if text is None:
                            text = texts[c.workload_key] = c.with_workload_text().workload_json
                        self._next_token += 1
                        try:
                            w.assign(i, self._next_token, c.to_wire(text), c.timeout_s)
                        except OSError:
                            pass  # it just died: its pipe reads as end-of-file and that is handled below
                busy = sum(1 for w in self._workers if w.busy)
                self.stats.max_in_flight = max(self.stats.max_in_flight, busy)
                now = time.monotonic()
                deadlines = [w.deadline(self.pause_limit_s) for w in self._workers if w.busy]
                deadlines += [w.spawned_at + _START_TIMEOUT_S for w in self._workers if not w.ready]
                wait_s = max(0.0, min(deadlines) - now) if deadlines else None
                self.stats.driver_cpu_secs += time.process_time() - cpu0
                ready = mpc.wait([w.conn for w in self._workers], wait_s)
                cpu0 = time.process_time()
                finished: list[tuple[int, MeasureResult]] = []
                for w in list(self._workers):
                    if w.conn in ready:
                        finished += self._drain(w)
                now = time.monotonic()
                for w in list(self._workers):
                    if w.busy and now >= w.deadline(self.pause_limit_s):
                        finished.append(self._timed_out(w))
                    elif not w.ready and now >= w.spawned_at + _START_TIMEOUT_S:
                        self._start_failed(w, f"no ready message within {_START_TIMEOUT_S:.0f} s")
                self._reap_retired()
                for i, r in finished:
                    done += 1
                    self.stats.completed += 1
                    self.stats.driver_cpu_secs += time.process_time() - cpu0
                    yield i, r
                    cpu0 = time.process_time()
        finally:
            # abandoned mid-batch (consumer stopped, Ctrl-C): stale trials must not leak into the next batch
            for w in list(self._workers):
                if w.busy:
                    self._remove(w)
                    w.kill()
            self.stats.driver_cpu_secs += time.process_time() - cpu0

    def _drain(self, w: _Worker) -> list[tuple[int, MeasureResult]]:
        """Read every message the worker has sent; end-of-file means it died."""
        out = []
        while True:
            try:
                if not w.conn.poll():
                    return out
                msg = _recv(w.conn)
            except (EOFError, OSError):
                return out + self._lost(w)
            kind = msg[0]
            if kind == "ready":
                w.ready = True
                self._start_failures = 0
            elif kind == "failed":
                self._start_failed(w, msg[1])
                return out
            elif kind == "progress":
                if msg[1] == "pause" and w.paused_since is None:
                    w.paused_since = time.monotonic()
                elif msg[1] == "resume" and w.paused_since is not None:
                    w.paused_total += time.monotonic() - w.paused_since
                    w.paused_since = None
            elif kind == "result":
                _, token, result, compiles = msg
                if token != w.token:
                    continue  # a reply to a trial we already gave up on
                out.append((w.index, MeasureResult.from_dict(result)))
                w.clear()
                w.compiles = compiles
                if compiles >= self.max_compiles:
                    self._retire(w)
                    self.stats.workers_recycled += 1
                    return out

    def _lost(self, w: _Worker) -> list[tuple[int, MeasureResult]]:
        """The process died (segfault in JIT code, OOM kill, external SIGKILL)."""
        self._remove(w)
        code = w.exit_code(5)
        w.kill()
        if w.busy:
            self.stats.worker_lost += 1
            text = f"measurement worker died with {_describe_exit(code)} while measuring"
            return [(w.index, MeasureResult(MeasureStatus.WORKER_LOST, [], 0.0, text, self._host))]
        if not w.ready:
            self._start_failures += 1
            if self._start_failures >= _MAX_START_FAILURES:
                raise FarmError(f"measurement workers fail to start ({self._start_failures} times): "
                                f"a worker exited during start-up with {_describe_exit(code)}")
        return []

    def _timed_out(self, w: _Worker) -> tuple[int, MeasureResult]:
        if w.paused_since is not None:
            text = (f"trial waited more than {self.pause_limit_s:g} s for the host measurement lock or its "
                    "workload's reference; worker killed")
        else:
            text = f"trial exceeded its {w.timeout_s:g} s budget; worker killed"
        self.stats.timeouts += 1
        self._remove(w)
        w.kill()
        return w.index, MeasureResult(MeasureStatus.TIMEOUT, [], 0.0, text, self._host)

    def close(self) -> None:
        if self._closed:
            return
        for w in list(self._workers):
            self._retire(w)
        self._reap_retired(block=True)
        super().close()

    def __del__(self):  # pragma: no cover - best effort at interpreter exit
        try:
            for w in self._workers + self._retiring:
                if w.process.poll() is None:
                    w.process.kill()
        except Exception:
            pass
