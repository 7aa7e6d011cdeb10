"""The Ray actor that runs work items on one CPU of one node (imported only by RayFarm).

One actor class serves every handler. A long-lived actor per CPU keeps its handlers' per-process caches
(``WorkerContext.state``: parsed workloads, references, compiled programs) and the shared texts it fetched.
The driver sends items in batches (one actor call runs several items in turn and returns their outcomes
together: an actor call costs the driver far more CPU than an item's bookkeeping). Items run one at a time in
the actor's default concurrency group; a separate ``control`` group answers ``progress`` while an item runs
(JIT code called through ctypes releases the GIL), which is how the driver tells a slow item that waits for the
host measurement lock from a hung one, and which item of a batch is running; ``hand_back`` (its node is
being drained) makes the items of its batches that have not started come back unrun. Every item is journalled
(journal.py) so that the actor's next incarnation can tell the driver what its dead process did.
"""
from __future__ import annotations

import json
import os
import zlib

import ray

from .journal import DRILL_EXIT_AFTER_JOURNAL, TrialJournal, journal_dir
from .worker_runtime import WorkerRuntime

# Values longer than this go back zlib-compressed (bytes). A search reply of 32 programs is some 120 KB of
# trace and feature text, over Ray's 100 KB limit for returning a value inline: Ray then puts the whole batch's
# reply in the object store, and the actor took a median 60 ms (p90 140 ms) after such a batch before starting
# its next one. Compressed it is some 13 KB, for about 1 ms of the worker's CPU and 0.2 ms of the driver's (a
# trained cost model's reply: 220 KB of base64, 80 KB compressed, 2 ms and 0.6 ms).
PACK_ABOVE = 16384


@ray.remote(concurrency_groups={"control": 1})
class FarmWorker:
    def __init__(self, lock_path: str | None, timing_slots: int | None, preload: list[str], max_compiles: int):
        self._runtime = WorkerRuntime(lock_path, timing_slots, preload)
        self._max_compiles = max_compiles
        ctx = ray.get_runtime_context()
        self._journal = TrialJournal(os.path.join(journal_dir(), f"{ctx.get_actor_id()}.json"))
        self._handing_back = False

    def info(self) -> dict:
        """Where this actor runs and its journal (the driver's readiness check and its ping after a crash; the
        file and this process's id in it for fault drills, which read it while the process is stopped)."""
        ctx = self._runtime.ctx
        return {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id(), "host": ctx.host,
                "worker": ctx.worker_id, "compiles": ctx.compiles, "journal": self._journal.snapshot(),
                "journal_path": self._journal.path, "journal_pid": self._journal.pid}

    @ray.method(enable_task_events=False)  # (Ray's per-call task events cost the driver and tell us nothing)
    def run(self, batch: list) -> list:
        """Run the items of ``batch`` in turn, each ``(token, handler, payload JSON, shared keys, shared
        references)``; returns ``[(token, outcome dict, compiles so far), ...]`` in the same order. (One
        argument: Ray serializes each argument on its own, and the driver pays for that on every call.)

        ``shared keys``: the shared texts the item uses; ``shared references``: object references of those the
        driver has not sent to this incarnation yet (fetched once). A text this process lacks and was not sent
        (the actor restarted since) makes the outcome ``resend``: the driver sends the item again, with
        references. After ``hand_back``, or once the worker has compiled ``max_compiles`` programs (the driver
        replaces it), the items not started yet come back as ``unrun``.
        """
        return [self._run_one(*call) for call in batch]

    def _run_one(self, token: int, handler: str, payload_text: str, shared_keys: list, shared_refs: dict) -> tuple:
        rt = self._runtime
        if self._handing_back or rt.ctx.compiles >= self._max_compiles:  # (a retiring worker starts no more)
            return token, {"status": "unrun", "worker": rt.ctx.worker_id}, rt.ctx.compiles
        if any(k not in rt.ctx.shared and k not in shared_refs for k in shared_keys):
            return token, {"status": "resend", "worker": rt.ctx.worker_id}, rt.ctx.compiles
        self._journal.started(token)
        status, value_text, error, busy = rt.run(token, handler, json.loads(payload_text),
                                                 prepare=lambda: rt.fetch_shared(shared_refs, ray.get))
        out = {"status": status, "value": value_text, "error": error, "busy_secs": busy,
               "worker": rt.ctx.worker_id}
        self._journal.finished(token, out, rt.ctx.compiles)
        if rt.ctx.state.pop(DRILL_EXIT_AFTER_JOURNAL, False):
            os._exit(1)  # fault drill (journal.py): the process dies before Ray sends the reply
        if value_text is not None and len(value_text) > PACK_ABOVE:  # (a copy: the journal keeps ``out``)
            out = dict(out, value=zlib.compress(value_text.encode("utf-8"), 1))
        return token, out, rt.ctx.compiles

    @ray.method(concurrency_group="control", enable_task_events=False)
    def progress(self) -> dict:
        return self._runtime.clock.snapshot()

    @ray.method(concurrency_group="control")
    def hand_back(self) -> bool:
        """Start no further item: its node is going away (drained for preemption or scale-down)."""
        self._handing_back = True
        return True
