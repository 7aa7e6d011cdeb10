"""``TraceDatabase``: what a tuning job and the views (``tunefarm best``, the report, ``records()``) ask of a
trace database, so that another store can stand in for the SQLite one (``Database``, ``sqlite_database.py``), as
the PostgreSQL one does (``PostgresDatabase``, ``postgres_database.py``).

``workload`` arguments take a workload key, a unique name or key prefix, an id, or the PrimFunc / IRModule
itself; ``target`` arguments take a target string. With ``target=None``, ``best`` and ``top_k`` use the
workload's only target and raise ``AmbiguousTargetError`` when it has several.
"""
from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from typing import Any

URL_SCHEMES = ("postgresql://", "postgres://")  # a database named by one of these is a server store


class TraceDatabase(abc.ABC):
    """Every measurement of every tuning job of a study (see module doc). ``path`` says where it lives."""

    path: str

    # -- the tuning job ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def commit_workload(self, key: str, name: str, ir_json: Any, flop: float | None = None) -> int:
        """Store a workload (idempotent by ``key``); returns its id."""

    @abc.abstractmethod
    def start_job(self, name: str, config: Mapping | None = None) -> int:
        """Record the start of a tuning job (this process is its driver); returns the job id."""

    @abc.abstractmethod
    def heartbeat(self, job_id: int) -> None:
        """Tell readers the job's driver is alive."""

    @abc.abstractmethod
    def finish_job(self, job_id: int, status: str = "finished") -> None:
        """Mark a job finished with ``status``; its claims end."""

    @abc.abstractmethod
    def commit_and_claim(self, records: Iterable[Any], job_id: int, wanted: Iterable[tuple]) -> list[list[str]]:
        """Store ``records`` and claim the programs about to be measured (``(workload, target, hashes, budget)``
        tuples) in one transaction; returns the hashes granted, per tuple."""

    @abc.abstractmethod
    def release_claims(self, job_id: int, program_hashes: Iterable[str] | None = None) -> int:
        """End claims of ``job_id`` it will not measure (all of them when None); returns how many it held."""

    @abc.abstractmethod
    def budget_used(self, workload: Any, target: str, exclude_job: int | None = None) -> int:
        """Stored records of a workload on a target plus the live claims of other jobs."""

    @abc.abstractmethod
    def measured_hashes(self, workload: Any, target: str) -> set[str]:
        """Program hashes already measured (any status): a resumed job never measures them again."""

    # -- the views -----------------------------------------------------------------------------------------
    @abc.abstractmethod
    def get_workload(self, workload: Any):
        """The stored workload (``WorkloadInfo``: key, name, IR JSON text, FLOP count)."""

    @abc.abstractmethod
    def best(self, workload: Any, target: str | None = None):
        """The fastest successful record (a ``TuningRecord``) of a workload on a target, or None."""

    @abc.abstractmethod
    def top_k(self, workload: Any, k: int = 10, target: str | None = None) -> list:
        """The ``k`` fastest successful records, fastest first."""

    @abc.abstractmethod
    def count_records(self, workload: Any = None, target: str | None = None, job: int | None = None) -> int:
        """Number of stored records, optionally of one workload, target and/or job."""

    @abc.abstractmethod
    def targets(self, workload: Any = None) -> list[str]:
        """Targets that have records (of one workload, if given), sorted."""

    @abc.abstractmethod
    def job_state(self, job_id: int) -> str:
        """``running``, ``killed``, ``stale`` or the status a finished job ended with."""

    @abc.abstractmethod
    def records(self, workload: Any = None, target: str | None = None, status: Any = None, decisions: bool = True):
        """Matching records as a pandas DataFrame, a column per sampling decision (Optuna's ``trials_dataframe``)."""

    @abc.abstractmethod
    def workloads(self):
        """Workloads as a pandas DataFrame."""

    @abc.abstractmethod
    def jobs(self):
        """Jobs as a pandas DataFrame."""

    # -- lifetime --------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Release what this process holds open (nothing by default)."""

    def __enter__(self) -> "TraceDatabase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
