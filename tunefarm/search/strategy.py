"""What every search strategy shares: fresh samples with dedup, and a bounded number of attempts.

``propose(n)`` returns up to ``n`` programs never measured for the task (by program hash, including programs
measured by earlier jobs). A strategy that cannot find a new program after a bounded number of attempts
marks itself ``exhausted`` (the space is used up; the task ends without error); one whose space never
produced a single valid program raises ``SearchError`` naming the most common reasons.
"""
from __future__ import annotations

import numpy as np

from .errors import SearchError
from .features import FeatureCache
from .program import Program
from .task import TuneTask


class SearchStrategy:
    name = "strategy"

    def __init__(self, task: TuneTask, cost_model=None, features: FeatureCache | None = None,
                 max_attempts: int = 512):
        self.task = task
        self.cost_model = cost_model
        self.features = features or FeatureCache()
        self.max_attempts = max_attempts
        self.exhausted = False
        self.model_version = 0

    # ---------------------------------------------------------------------------------------------------
    def fresh(self, n: int, exclude: set | None = None, attempts: int | None = None) -> list[Program]:
        """Up to ``n`` new valid programs sampled from the space (unique, not known, not in ``exclude``)."""
        out: list[Program] = []
        seen = set(exclude or ())
        budget = attempts if attempts is not None else max(self.max_attempts, 8 * n)
        tried = 0
        while len(out) < n and tried < budget:
            tried += 1
            prog = self.task.sample()
            if prog is None:
                if self.task.n_valid == 0 and tried >= min(budget, self.max_attempts):
                    break
                continue
            if prog.hash in self.task.known_hashes or prog.hash in seen:
                continue
            seen.add(prog.hash)
            out.append(prog)
        self.check_valid()
        return out

    def check_valid(self) -> None:
        """Raise SearchError when the space has produced no valid program at all after the attempt bound."""
        t = self.task
        if t.n_valid == 0 and t.n_invalid >= min(self.max_attempts, 64):
            raise SearchError(f"task {t.name!r}: the space {t.space.name!r} produced no valid schedule in "
                              f"{t.n_invalid} attempts; most common reasons: {t.invalid_summary()}")

    def featurize(self, programs: list[Program]) -> np.ndarray:
        rows = []
        for p in programs:
            if p.features is None:
                p.features = self.features.get(p.hash, p.func)
            rows.append(p.features)
        return np.asarray(rows)

    def score(self, programs: list[Program]) -> None:
        """Set ``p.score`` (higher = predicted faster) where it is missing or from an older model."""
        if self.cost_model is None or not self.cost_model.is_trained:
            return
        todo = [p for p in programs if p.score_version != self.model_version]
        if not todo:
            return
        scores = self.cost_model.predict(self.featurize(todo))
        for p, s in zip(todo, scores):
            p.score = float(s)
            p.score_version = self.model_version

    # ---------------------------------------------------------------------------------------------------
    def propose(self, n: int) -> list[Program]:  # pragma: no cover - interface
        raise NotImplementedError

    def notify(self, programs: list[Program], latencies: list[float | None]) -> None:
        """Measured results of proposed programs (latency in seconds, None for a failure)."""
        for p, lat in zip(programs, latencies):
            self.task.record_measured(p, lat)

    def new_round(self) -> None:
        """The cost model changed: scores computed so far are stale."""
        self.model_version += 1
