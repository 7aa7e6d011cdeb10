"""Record types: what the farm hands to the database, and what the database hands back.

``Record`` is the input of :meth:`Database.commit_records` (one measured candidate). ``TuningRecord`` is
what :meth:`Database.top_k` / :meth:`Database.best` return: the stored row, with the trace as a JSON value
and a lazy ``.trace`` that replays nothing, it only parses (via the schedule layer, imported on first use so
the database never depends on it at import time).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from tunefarm.database.errors import InvalidRecordError
from tunefarm.database.trace_format import trace_to_text
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus


@dataclasses.dataclass
class Record:
    """One measured candidate, as committed by the search/farm.

    ``created`` (unix seconds) defaults to the commit time; set it only when replaying history. ``trial`` None
    is numbered at commit: the next number of its workload and target, in commit order across jobs.
    """

    workload_key: str
    trace_json: Any
    program_hash: str | None
    target: str
    result: MeasureResult
    job_id: int | None = None
    trial: int | None = 0
    created: float | None = None
    model_version: int | None = None  # the cost model version that chose it (0: chosen before any model)
    cpu_model: str | None = None      # the measuring host's CPU model name (provenance: the target string is LLVM's)

    @classmethod
    def coerce(cls, obj: Any) -> "Record":
        """Accept a ``Record``, a mapping of its field names, or a tuple in field order."""
        if isinstance(obj, Record):
            return obj
        try:
            if isinstance(obj, Mapping):
                rec = cls(**obj)
            elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
                rec = cls(*obj)
            else:
                raise TypeError(f"expected a Record, a mapping or a tuple, got {type(obj).__name__}")
        except TypeError as e:
            raise InvalidRecordError(f"bad record: {e}") from None
        return rec


@dataclasses.dataclass(frozen=True)
class RunStats:
    """Latency summary of one result (seconds); all ``None`` unless the status is OK."""

    median: float | None
    mean: float | None
    min: float | None

    @classmethod
    def of(cls, result: MeasureResult) -> "RunStats":
        secs = [float(s) for s in result.run_secs]
        for s in secs:
            if not math.isfinite(s) or s < 0:
                raise InvalidRecordError(f"run_secs must be finite and >= 0, got {s!r}")
        if result.status is not MeasureStatus.OK or not secs:
            return cls(None, None, None)
        return cls(statistics.median(secs), math.fsum(secs) / len(secs), min(secs))


@dataclasses.dataclass(frozen=True)
class TuningRecord:
    """A stored measurement. ``trace_json`` is the JSON value; ``trace`` parses it into a ``Trace``."""

    record_id: int
    workload_key: str
    workload_name: str
    target: str
    trace_json: Any
    program_hash: str | None
    result: MeasureResult
    job_id: int | None
    trial: int
    created: _dt.datetime
    flop: float | None = None
    confirmed: tuple | None = None    # (median, p10, p90) seconds of its confirmation on a quiet host, if any
    codegen: tuple | None = None      # (llvmlite, LLVM) versions of the job that measured it; None: unknown
    cpu_model: str | None = None
    source: str | None = None         # the database it was read from, when several were read as one (layered)

    @property
    def trusted_secs(self) -> float | None:
        """The record's most trusted figure: the confirmed median when there is one, else the farm's."""
        return self.confirmed[0] if self.confirmed else self.result.median_secs

    @property
    def rank(self) -> tuple:
        """What ``best`` / ``top_k`` order by: confirmed records first, by their confirmed median, then the
        others by the farm's (``provenance.TRUSTED_ORDER``)."""
        return self.confirmed is None, self.trusted_secs

    @property
    def status(self) -> MeasureStatus:
        return self.result.status

    @property
    def median_secs(self) -> float | None:
        return self.result.median_secs

    @property
    def median_us(self) -> float:
        m = self.result.median_secs
        return math.nan if m is None else m * 1e6

    @property
    def gflops(self) -> float:
        m = self.result.median_secs
        if not m or not self.flop:
            return math.nan
        return self.flop / m / 1e9

    @property
    def trace(self):
        """The schedule-layer ``Trace`` (imported lazily: the database must not depend on the schedule layer)."""
        from tunefarm.schedule.trace import Trace  # on use: `import tunefarm.database` loads no schedule layer

        return Trace.from_json(self.trace_json)


def nonempty_str(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidRecordError(f"{what} must be a non-empty string, got {value!r}")
    return value


def opt_int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -2**63 <= value < 2**63:
        raise InvalidRecordError(f"{what} must be a 64-bit integer or None, got {value!r}"[:200])
    return value


def prepare_row(obj: Any, created_default: int) -> tuple:
    """Validate one record and return its column values (workload key and target not yet resolved to ids)."""
    rec = Record.coerce(obj)
    nonempty_str(rec.workload_key, "workload_key")
    nonempty_str(rec.target, "target")
    result = rec.result
    if isinstance(result, Mapping):
        try:
            result = MeasureResult.from_dict(result)
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidRecordError(f"bad measure result {result!r}: {e}") from None
    if not isinstance(result, MeasureResult):
        raise InvalidRecordError(f"result must be a MeasureResult, got {type(result).__name__}")
    if rec.program_hash is not None and not isinstance(rec.program_hash, str):
        raise InvalidRecordError(f"program_hash must be a string or None, got {rec.program_hash!r}")
    job_id = opt_int(rec.job_id, "job_id")
    trial = opt_int(rec.trial, "trial")
    if trial is not None and trial < 0:
        raise InvalidRecordError(f"trial must be an integer >= 0 or None, got {rec.trial!r}")
    created = created_default
    if rec.created is not None:
        if isinstance(rec.created, bool) or not isinstance(rec.created, (int, float)) or not math.isfinite(rec.created):
            raise InvalidRecordError(f"created must be finite unix seconds, got {rec.created!r}")
        created = round(float(rec.created) * 1e6)
    stats = RunStats.of(result)
    build = float(result.build_secs or 0.0)
    if not math.isfinite(build):
        raise InvalidRecordError(f"build_secs must be finite, got {build!r}")
    error = None if result.error is None else str(result.error)
    run_json = json.dumps([float(s) for s in result.run_secs])
    return (rec.workload_key, rec.target, job_id, trial, trace_to_text(rec.trace_json), rec.program_hash,
            result.status.value, run_json, stats.median, stats.mean, stats.min, build, error,
            str(result.host or ""), created, opt_int(rec.model_version, "model_version"),
            None if rec.cpu_model is None else nonempty_str(rec.cpu_model, "cpu_model")[:200])
