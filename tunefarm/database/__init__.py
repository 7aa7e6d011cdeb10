"""Trace database: every measurement of every tuning job, in one SQLite file per study.

``TraceDatabase`` (``base.py``) is what the tuning job and the views ask of a database; ``Database`` is its
SQLite implementation and the default (``create("sqlite", path)``, or ``Database(path)``). It stores workloads,
jobs and measured records (trace JSON + MeasureResult + target), answers the search's questions (best / top-k /
already-measured program hashes), lets concurrent jobs share one workload's budget (claims, ``claims.py``),
tells a live job from a killed one (``liveness.py``) and hands pandas DataFrames to people. ``best_schedule``
(``best.py``) is the best stored record of a function replayed on it. ``report.write_report`` renders a
self-contained HTML report. Importing this package pulls in none of ray, xgboost, llvmlite or the compiler
layers; pandas is imported on the first DataFrame query.
"""
from __future__ import annotations

import os

from tunefarm.database.base import TraceDatabase
from tunefarm.database.best import BestSchedule, best_record, best_schedule
from tunefarm.database.errors import (AmbiguousTargetError, CorruptDatabaseError, DatabaseError,
                                      DatabaseLockedError, InvalidRecordError, InvalidTraceError,
                                      JobNotRunningError, SchemaVersionError, UnknownJobError,
                                      UnknownWorkloadError)
from tunefarm.database.records import Record, TuningRecord
from tunefarm.database.schema import CURRENT_VERSION as SCHEMA_VERSION
from tunefarm.database.sqlite_database import Database, WorkloadInfo
from tunefarm.database.trace_format import validate_trace

KINDS = ("sqlite",)


def create(kind: str, path: str | os.PathLike, **options) -> TraceDatabase:
    """The database named ``kind`` at ``path``: ``"sqlite"`` (``Database``; ``options``: ``readonly``,
    ``create``, ``timeout``)."""
    if kind != "sqlite":
        raise ValueError(f"unknown database {kind!r}; use 'sqlite'")
    return Database(path, **options)


def open_database(database, *, readonly: bool = False) -> TraceDatabase | None:
    """What a ``database=`` argument names: a TraceDatabase as it is, a path opened as the SQLite database
    there (never written with ``readonly``), None as None."""
    if database is None or isinstance(database, TraceDatabase):
        return database
    if isinstance(database, (str, os.PathLike)):
        return create("sqlite", database, readonly=readonly)
    raise TypeError(f"database must be a path or a tunefarm.Database, got {type(database).__name__}")


__all__ = [
    "AmbiguousTargetError", "BestSchedule", "CorruptDatabaseError", "Database", "DatabaseError",
    "DatabaseLockedError", "InvalidRecordError", "InvalidTraceError", "JobNotRunningError", "KINDS", "Record",
    "SCHEMA_VERSION", "SchemaVersionError", "TraceDatabase", "TuningRecord", "UnknownJobError",
    "UnknownWorkloadError", "WorkloadInfo", "best_record", "best_schedule", "create", "open_database",
    "validate_trace",
]
