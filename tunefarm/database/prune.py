"""Pruned exports: only the K best records of each workload and target (MetaSchedule's ``dump_pruned``, AutoTVM's
``pick_best``), with what they need to import: their workloads and their jobs (the provenance).

A study of thousands of trials per workload is shared to compile from, and compiling needs only the best; the
rest is search history. The records kept are ranked as ``best`` ranks them (``provenance.TRUSTED_ORDER``: the
confirmed median where there is one), so the kept best is the one the full database would compile. Batches are
left out (a batch is a crash-atomicity unit of the tuning job, meaningless for a subset of its records).
"""
from __future__ import annotations

from tunefarm.database.provenance import TRUSTED_ORDER


def kept_records_sql(k: int) -> tuple[str, tuple]:
    """``(sql, params)``: the ids of the ``k`` best successful records of every workload and target."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {k!r}")
    return (f"SELECT id FROM (SELECT r.id, row_number() OVER (PARTITION BY r.workload_id, r.target_id "
            f"ORDER BY {TRUSTED_ORDER}) AS rank FROM records r WHERE r.status = 'ok') ranked WHERE rank <= ?", (k,))


def filters(k: int | None) -> dict[str, tuple[str, tuple]]:
    """Per kind of export line, the ``WHERE`` clause (and its parameters) that keeps what a pruned export holds;
    every clause is empty for a full export (``k`` None)."""
    if k is None:
        return {kind: ("", ()) for kind in ("workloads", "jobs", "records")}
    kept, params = kept_records_sql(k)
    return {
        "workloads": (f" WHERE id IN (SELECT workload_id FROM records WHERE id IN ({kept}))", params),
        "jobs": (f" WHERE id IN (SELECT job_id FROM records WHERE id IN ({kept}))", params),
        "records": (f" WHERE r.id IN ({kept})", params),
    }
