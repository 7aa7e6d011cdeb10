"""The Ray actor that measures candidates on one CPU of one node (imported only by RayFarm).

One long-lived actor per CPU keeps its JIT, parsed workloads and reference outputs across trials. Trials run
one at a time in the actor's default concurrency group; a separate ``control`` group answers ``progress`` while
a trial runs (JIT code called through ctypes releases the GIL), which is how the driver tells a slow trial that
waits for the host measurement lock from a hung one.
"""
from __future__ import annotations

import os

import ray

from .candidate import Candidate
from .journal import TrialJournal, journal_dir
from .measure import internal_error_result, make_measurer
from .trial_clock import TrialClock


@ray.remote(concurrency_groups={"control": 1})
class MeasureWorker:
    def __init__(self, measurer: str, lock_path: str | None):
        self._measurer = make_measurer(measurer, lock_path)
        if measurer == "tunefarm":  # pay the heavy imports before reporting ready
            import tunefarm.ir.serialize  # noqa: F401
            import tunefarm.runtime  # noqa: F401
            import tunefarm.schedule  # noqa: F401
        self._clock = TrialClock()
        ctx = ray.get_runtime_context()
        self._journal = TrialJournal(os.path.join(journal_dir(), f"{ctx.get_actor_id()}.json"))

    def info(self) -> dict:
        """Where this actor runs and its trial journal (the driver's readiness check and ping after a crash)."""
        ctx = ray.get_runtime_context()
        return {"pid": os.getpid(), "node_id": ctx.get_node_id(), "host": self._measurer.host,
                "compiles": self._measurer.compiles, "journal": self._journal.snapshot()}

    def measure(self, token: int, wire: list, workload) -> tuple:
        """Measure one candidate; returns ``(token, result dict, compiles so far)``."""
        host = self._measurer.host
        try:
            wire = list(wire)
            wire[1] = workload
            cand = Candidate.from_wire(tuple(wire))
            self._journal.started(token)
            self._clock.start(token)
            result = self._measurer.measure(cand, self._clock)
        except Exception as e:  # noqa: BLE001 - never lose the reply
            result = internal_error_result(e, host)
        finally:
            self._clock.finish()
        out = result.to_dict()
        self._journal.finished(token, out, self._measurer.compiles)
        if getattr(self._measurer, "exit_after_reply_is_journalled", False):
            os._exit(1)  # fault drill (simulate.py's lost_reply): the process dies before Ray sends the reply
        return token, out, self._measurer.compiles

    @ray.method(concurrency_group="control")
    def progress(self) -> dict:
        return self._clock.snapshot()
