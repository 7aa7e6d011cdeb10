"""``ms.tir_integration.compile_tir(database, mod, target)``: the best stored schedule of ``mod``'s function
(``sch.mod``, ``sch.trace``), or None when the database has none for that target -- TVM's return value."""
from __future__ import annotations


def compile_tir(database, mod, target):
    from ...tuning.api import best_schedule  # the tuning stack loads on first use, not with ``tunefarm.tvm``

    return best_schedule(database, mod, target)


__all__ = ["compile_tir"]
