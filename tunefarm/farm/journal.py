"""A worker's journal of its recent trials, on its node's disk, read back by the worker's next incarnation.

Why: with two calls queued per actor, a candidate that crashes the actor can take down the reply of the call
that finished just before it (Ray sends a reply after the method returns, and the process may die first). The
driver then sees two failed calls and cannot tell the crasher from the innocent one. The journal survives the
process (not the node): each trial is written as started (with the process id) and, once measured, with its
result. The restarted actor returns the journal with its first ping, so the driver recovers a finished
trial's result, blames only the trial that was running when a process died, and re-queues calls that never
started.
"""
from __future__ import annotations

import json
import os
import tempfile
import uuid

_KEEP = 64  # entries kept; far more than the calls one actor ever has queued


def journal_dir() -> str:
    """The Ray session's directory on this node (rotated with the session), else the temp directory."""
    try:
        import ray._private.worker as ray_worker

        path = os.path.join(ray_worker.global_worker.node.get_session_dir_path(), "tunefarm-journals")
    except Exception:  # noqa: BLE001 - private API moved or not in a Ray worker: any node-local place works
        path = os.path.join(tempfile.gettempdir(), "tunefarm-journals")
    os.makedirs(path, exist_ok=True)
    return path


class TrialJournal:
    """Append-style record ``[{token, pid, result?, compiles?}]`` (``pid``: the writing incarnation), rewritten atomically (``os.replace``)."""

    def __init__(self, path: str):
        self.path = path
        self.pid = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"  # this incarnation (pids can be reused)
        self.entries = self._read()
        self.broken = False  # a write failed: the journal is off and the driver falls back to inference

    def _read(self) -> list[dict]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):  # first incarnation, or a write cut short by a crash: nothing to recover
            return []
        return [e for e in data if isinstance(e, dict) and isinstance(e.get("token"), int)] \
            if isinstance(data, list) else []

    def started(self, token: int) -> None:
        self.entries.append({"token": token, "pid": self.pid})
        self._write()

    def finished(self, token: int, result: dict, compiles: int) -> None:
        for e in reversed(self.entries):
            if e["token"] == token and e.get("pid") == self.pid:
                e["result"], e["compiles"] = result, compiles
                break
        self._write()

    def _write(self) -> None:
        if self.broken:
            return
        del self.entries[:-_KEEP]
        tmp = f"{self.path}.{self.pid}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.entries, f)
            os.replace(tmp, self.path)
        except OSError:  # a full disk must not fail trials; a later incarnation must not trust a stale file
            self.broken = True
            try:
                os.remove(self.path)
            except OSError:
                pass

    def snapshot(self) -> dict | None:
        """``{"done": {token: [result, compiles]}, "crashed": [tokens]}`` as seen by this incarnation.

        ``crashed``: trials started by an earlier process of this actor that never finished (that process died
        under them). Trials of the live process that are still running are in neither.
        """
        if self.broken:
            return None
        done, crashed = {}, []
        for e in self.entries:
            if "result" in e:
                done[e["token"]] = [e["result"], e.get("compiles", 0)]
            elif e.get("pid") != self.pid:
                crashed.append(e["token"])
        return {"done": done, "crashed": crashed}
