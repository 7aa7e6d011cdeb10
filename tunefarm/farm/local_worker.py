"""Entry point of a LocalFarm worker process: ``python -m tunefarm.farm.local_worker --read-fd R --write-fd W``.

Messages are JSON, one per ``send_bytes`` frame (``frame``). From the parent:
``["run", token, handler, payload, shared]`` (``shared``: texts this worker has not received yet), ``["cancel", token]`` (take back an item that has not
started) and ``null`` (exit). To the parent: ``["ready", worker id]`` once start-up is done (or
``["failed", why]``), ``["start", token]`` when an item starts (its budget clock starts there),
``["progress", "pause"|"resume", reason]`` around spans not charged to it, ``["cancelled", token]``,
``["done", token, status, value, error, busy_secs, compiles]`` (with the next item's ``start`` in the same write
when that item is already here), and ``["alive"]`` every ``HEARTBEAT_S`` from a
thread of its own (a worker that falls silent while it runs an item has stopped, and is killed).

A reader thread takes messages off the pipe while an item runs, so the parent can queue the next item (no
round trip between items), take back an item queued behind a slow one, and never blocks on a full pipe. The
pipe's end of file without the ``null`` that ends a worker means the parent died (SIGKILL, the OOM killer): the
reader then ends the process at once, whatever item runs, so no worker outlives its driver.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing.connection as mpc
import os
import signal
import struct
import threading
import time

from .worker_runtime import WorkerRuntime

PARENT_GONE = 3  # exit status of a worker whose parent died
HEARTBEAT_S = 1.0  # how often a worker says it is alive (LocalFarm kills one silent for SILENCE_S mid-item)


def frame(data: bytes) -> bytes:
    """One message as ``multiprocessing.Connection.send_bytes`` frames it (both ends of the pipe write this)."""
    return struct.pack("!i", len(data)) + data


class _Inbox:
    """Items received and not started. Starting an item and cancelling one exclude each other (one lock), so
    the parent sees either ``start`` or ``cancelled`` for an item it asked back, and in pipe order.
    ``send_frames(*messages)`` writes encoded messages to the parent in one write."""

    def __init__(self, send_frames):
        self._send_frames = send_frames
        self._cond = threading.Condition()
        self._items: collections.deque = collections.deque()
        self._closed = False

    def push(self, msg) -> None:
        with self._cond:
            self._items.append(msg)
            self._cond.notify()

    def cancel(self, token: int) -> None:
        with self._cond:
            for msg in self._items:
                if msg[1] == token:
                    self._items.remove(msg)
                    self._send_frames(b'["cancelled",%d]' % token)
                    return

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def start_next(self, done: bytes | None = None):
        """The next item, its ``start`` already sent; None when the parent said to exit or is gone. ``done`` (the
        end of the item before) is sent first, in the same write as that ``start`` when the next item is
        already here: the parent then wakes once per item, not twice."""
        with self._cond:
            if done is not None and not self._items:
                self._send_frames(done)  # (not held back while this worker waits for its next item)
                done = None
            while not self._items and not self._closed:
                self._cond.wait()
            if not self._items:
                return None
            msg = self._items.popleft()
            start = b'["start",%d]' % msg[1]
            self._send_frames(*((done, start) if done else (start,)))
            return msg


def _read(conn_in, inbox: _Inbox, runtime: WorkerRuntime) -> None:
    """The reader thread: installs shared texts on arrival (an item taken back still brought them)."""
    while True:
        try:
            msg = json.loads(conn_in.recv_bytes())
        except (EOFError, OSError):
            os._exit(PARENT_GONE)  # the parent died: nobody will read what this process does any more
        if msg is None:
            break
        if msg[0] == "cancel":
            inbox.cancel(msg[1])
            continue
        try:
            runtime.install_shared(msg[4])
            msg[4] = None
        except RuntimeError as e:
            msg[4] = str(e)
        inbox.push(msg)
    inbox.close()


def _heartbeat(send) -> None:
    while True:
        time.sleep(HEARTBEAT_S)
        try:
            send(["alive"])
        except OSError:
            return  # the parent is gone


def serve(conn_in, write_fd: int, lock_path: str | None, timing_slots: int | None, preload: list[str]) -> None:
    lock = threading.Lock()

    def send(obj) -> None:
        send_frames(json.dumps(obj, separators=(",", ":")).encode())

    def send_frames(*messages: bytes) -> None:
        """Encoded messages in one write."""
        out = b"".join(map(frame, messages))
        try:
            with lock:
                while out:
                    out = out[os.write(write_fd, out):]
        except OSError:  # a broken pipe: the parent died
            os._exit(PARENT_GONE)

    def on_progress(event, reason):
        if event in ("pause", "resume"):
            send(["progress", event, reason])

    try:
        runtime = WorkerRuntime(lock_path, timing_slots, preload, on_progress)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which gives up after a few tries
        send(["failed", f"{type(e).__name__}: {e}"])
        return
    inbox = _Inbox(send_frames)
    threading.Thread(target=_read, args=(conn_in, inbox, runtime), daemon=True).start()
    threading.Thread(target=_heartbeat, args=(send,), daemon=True).start()
    send(["ready", runtime.ctx.worker_id])
    msg = inbox.start_next()
    while msg is not None:
        _, token, handler, payload, problem = msg
        status, value_text, error, busy = runtime.run(token, handler, payload, problem=problem)
        data = '["done",%d,%s,%s,%s,%s,%d]' % (token, json.dumps(status), value_text, json.dumps(error),
                                                json.dumps(busy), runtime.ctx.compiles)
        msg = inbox.start_next(data.encode())


def main(argv=None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    p = argparse.ArgumentParser(prog="tunefarm.farm.local_worker")
    p.add_argument("--read-fd", type=int, required=True)
    p.add_argument("--write-fd", type=int, required=True)
    p.add_argument("--lock-path", default=None)
    p.add_argument("--timing-slots", type=int, default=None)
    p.add_argument("--preload", action="append", default=[])
    a = p.parse_args(argv)
    serve(mpc.Connection(a.read_fd, writable=False), a.write_fd, a.lock_path, a.timing_slots, a.preload)


if __name__ == "__main__":
    main()
