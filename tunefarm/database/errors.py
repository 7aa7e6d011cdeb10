"""Exceptions of the trace database.

Callers catch one type, :class:`DatabaseError`, instead of the many ``sqlite3`` errors, and get a message
that names the file and says what to do. Errors about *arguments* (a malformed trace, a name that matches
two workloads) also subclass ``ValueError``/``LookupError`` so ordinary Python handling works.
"""
from __future__ import annotations


class DatabaseError(Exception):
    """Any failure of the trace database; the message names the database file."""


class CorruptDatabaseError(DatabaseError):
    """The file is not an SQLite database, or it is truncated or damaged."""


class SchemaVersionError(DatabaseError):
    """The file was written by a newer tunefarm (or is not a tunefarm database at all)."""


class DatabaseLockedError(DatabaseError):
    """Other writers kept the database locked for longer than the timeout."""


class UnknownWorkloadError(DatabaseError, LookupError):
    """No workload has this key or name (or a name matches several workloads)."""


class UnknownJobError(DatabaseError, LookupError):
    """No job has this id."""


class JobNotRunningError(DatabaseError):
    """A job that has finished, or whose driver is gone, was asked to claim programs."""


class AmbiguousTargetError(DatabaseError, ValueError):
    """A workload has records under several targets and the query did not say which one to use."""


class InvalidTraceError(DatabaseError, ValueError):
    """A trace is not of the ``[[kind, inputs, attrs, outputs], ...]`` (+ decisions) shape."""


class InvalidRecordError(DatabaseError, ValueError):
    """A record to commit (or a line to import) has a missing or ill-typed field."""
