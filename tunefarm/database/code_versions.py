"""Which records a compile may use: those of this code generator, unless told to take any.

A schedule's speed was measured with the code generator of its job (``provenance``); built by another LLVM it
may be slower than a schedule that lost to it. So ``compile`` (and everything built on ``best_schedule``) takes
the best record of its own (llvmlite, LLVM) version, passes over faster ones of other versions, and says in one
line how many it passed over (``allow_other_versions=True`` / ``--allow-other-versions`` takes them too).
"""
from __future__ import annotations

import logging

from tunefarm.database.provenance import codegen_version, same_codegen

log = logging.getLogger("tunefarm.compile")
_FIRST_PAGE = 8


class VersionFilter:
    """Picks best records by code generator version and counts what it skipped (see module doc)."""

    def __init__(self, allow_other_versions: bool = False):
        self.allow_other_versions = bool(allow_other_versions)
        self.skipped = 0      # records of another version ranked above the one used (or all, if none was)
        self.workloads = 0    # workloads that had such records

    def best(self, db, workload, target=None):
        """The best record of ``workload`` on ``target`` this filter admits, or None."""
        if self.allow_other_versions:
            return db.best(workload, target=target)
        k = _FIRST_PAGE
        while True:  # pages of growing size: the best of this version is nearly always on the first
            recs = db.top_k(workload, k, target=target)
            for i, rec in enumerate(recs):
                if same_codegen(rec):
                    self._count(i)
                    return rec
            if len(recs) < k:
                self._count(len(recs))
                return None
            k *= 4

    def _count(self, n: int) -> None:
        self.skipped += n
        self.workloads += bool(n)

    def notice(self) -> None:
        """One line when records were skipped (nothing otherwise)."""
        if self.skipped:
            llvmlite_v, llvm_v = codegen_version()
            log.warning("compile skipped %d record(s) of %d workload(s) measured with another code generator than "
                        "this one (llvmlite %s, LLVM %s); pass allow_other_versions=True (--allow-other-versions) "
                        "to use them", self.skipped, self.workloads, llvmlite_v, llvm_v)
