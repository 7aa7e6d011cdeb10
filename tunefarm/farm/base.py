"""The Farm interface: measure a batch of candidates, in order or as they complete.

Every farm (LocalFarm: worker processes on this machine; RayFarm: actors on a Ray cluster) promises:
- exactly one ``MeasureResult`` per submitted candidate, whatever happens to workers;
- failures are statuses (``build_error``, ``run_error``, ``wrong_result``, ``timeout``, ``worker_lost``);
- ``farm.target`` is the CPU target it measures on; candidates for another CPU are refused up front.
"""
from __future__ import annotations

import abc
import contextlib
import dataclasses
from collections.abc import Iterator, Sequence

from .candidate import Candidate
from .result import MeasureResult


@dataclasses.dataclass
class FarmStats:
    """Counters of a farm's life; ``driver_cpu_secs`` is the CPU the driver (this process) spent in submit."""

    submitted: int = 0
    completed: int = 0
    requeued: int = 0
    recovered: int = 0   # results a crashed worker's journal gave back (the reply was lost with the process)
    worker_lost: int = 0
    timeouts: int = 0
    workers_started: int = 0
    workers_recycled: int = 0
    max_in_flight: int = 0
    driver_cpu_secs: float = 0.0

    @property
    def driver_cpu_per_trial(self) -> float:
        return self.driver_cpu_secs / self.completed if self.completed else 0.0


class FarmError(RuntimeError):
    """The farm itself cannot work (no worker could start, no node matches the target...)."""


class Farm(abc.ABC):
    """Builds, validates and times candidates. Use as a context manager (or call ``close``)."""

    def __init__(self) -> None:
        self.stats = FarmStats()
        self._closed = False
        self._busy = False
        self._target_cache: dict[str, bool] = {}

    @property
    @abc.abstractmethod
    def target(self):
        """The ``tunefarm.target.Target`` of the machines this farm measures on."""

    @property
    @abc.abstractmethod
    def num_workers(self) -> int:
        """How many workers measure in parallel right now."""

    @abc.abstractmethod
    def submit(self, candidates: Sequence[Candidate]) -> Iterator[tuple[int, MeasureResult]]:
        """Yield ``(index, result)`` for every candidate, in completion order."""

    def measure(self, candidates: Sequence[Candidate]) -> list[MeasureResult]:
        """Measure all candidates; results in the candidates' order."""
        results: list[MeasureResult | None] = [None] * len(candidates)
        for i, r in self.submit(candidates):
            if results[i] is not None:
                raise FarmError(f"farm returned two results for candidate {i}")
            results[i] = r
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:
            raise FarmError(f"farm returned no result for candidates {missing[:10]}")
        return results  # type: ignore[return-value]

    def close(self) -> None:
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- helpers for subclasses
    def _check_candidates(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        if self._closed:
            raise FarmError("this farm is closed")
        cands = list(candidates)
        for i, c in enumerate(cands):
            if not isinstance(c, Candidate):
                raise TypeError(f"candidate {i} is a {type(c).__name__}, expected tunefarm.farm.Candidate")
            if not self._target_matches(c.target):
                raise ValueError(f"candidate {i} is for target {c.target!r} but this farm measures on "
                                 f"{self.target} (a different CPU); use a farm whose nodes match")
        return cands

    @contextlib.contextmanager
    def _batch(self):
        """One batch at a time: the workers are shared, so two interleaved batches would mix their replies."""
        if self._busy:
            raise FarmError("a batch is already being measured on this farm; finish iterating it first")
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    def _target_matches(self, target_text: str) -> bool:
        """Same CPU name and features as the farm's target (core counts may differ: they are build options)."""
        ok = self._target_cache.get(target_text)
        if ok is None:
            from tunefarm.target import Target

            try:
                t = Target(target_text)
            except (TypeError, ValueError) as e:
                raise ValueError(f"bad candidate target {target_text!r}: {e}") from None
            mine = self.target
            ok = t.cpu == mine.cpu and t.features == mine.features
            self._target_cache[target_text] = ok
        return ok
