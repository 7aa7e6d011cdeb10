"""A tuning task: one workload with its space and postprocessors, turning designs into programs.

The task turns design traces into ``Program``s (replay + postprocess + hash) and counts why candidates were
invalid (to explain a space that yields nothing). It is what a worker rebuilds to do search work
(``generate.TaskCache``); what the driver knows about the task's programs is ``strategy.SearchStrategy``.
"""
from __future__ import annotations

import collections
import random

from ..ir.function import PrimFunc
from ..ir.structural import workload_key
from ..schedule import Schedule, ScheduleError, Trace
from ..te.flop import estimate_flop
from .errors import SearchError
from .postprocs import PostprocError, apply_postprocs
from .program import Program, decisions_key, program_hash
from .space import SpaceError, SpaceGenerator
from .task_scheduler import TaskState

class TuneTask:
    """``func`` is the unscheduled PrimFunc; ``key`` its workload key; ``state`` what the progress table shows."""

    def __init__(self, name: str, func: PrimFunc, space: SpaceGenerator, postprocs, weight: float = 1.0,
                 seed: int = 0, key: str | None = None, flop: float | None = None):
        if not isinstance(func, PrimFunc):
            raise TypeError(f"task {name!r}: expected a PrimFunc, got {type(func).__name__}")
        self.name = name
        self.func = func
        self.space = space
        self.postprocs = list(postprocs)
        self.key = key or workload_key(func)
        if flop is None:
            try:
                flop = float(estimate_flop(func))
            except Exception:  # noqa: BLE001 - FLOP counts are informative only
                flop = None
        self.state = TaskState(name, float(weight), flop)
        self.rng = random.Random(seed)
        self.n_valid = 0
        self.n_invalid = 0
        self.invalid_reasons: collections.Counter = collections.Counter()
        self._by_decisions: dict = {}           # decisions key -> Program | None (invalid)

    # ---------------------------------------------------------------------------------------------------
    def _finish(self, design: Trace, sch) -> Program | None:
        try:
            apply_postprocs(sch, self.postprocs)
        except PostprocError as e:
            self.count_invalid(f"postproc: {e}")
            return None
        try:
            h = program_hash(sch.mod["main"])
        except Exception as e:  # noqa: BLE001 - an unhashable program is an invalid one
            self.count_invalid(f"hash: {type(e).__name__}: {e}")
            return None
        self.n_valid += 1
        return Program(design, sch, h)

    def count_invalid(self, reason: str) -> None:
        self.n_invalid += 1
        self.invalid_reasons[reason.split("\n")[0][:160]] += 1

    def sample(self) -> Program | None:
        """One fresh sample of the space (None if that sample was invalid)."""
        seed = self.rng.randrange(1 << 62)
        try:
            sch = self.space.sample(self.func, seed)
        except ScheduleError as e:
            self.count_invalid(f"space: {e}")
            return None
        except SpaceError:
            raise
        except Exception as e:  # noqa: BLE001 - a bug in a user's schedule function: stop with its message
            raise SearchError(f"task {self.name!r}: the space {self.space.name!r} raised "
                              f"{type(e).__name__}: {e}") from e
        design = sch.trace
        key = decisions_key(design)
        got = self._by_decisions.get(key, False)
        if got is not False:
            return got
        prog = self._finish(design, sch)
        self._remember(key, prog)
        return prog

    def from_design(self, design: Trace) -> Program | None:
        """Replay a design trace (e.g. a mutant) and postprocess it; None if a decision no longer fits."""
        key = decisions_key(design)
        got = self._by_decisions.get(key, False)
        if got is not False:
            return got
        try:
            sch = Schedule.from_trace(design, self.func)
        except ScheduleError as e:
            self.count_invalid(f"replay: {e.reason if hasattr(e, 'reason') else e}")
            self._remember(key, None)
            return None
        prog = self._finish(design, sch)
        self._remember(key, prog)
        return prog

    def _remember(self, key, prog) -> None:
        if len(self._by_decisions) > 100_000:
            self._by_decisions.clear()
        self._by_decisions[key] = prog

    # ---------------------------------------------------------------------------------------------------
    def invalid_summary(self, n: int = 3) -> str:
        if not self.invalid_reasons:
            return "no reason recorded"
        return "; ".join(f"{r} (x{c})" for r, c in self.invalid_reasons.most_common(n))
