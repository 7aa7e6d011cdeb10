"""``ms.tir_integration.compile_tir(database, mod, target)``: the best stored schedule of ``mod``'s function
(``sch.mod``, ``sch.trace``), or None when the database has none for that target -- TVM's return value."""
from __future__ import annotations


def compile_tir(database, mod, target):
    # the database and the search's workload rules load on first use, not with ``tunefarm.tvm``
    from ...database import best_schedule, open_database
    from ...search.workloads import as_workload

    if database is None:
        raise TypeError("a database (a path or a tunefarm.Database) is needed")
    best = best_schedule(open_database(database), as_workload(mod), target)
    return None if best is None else best.schedule


__all__ = ["compile_tir"]
