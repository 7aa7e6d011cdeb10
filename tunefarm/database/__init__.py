"""Trace database: every measurement of every tuning job, in one SQLite file per study.

``Database`` stores workloads, jobs and measured records (trace JSON + MeasureResult + target), answers
the search's questions (best / top-k / already-measured program hashes), lets concurrent jobs share one
workload's budget (claims, ``claims.py``), tells a live job from a killed one (``liveness.py``) and hands
pandas DataFrames to people. ``report.write_report`` renders a self-contained HTML report. Importing this package pulls in
none of ray, xgboost, llvmlite or the compiler layers; pandas is imported on the first DataFrame query.
"""
from tunefarm.database.errors import (AmbiguousTargetError, CorruptDatabaseError, DatabaseError,
                                      DatabaseLockedError, InvalidRecordError, InvalidTraceError,
                                      JobNotRunningError, SchemaVersionError, UnknownJobError,
                                      UnknownWorkloadError)
from tunefarm.database.records import Record, TuningRecord
from tunefarm.database.schema import CURRENT_VERSION as SCHEMA_VERSION
from tunefarm.database.sqlite_database import Database, WorkloadInfo
from tunefarm.database.trace_format import validate_trace

__all__ = [
    "AmbiguousTargetError", "CorruptDatabaseError", "Database", "DatabaseError", "DatabaseLockedError",
    "InvalidRecordError", "InvalidTraceError", "JobNotRunningError", "Record", "SCHEMA_VERSION", "SchemaVersionError", "TuningRecord",
    "UnknownJobError", "UnknownWorkloadError", "WorkloadInfo", "validate_trace",
]
