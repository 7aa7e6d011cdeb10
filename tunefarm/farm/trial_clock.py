"""The clock of a running trial: how much of its time budget it has used.

Waiting for the host's measurement lock and computing the workload's reference are *paused* time, not charged
to the candidate: a trial that waits behind other workers' timings, or that is first on its worker to need a
slow unscheduled reference, must not time out for it. The farm that owns the worker reads this (a Ray actor
answers ``snapshot()`` from a second thread; a LocalFarm worker reports pause/resume events over its pipe)
before it decides a trial is over budget.
"""
from __future__ import annotations

import threading
import time

_PAUSED_FOR = {"lock": "the host measurement lock", "reference": "its workload's reference"}


def pause_limit_error(reason: str | None, limit_s: float) -> str:
    """Why a farm killed an item that stayed paused longer than its ``pause_limit_s`` (its TIMEOUT error)."""
    what = _PAUSED_FOR.get(reason or "", f"its pause ({reason})")
    return f"item waited more than {limit_s:g} s for {what}; worker killed"


class TrialClock:
    """How much of a trial's budget is used: active seconds, excluding paused spans (lock wait, reference).

    ``on_change(event, reason)`` (optional) is called on ``start``/``pause``/``resume``/``finish`` so that a
    worker process can report those events to its parent (LocalFarm); Ray actors are asked for a
    ``snapshot()`` instead. Thread-safe: a snapshot may be taken from another thread while a trial runs.
    """

    def __init__(self, on_change=None):
        self._on_change = on_change
        self._lock = threading.Lock()
        self._token = None
        self._start = 0.0
        self._paused_total = 0.0
        self._paused_reason: str | None = None
        self._paused_since = 0.0

    def start(self, token) -> None:
        with self._lock:
            self._token = token
            self._start = time.monotonic()
            self._paused_total = 0.0
            self._paused_reason = None
        self._emit("start", None)

    def pause(self, reason: str) -> None:
        with self._lock:
            if self._paused_reason is None:
                self._paused_reason = reason
                self._paused_since = time.monotonic()
        self._emit("pause", reason)

    def resume(self) -> None:
        with self._lock:
            if self._paused_reason is not None:
                self._paused_total += time.monotonic() - self._paused_since
                self._paused_reason = None
        self._emit("resume", None)

    def finish(self) -> None:
        with self._lock:
            self._token = None
            self._paused_reason = None
        self._emit("finish", None)

    def snapshot(self) -> dict:
        """``token`` of the running trial (None when idle), its ``active_secs`` and current pause, if any."""
        with self._lock:
            now = time.monotonic()
            if self._token is None:
                return {"token": None, "active_secs": 0.0, "paused": None, "paused_secs": 0.0}
            paused = self._paused_total + (now - self._paused_since if self._paused_reason else 0.0)
            return {"token": self._token, "active_secs": now - self._start - paused,
                    "paused": self._paused_reason,
                    "paused_secs": now - self._paused_since if self._paused_reason else 0.0}

    def _emit(self, event: str, reason) -> None:
        if self._on_change is not None:
            self._on_change(event, reason)


class Paused:
    """``with Paused(clock, "lock"):`` -- the span is not charged to the trial (``clock`` may be None)."""

    def __init__(self, clock: TrialClock | None, reason: str):
        self.clock, self.reason = clock, reason

    def __enter__(self):
        if self.clock is not None:
            self.clock.pause(self.reason)

    def __exit__(self, *exc):
        if self.clock is not None:
            self.clock.resume()
