"""What a drill checks after a tuning job, read from its trace database: was the budget measured exactly, was
any program measured twice, was any measurement lost, did the job finish, and when each host measured.

A drill's database holds one job of one workload on one target; ``audit`` refuses anything else, so a number
never silently mixes two jobs.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime
import re

from ..database import Database
from ..runtime.measure_result import MeasureStatus

_DRIVER_TRIALS = re.compile(r"^(\d+) new trials in ", re.M)


@dataclasses.dataclass(frozen=True)
class HostSpan:
    """A host's records: how many, and the commit times (epoch seconds) of its first and last."""

    records: int
    first: float
    last: float


@dataclasses.dataclass(frozen=True)
class JobAudit:
    records: int                    # records of the job's workload on its target (the budget measured)
    programs: int                   # distinct program hashes among them
    unhashed: int                   # records without a program hash (cannot be checked for repeats)
    statuses: dict[str, int]
    job_status: str                 # the job's state now: finished, killed, running, ...
    job_records: int                # records the job itself stored
    driver_host: str                # the host name the job's driver ran on
    hosts: dict[str, HostSpan]
    times: tuple[tuple[str, float], ...]   # (host, commit time) of every record, in commit order

    @property
    def measured_twice(self) -> int:
        """Records beyond the first of their program."""
        return self.records - self.programs

    @property
    def lost(self) -> int:
        """Measurements lost with their worker or host (stored as ``worker_lost``)."""
        return self.statuses.get(MeasureStatus.WORKER_LOST.value, 0)

    def records_after(self, host: str, t: float) -> int:
        """Records of ``host`` committed after epoch time ``t``."""
        return sum(1 for h, when in self.times if h == host and when > t)


def _epoch(created) -> float:
    return created.replace(tzinfo=datetime.timezone.utc).timestamp()


def audit(db_path) -> JobAudit:
    """Read the one job of ``db_path`` (opened, read, closed)."""
    db = Database(db_path)
    try:
        recs = db.records(decisions=False)
        jobs = db.jobs()
    finally:
        db.close()
    if len(jobs) != 1 or recs["workload_key"].nunique() > 1 or recs["target"].nunique() > 1:
        raise ValueError(f"{db_path}: a drill's database holds one job of one workload on one target; found "
                         f"{len(jobs)} jobs, {recs['workload_key'].nunique()} workloads, "
                         f"{recs['target'].nunique()} targets")
    times = tuple((h, _epoch(c)) for h, c in zip(recs["host"], recs["created"]))
    hosts: dict[str, list[float]] = collections.defaultdict(list)
    for h, t in times:
        hosts[h].append(t)
    hashes = recs["program_hash"]
    return JobAudit(records=len(recs), programs=int(hashes.dropna().nunique()), unhashed=int(hashes.isna().sum()),
                    statuses=dict(collections.Counter(recs["status"].astype(str))),
                    job_status=str(jobs["status"].iloc[0]), job_records=int(jobs["n_records"].iloc[0]),
                    driver_host=str(jobs["host"].iloc[0]),
                    hosts={h: HostSpan(len(ts), min(ts), max(ts)) for h, ts in hosts.items()}, times=times)


def driver_trials(output: str) -> int:
    """The trials a ``tunefarm tune`` driver says it measured (its ``N new trials in ...`` line)."""
    found = _DRIVER_TRIALS.findall(output)
    if len(found) != 1:
        raise ValueError(f"the driver's output has {len(found)} 'new trials' lines, expected one")
    return int(found[0])
