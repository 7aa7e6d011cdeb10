"""``tunefarm.tune_model``: tune every kernel of a model on the farm, weighted by how often it runs."""
from __future__ import annotations

from ..ir.module import IRModule
from .pipeline import prepare
from .tasks import extract_tasks


def tune_model(mod: IRModule, params: dict | None = None, target=None, max_trials: int = 256, database=None,
               farm=None, entry: str | None = None, trials_per_round: int = 64, seed: int | None = None,
               space=None, **kwargs):
    """Extract the model's tasks and tune them in one job; returns the Database holding the records.

    ``max_trials`` is the budget for the whole model; the task scheduler spends it where the weighted
    latency gains most (gradient-based, as in Ansor/MetaSchedule).
    """
    from ..search.tune import tune_tasks

    prepared = prepare(mod, params, entry)
    tasks = extract_tasks(prepared, entry=entry, prepared=True)
    return tune_tasks([(t.name, t.func, t.weight) for t in tasks], target=target, max_trials=max_trials,
                      database=database, farm=farm, trials_per_round=trials_per_round, seed=seed, space=space,
                      **kwargs)
