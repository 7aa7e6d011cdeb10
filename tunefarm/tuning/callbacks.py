"""What the tuning job does with each measured result: a list of measure callbacks (MetaSchedule's
``MeasureCallback`` list, Optuna's ``callbacks=``).

Every measurement the job receives becomes one ``Measured`` (the candidate, its ``MeasureResult``, the cost
model version that picked it), and each callback of the job's list is called with the task and it, in list
order, once per result. ``MeasureCallback.Default()`` is the job's own list: the record for the database (stored
by the driver's next transaction), the search strategy, the cost model's samples, the farm's metrics, and the
task (its counters, the failure watch, its scheduler rounds and the progress table).

A user's callbacks (``tune(..., callbacks=[cb])``) come after them: a ``MeasureCallback``, or any callable
``cb(task, measured)`` (``task`` is the job's ``JobTask``: ``.name``, ``.key``, ``.state``). One that raises is
reported once, with its traceback, and not called again; the job goes on.
"""
from __future__ import annotations

import abc
import dataclasses
import logging
import time

from ..database import Record
from ..farm import Done, DoneStatus
from ..runtime.measure_result import MeasureResult, MeasureStatus
from .patience import STATUS as PATIENCE

log = logging.getLogger("tunefarm.tuning")

_LOST = {DoneStatus.LOST: MeasureStatus.WORKER_LOST, DoneStatus.TIMEOUT: MeasureStatus.TIMEOUT,
         DoneStatus.ERROR: MeasureStatus.RUN_ERROR}
_MAX_ERROR_TEXT = 2000


@dataclasses.dataclass
class Measured:
    """One measured candidate: what a callback receives."""

    candidate: object        # the search's ``Candidate`` (program hash, trace text, features, sketch, origin)
    result: MeasureResult
    model_version: int       # the cost model version that scored the pick (0: before any model)
    replayed: bool = False   # the worker that measured it had not produced it and replayed its trace
    cpu_model: str | None = None  # provenance: the CPU that timed it (None when the item was lost)

    @property
    def latency(self) -> float | None:
        """What learning uses: the fastest repeat, or None when the measurement failed."""
        return min(self.result.run_secs) if self.result.ok else None

    @classmethod
    def of(cls, done: Done, candidate, model_version: int) -> "Measured":
        """The one translation of a measurement item's ``Done``: a failed item is a failed measurement."""
        if done.status is DoneStatus.OK:
            try:
                return cls(candidate, MeasureResult.from_dict(done.value["result"]), model_version,
                           bool(done.value.get("replayed")), done.value.get("cpu_model"))
            except (TypeError, KeyError, ValueError, AttributeError) as e:
                status, text = MeasureStatus.RUN_ERROR, f"internal error in the worker: no MeasureResult ({e})"
        else:
            status, text = _LOST[done.status], done.error or ""
        return cls(candidate, MeasureResult(status, [], 0.0, text[:_MAX_ERROR_TEXT], done.host), model_version)


class MeasureCallback(abc.ABC):
    """Called by the job once per measured result, with the job, the task and the ``Measured``."""

    @abc.abstractmethod
    def apply(self, job, task, measured: Measured) -> None:
        """Take one result (see module doc)."""

    @staticmethod
    def Default() -> list["MeasureCallback"]:  # noqa: N802 - MetaSchedule's name
        """The job's own consumers, in the order they see each result."""
        return [AddToDatabase(), UpdateSearch(), UpdateCostModel(), RecordFarmMetrics(), UpdateTask()]


class AddToDatabase(MeasureCallback):
    """The result's record, held until the driver's next transaction stores it (``take``): numbered there,
    with the claims of that step."""

    def __init__(self):
        self.records: list[Record] = []
        self.since = 0.0  # when the oldest record held arrived

    def apply(self, job, task, measured: Measured) -> None:
        c = measured.candidate
        if not self.records:
            self.since = time.monotonic()
        self.records.append(Record(task.key, c.trace, c.hash, job.target, measured.result, job.job_id, None,
                                   model_version=measured.model_version, cpu_model=measured.cpu_model))

    def take(self, older_than_s: float = 0.0) -> list[Record]:
        """The records held, if the oldest is at least ``older_than_s`` old (else none); they are given once."""
        if not self.records or time.monotonic() - self.since < older_than_s:
            return []
        out, self.records = self.records, []
        return out


class UpdateSearch(MeasureCallback):
    """The strategy's population, sketches and dedup set."""

    def apply(self, job, task, measured: Measured) -> None:
        task.search.measured_result(measured.candidate, measured.latency)


class UpdateCostModel(MeasureCallback):
    """A training sample (a failed measurement is one too: the model learns to avoid it)."""

    def apply(self, job, task, measured: Measured) -> None:
        job.model.add([measured.candidate.features], [task.key], [measured.latency])


class RecordFarmMetrics(MeasureCallback):
    """The farm's per-trial metrics (RayFarm exports them to Ray's dashboard and Prometheus)."""

    def apply(self, job, task, measured: Measured) -> None:
        job.farm.record_trial(measured.result, task.name)


class UpdateTask(MeasureCallback):
    """The task's counters, its failure watch, its patience (a task that stopped improving ends: its share of
    the budget goes to the tasks still improving), and at the end of a round the scheduler and the progress
    table."""

    def apply(self, job, task, measured: Measured) -> None:
        r = measured.result
        if job.patience.measured(task.name, r.median_secs if r.ok else None):
            task.end(PATIENCE)
        if task.measured(r, job.failures, job.trials_per_round):
            job.progress.round(job.tasks.index(task), job.trials_per_round)


class UserCallback(MeasureCallback):
    """A callback the user passed: called as ``fn(task, measured)`` (or ``apply`` for a ``MeasureCallback``);
    the first exception is logged with its traceback and the callback is not called again."""

    def __init__(self, fn):
        if not (isinstance(fn, MeasureCallback) or callable(fn)):
            raise TypeError(f"a measure callback must be a MeasureCallback or a callable (task, measured), "
                            f"got {type(fn).__name__}")
        self.fn = fn
        self.failed = False

    def apply(self, job, task, measured: Measured) -> None:
        if self.failed:
            return
        try:
            if isinstance(self.fn, MeasureCallback):
                self.fn.apply(job, task, measured)
            else:
                self.fn(task, measured)
        except Exception as e:  # noqa: BLE001 - a user's callback never breaks the job
            self.failed = True
            log.error("measure callback %s raised %s: %s; it is not called again in this job",
                      getattr(self.fn, "__name__", type(self.fn).__name__), type(e).__name__, e, exc_info=True)
