"""Entry point of a LocalFarm worker process: ``python -m tunefarm.farm.local_worker --read-fd R --write-fd W``.

Reads JSON requests ``[token, wire candidate]`` (``null`` means exit) from one pipe and writes JSON messages to
the other: ``["ready", pid]`` once imports are done, ``["progress", "pause"|"resume", reason]`` around lock
waits and reference computations, ``["result", token, result dict, compiles]`` per trial.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing.connection as mpc
import os
import signal


def _send(conn, obj) -> None:
    conn.send_bytes(json.dumps(obj, separators=(",", ":")).encode())


def serve(conn_in, conn_out, measurer_kind: str, lock_path: str | None) -> None:
    from .candidate import Candidate
    from .measure import internal_error_result, make_measurer
    from .progress import Progress

    try:
        measurer = make_measurer(measurer_kind, lock_path)
        if measurer_kind == "tunefarm":  # pay the heavy imports before reporting ready
            import tunefarm.ir.serialize  # noqa: F401
            import tunefarm.runtime  # noqa: F401
            import tunefarm.schedule  # noqa: F401
    except Exception as e:  # noqa: BLE001 - reported to the parent, which gives up after a few tries
        _send(conn_out, ["failed", f"{type(e).__name__}: {e}"])
        return

    def on_change(event, reason):
        if event in ("pause", "resume"):
            _send(conn_out, ["progress", event, reason])

    progress = Progress(on_change)
    _send(conn_out, ["ready", os.getpid()])
    while True:
        try:
            msg = json.loads(conn_in.recv_bytes())
        except (EOFError, OSError):
            return  # the parent is gone
        if msg is None:
            return
        token, wire = msg
        try:
            cand = Candidate.from_wire(tuple(wire))
            progress.start(token)
            result = measurer.measure(cand, progress)
        except Exception as e:  # noqa: BLE001 - never lose the reply
            result = internal_error_result(e, getattr(measurer, "host", ""))
        progress.finish()
        _send(conn_out, ["result", token, result.to_dict(), measurer.compiles])


def main(argv=None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    p = argparse.ArgumentParser(prog="tunefarm.farm.local_worker")
    p.add_argument("--read-fd", type=int, required=True)
    p.add_argument("--write-fd", type=int, required=True)
    p.add_argument("--measurer", default="tunefarm")
    p.add_argument("--lock-path", default=None)
    a = p.parse_args(argv)
    serve(mpc.Connection(a.read_fd, writable=False), mpc.Connection(a.write_fd, readable=False),
          a.measurer, a.lock_path)


if __name__ == "__main__":
    main()
