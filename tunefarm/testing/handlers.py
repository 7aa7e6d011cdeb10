"""Small work-item handlers for tests and drills of the farms' streaming API.

Each fails or behaves for real: ``segfault`` dereferences NULL in the worker process, ``hang`` never returns,
``spin`` burns CPU. Handlers that report *when* something happened use ``time.monotonic()``, which on Linux is
one clock for every process of a machine, so the test can compare what two workers did.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import time

from tunefarm.farm.journal import DRILL_EXIT_AFTER_JOURNAL
from tunefarm.farm.work import WorkerContext

from .simulate import hold_timing_lock
from .simulate import spin as _spin


def _where(ctx: WorkerContext) -> dict:
    node = ""
    if "ray" in sys.modules:  # in a Ray actor: the node it runs on
        import ray

        if ray.is_initialized():
            node = ray.get_runtime_context().get_node_id()
    return {"worker": ctx.worker_id, "pid": os.getpid(), "host": ctx.host, "node_id": node}


def echo(payload, ctx: WorkerContext) -> dict:
    """The payload back, and where it ran."""
    return {"payload": payload, **_where(ctx)}


def spin(payload: dict, ctx: WorkerContext) -> dict:
    """Burn CPU for ``payload["secs"]``; returns when it started and ended, and where."""
    start = time.monotonic()
    _spin(float(payload["secs"]))
    return {"start": start, "end": time.monotonic(), **_where(ctx)}


def pause(payload: dict, ctx: WorkerContext) -> dict:
    """Sleep ``payload["secs"]`` reported as paused (like a wait for the measurement lock), then return."""
    ctx.clock.pause(payload.get("reason", "lock"))
    time.sleep(float(payload["secs"]))
    ctx.clock.resume()
    return _where(ctx)


def segfault(payload, ctx: WorkerContext) -> None:
    """A genuine SIGSEGV: the worker process dies."""
    ctypes.string_at(0)


def hang(payload, ctx: WorkerContext) -> None:
    """Never returns."""
    while True:
        time.sleep(0.05)


def fail(payload: dict, ctx: WorkerContext) -> None:
    """Raise ``ValueError(payload["message"])``."""
    raise ValueError(payload["message"])


def unserializable(payload, ctx: WorkerContext) -> object:
    """Return something that is not JSON."""
    return {"value": object()}


def read_shared(payload: dict, ctx: WorkerContext) -> dict:
    """Digest of the shared text ``payload["key"]``, and whether it is the very object this process saw first
    (a text received again would be a new object)."""
    text = ctx.shared[payload["key"]]
    first = ctx.state.setdefault(("tunefarm.testing.handlers:first", payload["key"]), text)
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "length": len(text), "same_object": first is text,
            **_where(ctx)}


def timed_hold(payload: dict, ctx: WorkerContext) -> dict:
    """Hold the host measurement lock (with the worker's timing slots) for ``payload["secs"]``; returns when the
    hold started and ended."""
    start, end, slots = hold_timing_lock(ctx, float(payload["secs"]))
    return {"start": start, "end": end, "slots": slots, **_where(ctx)}


def compile_count(payload: dict, ctx: WorkerContext) -> dict:
    """Report ``payload["n"]`` LLVM builds (without building): drives a worker's recycling."""
    ctx.count_compiles(int(payload.get("n", 1)))
    return {"compiles": ctx.compiles, **_where(ctx)}


def lost_reply(payload, ctx: WorkerContext) -> dict:
    """Return normally, then (on a Ray worker) exit after the result is journalled, before the reply is sent."""
    ctx.state[DRILL_EXIT_AFTER_JOURNAL] = True
    return {"payload": payload, **_where(ctx)}


def tally(payload: dict, ctx: WorkerContext) -> dict:
    """Append ``payload["tag"]`` to the file ``payload["path"]`` when it starts (a test counts how often each
    item ran), sleep ``payload["secs"]``; returns when it started and where."""
    start = time.monotonic()
    with open(payload["path"], "a", encoding="utf-8") as f:
        f.write(f"{payload['tag']}\n")
    time.sleep(float(payload["secs"]))
    return {"start": start, **_where(ctx)}
