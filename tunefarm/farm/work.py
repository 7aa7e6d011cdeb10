"""Work items: what a farm runs on its workers, what comes back, and what a handler sees of its worker.

A farm is a fault-tolerant executor of small JSON work items. A ``Work`` names a *handler* (a module-level
function ``tunefarm.<module>:<function>``), a JSON payload, a time budget and, optionally, the worker it would
rather run on and large texts to make available on the worker once. Every item put on a farm ends in exactly one
``Done``, whatever happens to the workers: the handler's return value (``OK``), its exception (``ERROR``), or
what the farm did when the worker hung (``TIMEOUT``) or died (``LOST``).

Why JSON and handler *names*: work crosses process and machine boundaries, and the farm never unpickles or runs
code it was sent; a worker imports only modules under ``tunefarm.`` (the name is checked on ``put`` and again
on the worker).
"""
from __future__ import annotations

import dataclasses
import enum
import math
import re
import socket
from typing import Any

from .trial_clock import TrialClock

_HANDLER_NAME = re.compile(r"tunefarm(\.[A-Za-z_][A-Za-z0-9_]*)+:[A-Za-z_][A-Za-z0-9_]*")


@dataclasses.dataclass
class Work:
    """One item of work.

    - ``handler``: ``"tunefarm.package.module:function"``; the function is called as ``handler(payload, ctx)``.
    - ``payload``: JSON-able data only (dict / list / str / int / float / bool / None).
    - ``timeout_s``: budget while running; time the handler reports as paused is not charged.
    - ``prefer``: a worker id (``Done.worker``): run it there if that worker has room (its caches hold inputs).
    - ``shared``: key -> large text; each worker receives a given key at most once and the handler reads
      ``ctx.shared[key]``. A key names one text for the farm's life.
    - ``tag``: the caller's own bookkeeping; never sent.
    """

    handler: str
    payload: Any
    timeout_s: float = 60.0
    prefer: str | None = None
    shared: dict[str, str] | None = None
    tag: Any = None

    def check(self) -> None:
        """Raise TypeError / ValueError naming the field that is malformed."""
        check_handler_name(self.handler)
        t = self.timeout_s
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t) or t <= 0:
            raise ValueError(f"Work.timeout_s must be a positive number of seconds, got {t!r}")
        if self.prefer is not None and not isinstance(self.prefer, str):
            raise TypeError(f"Work.prefer must be a worker id (str) or None, got {type(self.prefer).__name__}")
        if self.shared is not None:
            if not isinstance(self.shared, dict):
                raise TypeError(f"Work.shared must be a dict of str -> str, got {type(self.shared).__name__}")
            for k, v in self.shared.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    raise TypeError(f"Work.shared must map str keys to str texts; key {k!r} maps to a "
                                    f"{type(v).__name__}")


def check_handler_name(name) -> None:
    """A handler is named ``tunefarm.<module path>:<function>``; nothing outside the package is imported."""
    if not isinstance(name, str) or not _HANDLER_NAME.fullmatch(name):
        raise ValueError(f"bad handler name {name!r}: use 'tunefarm.<module>:<function>' (only functions under "
                         "the tunefarm package can be run on workers)")


class DoneStatus(enum.Enum):
    """How an item ended."""

    OK = "ok"            # the handler returned; Done.value is its return value
    ERROR = "error"      # the handler raised; Done.error = "<Type>: <message>" (+ short traceback); worker lives on
    TIMEOUT = "timeout"  # over budget; the worker was killed (and replaced)
    LOST = "lost"        # the worker died under it (segfault, SIGKILL, OOM, node gone) and it was not re-run


@dataclasses.dataclass
class Done:
    """A finished item. ``worker`` is "" when it never ran; ``busy_secs`` is 0 when unknown."""

    ticket: int
    work: Work
    status: DoneStatus
    value: Any
    error: str | None
    worker: str
    host: str
    busy_secs: float


class WorkerContext:
    """What a handler sees of the worker process running it.

    - ``worker_id`` (stable for the process's life; what ``Work.prefer`` names) and ``host``;
    - ``lock_path``: the host measurement lock the farm was started with (None: the default path);
    - ``clock``: ``pause(reason)`` / ``resume()`` around spans the farm must not charge to the item's budget
      (waiting for the measurement lock, computing a reference);
    - ``shared``: key -> text received from the farm (``Work.shared``);
    - ``state``: a dict that lives as long as the process: handlers keep their per-process caches there;
    - ``count_compiles(n)``: report LLVM builds; the farm recycles the worker after ``max_compiles`` of them
      (llvmlite leaks memory per optimizer run), once its current item is done.
    """

    def __init__(self, worker_id: str, lock_path: str | None, clock: TrialClock, host: str | None = None):
        self.worker_id = worker_id
        self.host = host or socket.gethostname()
        self.lock_path = lock_path
        self.clock = clock
        self.shared: dict[str, str] = {}
        self.state: dict = {}
        self.compiles = 0

    def count_compiles(self, n: int = 1) -> None:
        self.compiles += n
