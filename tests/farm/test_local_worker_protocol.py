"""The LocalFarm worker's pipe protocol, read from a real worker process: when the next item is already queued,
an item's ``done`` and the next item's ``start`` arrive in one write (the driver wakes once per item, not
twice); the last item's ``done`` comes alone. The worker writes to a SOCK_SEQPACKET socket instead of its pipe
here, so that each of its writes is read back as one packet."""
from __future__ import annotations

import json
import os
import select
import socket
import struct
import subprocess
import sys
import time


def _frame(obj) -> bytes:
    data = json.dumps(obj).encode()
    return struct.pack("!i", len(data)) + data


def _frames(chunk: bytes) -> list:
    out, i = [], 0
    while i < len(chunk):
        (n,) = struct.unpack("!i", chunk[i:i + 4])
        out.append(json.loads(chunk[i + 4:i + 4 + n]))
        i += 4 + n
    assert i == len(chunk), "a read ended inside a message"
    return out


def test_a_done_and_the_next_start_arrive_in_one_write():
    from_child, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    to_child_r, to_child_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "tunefarm.farm.local_worker", "--read-fd", str(to_child_r),
                             "--write-fd", str(child_end.fileno())], pass_fds=(to_child_r, child_end.fileno()),
                            stdin=subprocess.DEVNULL)
    os.close(to_child_r)
    child_end.close()
    to_parent_r = from_child.fileno()
    chunks: list[list] = []  # the messages of each write
    try:
        os.write(to_child_w, _frame(["run", 1, "tunefarm.testing.handlers:spin", {"secs": 0.3}, {}])
                 + _frame(["run", 2, "tunefarm.testing.handlers:spin", {"secs": 0.3}, {}])
                 + _frame(["run", 3, "tunefarm.testing.handlers:spin", {"secs": 0.3}, {}]))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(m[:2] == ["done", 3] for c in chunks for m in c):
            ready, _, _ = select.select([to_parent_r], [], [], 1.0)
            if ready:
                chunks.append([m for m in _frames(from_child.recv(1 << 20)) if m != ["alive"]])
        os.write(to_child_w, _frame(None))
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(to_child_w)
        from_child.close()
    kinds = [[m[:2] for m in c if m[0] in ("start", "done")] for c in chunks]
    kinds = [k for k in kinds if k]
    assert next(k for k in kinds if ["done", 1] in k) == [["done", 1], ["start", 2]]
    assert next(k for k in kinds if ["done", 2] in k) == [["done", 2], ["start", 3]]
    assert next(k for k in kinds if ["done", 3] in k) == [["done", 3]]  # nothing was queued behind it
    order = [m for k in kinds for m in k]
    assert order == [["start", 1], ["done", 1], ["start", 2], ["done", 2], ["start", 3], ["done", 3]]
