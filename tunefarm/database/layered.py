"""Layered reads: several databases seen as one, the first one first (MetaSchedule's ``OrderedUnionDatabase``).

A team tunes into a shared database and each engineer tunes a little more into a local one:
``database=[mine, team]`` (``--db mine.sqlite --db postgresql://...``) reads their union and writes to the
first. ``best`` / ``top_k`` merge each member's answer by the figure they rank by (the confirmed median where
there is one); a program both hold, or an equal figure, goes to the earlier member's record. The views concatenate
the members' frames with a ``database`` column (the member's path) and drop the later copies of a record a
member imported from another (same workload, target and program). Record and job ids are each member's own:
the ``database`` column says whose.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from tunefarm.database.base import TraceDatabase
from tunefarm.database.errors import AmbiguousTargetError, UnknownWorkloadError


def merge_ranked(members, k: int) -> list[tuple[int, object]]:
    """The ``k`` best of several members' ranked answers, as one store would rank them: ``members`` yields
    ``(member index, [(program hash, rank, record id, item), ...])`` in member order. A program several members
    hold is the earliest member's item (one without a hash is its own); ranked by (rank, member, record id), so a
    tie goes to the earlier member. Returns ``(member index, item)`` pairs. The dashboard merges its studies'
    top-k by this rule too, so that its page and ``tunefarm best`` agree."""
    ranked, seen = [], set()
    for i, items in members:
        for ident, rank, rid, item in items:
            ident = ident or (i, rid)
            if ident not in seen:
                seen.add(ident)
                ranked.append((*rank, i, rid, item))
    ranked.sort(key=lambda r: r[:-1])
    return [(r[-3], r[-1]) for r in ranked[:k]]


class LayeredDatabase(TraceDatabase):
    """``members[0]`` takes the writes; reads see every member (see module doc)."""

    def __init__(self, members: list[TraceDatabase]):
        if len(members) < 2:
            raise ValueError("a layered database needs at least two databases")
        self.members = list(members)
        self.writer = self.members[0]
        self.path = " + ".join(m.path for m in self.members)

    def __repr__(self) -> str:
        return f"LayeredDatabase({self.members!r})"

    # -- writes (and the job's own bookkeeping) go to the first ---------------------------------------------
    def commit_workload(self, key: str, name: str, ir_json: Any, flop: float | None = None) -> int:
        return self.writer.commit_workload(key, name, ir_json, flop)

    def start_job(self, name: str, config: Mapping | None = None) -> int:
        return self.writer.start_job(name, config)

    def heartbeat(self, job_id: int) -> None:
        self.writer.heartbeat(job_id)

    def finish_job(self, job_id: int, status: str = "finished") -> None:
        self.writer.finish_job(job_id, status)

    def commit_and_claim(self, records: Iterable[Any], job_id: int, wanted: Iterable[tuple]) -> list[list[str]]:
        return self.writer.commit_and_claim(records, job_id, wanted)

    def release_claims(self, job_id: int, program_hashes: Iterable[str] | None = None) -> int:
        return self.writer.release_claims(job_id, program_hashes)

    def budget_used(self, workload: Any, target: str, exclude_job: int | None = None) -> int:
        return self.writer.budget_used(workload, target, exclude_job)

    def job_state(self, job_id: int) -> str:
        return self.writer.job_state(job_id)

    def store_confirmed(self, figures) -> int:
        return self.writer.store_confirmed(figures)

    # -- reads: the union ------------------------------------------------------------------------------------
    def _each(self, method: str, *args, **kwargs) -> list[tuple[int, Any]]:
        """``(member index, answer)`` of ``method`` of every member that knows the workload (an unknown one
        answers nothing)."""
        out = []
        for i, m in enumerate(self.members):
            try:
                out.append((i, getattr(m, method)(*args, **kwargs)))
            except UnknownWorkloadError:
                continue
        if not out:
            raise UnknownWorkloadError(f"no workload {args[0]!r} in any of {self.path!r}")
        return out

    def measured_hashes(self, workload: Any, target: str) -> set[str]:
        return set().union(*(a for _, a in self._each("measured_hashes", workload, target)))

    def get_workload(self, workload: Any):
        return self._each("get_workload", workload)[0][1]

    def top_k(self, workload: Any, k: int = 10, target: str | None = None) -> list:
        if target is None:  # one target for all members, or AmbiguousTargetError as a single store says
            target = _only_target(self, workload)
        return [dataclasses.replace(rec, source=self.members[i].path) for i, rec in merge_ranked(
            ((i, [(rec.program_hash, rec.rank, rec.record_id, rec) for rec in recs])
             for i, recs in self._each("top_k", workload, k, target=target)), k)]

    def owner(self, record) -> TraceDatabase:
        """The member a record of ``top_k`` / ``best`` came from (its ids, job included, are that member's)."""
        return next((m for m in self.members if m.path == record.source), self.writer)

    def best(self, workload: Any, target: str | None = None):
        top = self.top_k(workload, 1, target=target)
        return top[0] if top else None

    def count_records(self, workload: Any = None, target: str | None = None, job: int | None = None) -> int:
        if job is not None:
            return self.writer.count_records(workload, target, job)
        return sum(a for _, a in self._each("count_records", workload, target)) if workload is not None else sum(
            m.count_records(None, target) for m in self.members)

    def targets(self, workload: Any = None) -> list[str]:
        lists = ([a for _, a in self._each("targets", workload)] if workload is not None
                 else [m.targets() for m in self.members])
        return sorted(set().union(*lists))

    def records(self, workload: Any = None, target: str | None = None, status: Any = None, decisions: bool = True):
        frames = self._frames("records", workload, target, status, decisions)
        return _union([f.assign(database=m.path) for m, f in zip(self.members, frames) if f is not None],
                      ["workload_key", "target", "program_hash"])

    def _frames(self, method: str, workload, *args) -> list:
        out = []
        for m in self.members:
            try:
                out.append(getattr(m, method)(workload, *args))
            except UnknownWorkloadError:
                out.append(None)
        if all(f is None for f in out):
            raise UnknownWorkloadError(f"no workload {workload!r} in any of {self.path!r}")
        return out

    def workloads(self):
        return _union([m.workloads().assign(database=m.path) for m in self.members], ["key"])

    def jobs(self):
        return _union([m.jobs().assign(database=m.path) for m in self.members], ["uid"])

    def close(self) -> None:
        for m in self.members:
            m.close()


def _only_target(db: LayeredDatabase, workload) -> str | None:
    """The workload's one target across members; AmbiguousTargetError (from a member) when it has several."""
    targets = db.targets(workload)
    if len(targets) > 1:
        raise AmbiguousTargetError(f"workload {workload!r} has records for {len(targets)} targets in {db.path!r}: "
                                   + "; ".join(repr(t) for t in targets) + ". Pass target=... to choose one.")
    return targets[0] if targets else None


def _union(frames: list, identity: list[str]):
    """The members' frames in order, each row once (the earliest member's copy of rows with one identity)."""
    import pandas as pd  # on use: pandas stays out of `import tunefarm.database`

    frame = pd.concat(frames, ignore_index=True)
    keep = ~frame.duplicated(identity, keep="first") | frame[identity].isna().any(axis=1)
    return frame[keep].reset_index(drop=True)
