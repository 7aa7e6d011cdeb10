"""Trace database: every measurement of every tuning job, in one SQLite file per study (or on a PostgreSQL server).

``TraceDatabase`` (``base.py``) is what the tuning job and the views ask of a database; ``Database`` is its
SQLite implementation and the default (``create("sqlite", path)``, or ``Database(path)``); ``PostgresDatabase``
(``create("postgresql", url)``, or any ``database=`` / ``--db`` given a ``postgresql://`` URL) is the same
store on a server that drivers on several hosts share (``postgres_database.py``). It stores workloads,
jobs and measured records (trace JSON + MeasureResult + target), answers the search's questions (best / top-k /
already-measured program hashes), lets concurrent jobs share one workload's budget (claims, ``claims.py``),
tells a live job from a killed one (``liveness.py``) and hands pandas DataFrames to people. ``best_schedule``
(``best.py``) is the best stored record of a function replayed on it. ``database=[mine, team]`` reads several
as one (``layered.py``). ``report.write_report`` renders a
self-contained HTML report. Importing this package pulls in none of ray, xgboost, llvmlite or the compiler
layers; pandas is imported on the first DataFrame query.
"""
from __future__ import annotations

import os

from tunefarm.database.base import URL_SCHEMES, TraceDatabase
from tunefarm.database.best import BestSchedule, best_record, best_schedule
from tunefarm.database.errors import (AmbiguousTargetError, CorruptDatabaseError, DatabaseError,
                                      DatabaseLockedError, InvalidRecordError, InvalidTraceError,
                                      JobNotRunningError, SchemaVersionError, UnknownJobError,
                                      UnknownWorkloadError)
from tunefarm.database.layered import LayeredDatabase
from tunefarm.database.records import Record, TuningRecord
from tunefarm.database.schema import CURRENT_VERSION as SCHEMA_VERSION
from tunefarm.database.sqlite_database import Database, WorkloadInfo
from tunefarm.database.trace_format import validate_trace

KINDS = ("sqlite", "postgresql")


def is_url(name) -> bool:
    """Whether a ``database=`` / ``--db`` value names a server store (a ``postgresql://`` URL), not a file."""
    return isinstance(name, str) and name.startswith(URL_SCHEMES)


def create(kind: str, path: str | os.PathLike, **options) -> TraceDatabase:
    """The database named ``kind`` at ``path``: ``"sqlite"`` (``Database``, a file; ``options``: ``readonly``,
    ``create``, ``timeout``) or ``"postgresql"`` (``PostgresDatabase``, a ``postgresql://`` URL; also
    ``reconnect_s``; needs ``pip install "tunefarm[postgres]"``)."""
    if kind == "sqlite":
        return Database(path, **options)
    if kind != "postgresql":
        raise ValueError(f"unknown database {kind!r}; use one of {', '.join(KINDS)}")
    try:
        # on use: psycopg is an optional extra, and `import tunefarm` must not need it
        from tunefarm.database.postgres_database import PostgresDatabase
    except ImportError as e:
        raise DatabaseError(f"a postgresql:// database needs the PostgreSQL client ({e.msg}): "
                            'pip install "tunefarm[postgres]"') from None
    return PostgresDatabase(path, **options)


def open_database(database, *, readonly: bool = False) -> TraceDatabase | None:
    """What a ``database=`` argument names: a TraceDatabase as it is, a ``postgresql://`` URL opened as that
    server's store, a path opened as the SQLite database there (never written with ``readonly``), None as None,
    and a list of these as one ``LayeredDatabase`` (reads see their union, the first one first; writes go to
    the first)."""
    if database is None or isinstance(database, TraceDatabase):
        return database
    if isinstance(database, (list, tuple)):
        members = [open_database(d, readonly=readonly) for d in database]
        if not members or None in members:
            raise TypeError("a list of databases must name at least one, and no None")
        return members[0] if len(members) == 1 else LayeredDatabase(members)
    if is_url(database):
        return create("postgresql", database, readonly=readonly)
    if isinstance(database, (str, os.PathLike)):
        return create("sqlite", database, readonly=readonly)
    raise TypeError(f"database must be a postgresql:// URL, a path or a tunefarm.Database, "
                    f"got {type(database).__name__}")


__all__ = [
    "AmbiguousTargetError", "BestSchedule", "CorruptDatabaseError", "Database", "DatabaseError",
    "DatabaseLockedError", "InvalidRecordError", "InvalidTraceError", "JobNotRunningError", "KINDS",
    "LayeredDatabase", "Record",
    "SCHEMA_VERSION", "SchemaVersionError", "TraceDatabase", "TuningRecord", "UnknownJobError",
    "UnknownWorkloadError", "WorkloadInfo", "best_record", "best_schedule", "create", "is_url", "open_database",
    "validate_trace",
]
