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

_KEEP = 64  # entries kept: more than the items one actor has queued (inflight_per_worker)

# The one fault-drill hook in the worker runtime: a handler that sets this key in ``WorkerContext.state`` makes
# the Ray worker exit right after journalling the item's result, before Ray sends the reply (the lost reply the
# journal exists for; nothing else produces it on demand). tunefarm.testing's drills set it; nothing else does.
DRILL_EXIT_AFTER_JOURNAL = "tunefarm.farm.journal:drill_exit_after_journal"


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
    """Append-only JSON lines ``{token, pid[, result, compiles]}`` (``pid``: the writing incarnation).

    One ``write`` per event, no fsync: the file has to outlive the process, not the machine. A line cut short
    by a crash is ignored on reading. The file is compacted to its last ``_KEEP`` entries now and then.
    """

    def __init__(self, path: str):
        self.path = path
        self.pid = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"  # this incarnation (pids can be reused)
        self.entries = self._read()
        self.broken = False  # a write failed: the journal is off and the driver falls back to inference
        self._file = None
        self._lines = 0

    def _read(self) -> list[dict]:
        entries: dict[int, dict] = {}
        try:
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        e = json.loads(line)
                    except ValueError:  # the tail of a crashed write
                        continue
                    if isinstance(e, dict) and isinstance(e.get("token"), int):
                        entries.setdefault(e["token"], {}).update(e)
        except OSError:  # first incarnation: nothing to recover
            return []
        return list(entries.values())[-_KEEP:]

    def started(self, token: int) -> None:
        e = {"token": token, "pid": self.pid}
        self.entries.append(e)
        self._append(e)

    def finished(self, token: int, result: dict, compiles: int) -> None:
        e = {"token": token, "pid": self.pid, "result": result, "compiles": compiles}
        for old in reversed(self.entries):
            if old["token"] == token and old.get("pid") == self.pid:
                old.update(e)
                break
        self._append(e)

    def _append(self, entry: dict) -> None:
        if self.broken:
            return
        try:
            if self._file is None or self._lines >= 8 * _KEEP:  # (re)start the file from the kept entries
                del self.entries[:-_KEEP]
                if self._file is not None:
                    self._file.close()
                tmp = f"{self.path}.{self.pid}.tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    f.writelines(json.dumps(e) + "\n" for e in self.entries)
                os.replace(tmp, self.path)
                self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - lives with the actor
                self._lines = len(self.entries)
                return
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()
            self._lines += 1
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
