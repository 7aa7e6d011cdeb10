"""Running work items inside a worker process: what LocalFarm processes and Ray actors share.

The runtime imports a handler by name once (only ``tunefarm.`` names), installs the shared texts an item brings,
calls the handler with the item's payload and a ``WorkerContext``, and turns whatever happens into an outcome
``(status, value as JSON text, error, busy seconds)``: an exception is the item's ``error`` and the worker
lives on. What it cannot turn into an outcome (a segfault, a hang in native code) is the farm's business.
"""
from __future__ import annotations

import importlib
import json
import os
import socket
import time
import traceback
from collections.abc import Callable, Sequence

from .measure_lock import SLOTS_ENV_VAR, HostMeasureLock
from .trial_clock import TrialClock
from .work import WorkerContext, check_handler_name

_MAX_ERROR_TEXT = 2000


def error_text(exc: BaseException) -> str:
    """``"<Type>: <message>"`` and the last frames of its traceback, cut to a size a result can carry."""
    head = f"{type(exc).__name__}: {exc}"
    frames = "".join(traceback.format_exception(exc)[-6:])
    return f"{head}\n{frames}"[:_MAX_ERROR_TEXT]


class WorkerRuntime:
    """The worker side of a farm: one per worker process.

    Start-up checks what would otherwise fail every item (the lock path, the ``timing_slots`` setting) and
    imports the ``preload`` handlers, so a broken worker fails before it reports ready and heavy imports are
    not charged to the first item's budget.
    """

    def __init__(self, lock_path: str | None, timing_slots: int | None = None, preload: Sequence[str] = (),
                 on_progress: Callable | None = None):
        if timing_slots is not None:
            # every HostMeasureLock this process makes (the measure handler's included) reads the setting
            os.environ[SLOTS_ENV_VAR] = str(timing_slots)
        HostMeasureLock(lock_path).open().close()
        self.clock = TrialClock(on_progress)
        self.ctx = WorkerContext(f"{socket.gethostname()}:{os.getpid()}", lock_path, self.clock)
        self._handlers: dict[str, Callable] = {}
        for name in preload:
            self.handler(name)

    def handler(self, name: str) -> Callable:
        fn = self._handlers.get(name)
        if fn is None:
            check_handler_name(name)
            module, _, attr = name.partition(":")
            fn = getattr(importlib.import_module(module), attr, None)
            if not callable(fn):
                raise AttributeError(f"handler {name!r}: module {module} has no function {attr!r}")
            self._handlers[name] = fn
        return fn

    def install_shared(self, texts: dict[str, str]) -> None:
        """Keep texts the farm sent with an item (LocalFarm sends each key once: a second copy is a farm bug)."""
        twice = [k for k in texts if k in self.ctx.shared]
        self.ctx.shared.update(texts)
        if twice:
            raise RuntimeError(f"shared texts {twice} were sent to this worker twice")

    def fetch_shared(self, refs: dict, fetch: Callable) -> None:
        """Fetch the texts of ``refs`` (key -> reference) this worker does not hold yet (RayFarm sends a
        reference until the worker has it; each text is fetched once per process)."""
        for key, ref in refs.items():
            if key not in self.ctx.shared:
                self.ctx.shared[key] = fetch(ref)

    def run(self, token: int, name: str, payload, problem: str | None = None,
            prepare: Callable | None = None) -> tuple[str, str, str | None, float]:
        """Run one item; returns ``(status, value JSON text, error, busy_secs)`` with status "ok" or "error".

        ``problem``: why the item cannot run, found when it arrived (it fails with that error);
        ``prepare``: called first, inside the item (fetching its shared texts: a failure is the item's error).
        """
        t0 = time.perf_counter()
        self.clock.start(token)
        try:
            if problem is not None:
                raise RuntimeError(problem)
            if prepare is not None:
                prepare()
            value = self.handler(name)(payload, self.ctx)
            try:
                value_text = json.dumps(value, separators=(",", ":"))
            except (TypeError, ValueError) as e:
                raise TypeError(f"handler {name} returned a value that is not JSON: {e}") from None
            outcome = ("ok", value_text, None)
        except Exception as e:  # noqa: BLE001 - the item's error; the worker lives on
            outcome = ("error", "null", error_text(e))
        finally:
            self.clock.finish()
        return (*outcome, time.perf_counter() - t0)
