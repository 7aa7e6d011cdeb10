"""``tunefarm.tune`` / ``tunefarm.compile_tir``: the course's ``ms.tune_tir`` and ``compile_tir`` (see search/tune.py)."""
from tunefarm.search.tune import TuneResult, best_schedule, compile_tir, tune, tune_tasks

__all__ = ["tune", "tune_tasks", "compile_tir", "best_schedule", "TuneResult"]
