"""The best stored schedule of a function: its fastest successful record, and that record's trace replayed.

Only records of this process's code generator count unless asked (``code_versions.VersionFilter``).
Everything that uses tuning results starts here: ``tunefarm.compile`` of a tuned function, the kernels of a
whole model, ``tunefarm bench``, the main job's kernel table and the TVM facade's ``compile_tir``. The trace
(``TuningRecord.trace``) is replayed by ``Schedule.from_trace``; both import the schedule layer on first use.
"""
from __future__ import annotations

from typing import NamedTuple

from tunefarm.database.base import TraceDatabase
from tunefarm.database.code_versions import VersionFilter
from tunefarm.database.errors import UnknownWorkloadError
from tunefarm.database.records import TuningRecord
from tunefarm.target import as_target, matching_target


class BestSchedule(NamedTuple):
    record: TuningRecord
    schedule: object  # a tunefarm.Schedule: the record's trace replayed on the function

    @property
    def func(self):
        """The scheduled PrimFunc (what gets built)."""
        return self.schedule.mod["main"]


def best_record(db: TraceDatabase, workload, target=None) -> TuningRecord | None:
    """The fastest successful record of a workload (a PrimFunc, or its key) on ``target``, or None when it was
    never tuned (there). ``target=None``: the one target it was tuned for (``AmbiguousTargetError`` if several)."""
    try:
        return db.best(workload, target=None if target is None else _stored_target(db, workload, target))
    except UnknownWorkloadError:
        return None


def _stored_target(db: TraceDatabase, workload, target) -> str:
    """The stored target string that names ``target``: records keep the string they were stored with, and on
    this machine ``llvm -mcpu=<its cpu> ...`` means its full feature set, so the canonical form of a caller's
    string may differ from the stored one although both name the same target."""
    canonical = str(as_target(target))
    text = target if isinstance(target, str) else canonical
    stored = db.targets(workload)
    found = matching_target(text, stored)
    return found if found in stored else canonical


def best_schedule(db: TraceDatabase, func, target=None, versions: VersionFilter | None = None) -> BestSchedule | None:
    """``func``'s best record of this code generator (``versions``: which records count, and the count of
    those passed over; by default other versions are skipped with a one-line notice) and its trace replayed on
    ``func`` (``ScheduleError`` when it no longer applies), or None when it was never tuned (on ``target``)."""
    own = versions is None
    versions = VersionFilter() if own else versions
    try:
        rec = versions.best(db, func, None if target is None else _stored_target(db, func, target))
    except UnknownWorkloadError:
        rec = None
    if own:
        versions.notice()
    if rec is None:
        return None
    from tunefarm.schedule import Schedule  # on use: `import tunefarm.database` loads no schedule layer

    return BestSchedule(rec, Schedule.from_trace(rec.trace, func))
