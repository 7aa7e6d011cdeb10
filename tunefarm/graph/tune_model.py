"""``tunefarm.tune_model``: tune every kernel of a model on the farm, weighted by how often it runs."""
from __future__ import annotations

from ..ir.module import IRModule
from .pipeline import prepare
from .tasks import extract_tasks


def tune_model(mod: IRModule, params: dict | None = None, target=None, max_trials: int = 256, database=None,
               farm=None, entry: str | None = None, trials_per_round: int = 64, seed: int | None = None,
               space=None, **kwargs):
    """Extract the model's tasks and tune them in one job (``search.tune_tasks``); returns its ``TuneResult``.

    ``max_trials`` is the budget for the whole model, counting trials already stored for its kernels on this
    target (a rerun resumes); the task scheduler spends it where the weighted latency gains most. Each task
    is handed to the search as ``main`` (workload keys ignore names, so ``compile`` finds the records) and named
    by its kernel and output shape (``Task.workload_name``).
    """
    from ..tuning.api import tune_tasks  # on use: the tuning stack (see the package docstring)

    prepared = prepare(mod, params, entry)
    tasks = extract_tasks(prepared, entry=entry, prepared=True)
    if not tasks:
        raise ValueError("the model has no kernels to tune (it only calls registered Python functions)")
    # every task gets at least one round, even on a small budget; on a larger one each task's share is cut
    # into at least four rounds, so the task scheduler decides often where trials go (a 3 us output layer
    # next to a 140 us hidden layer got half of a 256-trial budget in two 64-trial rounds)
    share = max_trials // len(tasks) or 1
    trials_per_round = max(1, min(trials_per_round, share // 4 if share >= 64 else share))
    work = [(t.workload_name, t.func.with_name("main"), t.weight) for t in tasks]
    return tune_tasks(work, target=target, max_trials=max_trials, database=database, farm=farm,
                      trials_per_round=trials_per_round, seed=seed, space=space, **kwargs)
