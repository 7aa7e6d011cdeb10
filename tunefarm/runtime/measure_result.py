"""The MeasureResult contract: what measuring one candidate produced.

Every layer that measures, stores or learns from candidates speaks this type (the farm produces it, the
database stores it, the tuning job learns from it), so it lives below all of them. A failure is an explicit
status, never a magic large time, so the database, the cost model and the report can tell them apart.
"""
from __future__ import annotations

import dataclasses
import enum
import statistics


class MeasureStatus(str, enum.Enum):
    """Why a candidate has (or has not) a latency. The string values are stored in databases."""

    OK = "ok"
    BUILD_ERROR = "build_error"
    RUN_ERROR = "run_error"
    WRONG_RESULT = "wrong_result"
    TIMEOUT = "timeout"
    WORKER_LOST = "worker_lost"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclasses.dataclass
class MeasureResult:
    """Outcome of building, validating and timing one (workload, trace) candidate.

    ``run_secs`` holds one entry per timing repeat (seconds per call); it is empty unless ``status`` is OK.
    """

    status: MeasureStatus
    run_secs: list[float] = dataclasses.field(default_factory=list)
    build_secs: float = 0.0
    error: str | None = None
    host: str = ""

    def __post_init__(self) -> None:
        self.status = MeasureStatus(self.status)
        if self.status is MeasureStatus.OK and not self.run_secs:
            raise ValueError("an OK MeasureResult needs at least one run time")

    @property
    def ok(self) -> bool:
        return self.status is MeasureStatus.OK

    @property
    def median_secs(self) -> float | None:
        return statistics.median(self.run_secs) if self.run_secs else None

    def to_dict(self) -> dict:
        return {"status": self.status.value, "run_secs": list(self.run_secs), "build_secs": self.build_secs,
                "error": self.error, "host": self.host}

    @classmethod
    def from_dict(cls, d: dict) -> "MeasureResult":
        return cls(MeasureStatus(d["status"]), list(d.get("run_secs") or []), float(d.get("build_secs") or 0.0),
                   d.get("error"), d.get("host") or "")
