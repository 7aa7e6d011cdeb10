"""The parts a tuning job is wired from, each given as an instance or made from its name by its package's
``create``: the farm, the cost model, the search strategy of each task and the task scheduler (the database's
is ``api.job_database``)."""
from __future__ import annotations

from ..farm import Farm
from ..farm import create as create_farm
from ..search import cost_model as cost_models
from ..search import strategy as strategies
from ..search import task_scheduler as schedulers


def farm(given, target) -> Farm:
    """``given`` as it is (a ``Farm``, or anything with its streaming methods: a farm started on first use, a
    simulation), or the farm of that name (``"ray"`` when None)."""
    if given is not None and not isinstance(given, str):
        return given
    return create_farm(given or "ray", target=target)


def cost_model(given, strategy, seed: int, n_tasks: int) -> cost_models.CostModel:
    """``given`` as it is, or the model of that name; a strategy instance (which searches one task) brings its
    own model."""
    own = None
    if isinstance(strategy, strategies.SearchStrategy):
        if n_tasks != 1:
            raise ValueError("a SearchStrategy instance searches one task; give a name or a factory "
                             "(name, key, cost_model, seed) -> SearchStrategy for several")
        own = strategy.model
    if isinstance(given, cost_models.CostModel):
        if own is not None and own is not given:
            raise ValueError("the search strategy given scores with another cost model than the one given")
        return given
    if not isinstance(given, str):
        raise TypeError(f"cost_model must be a CostModel or 'xgb', got {type(given).__name__}")
    return own if own is not None else cost_models.create(given, seed=seed)


def strategy(given, tune_task, model, seed: int) -> strategies.SearchStrategy:
    """The search of one task: ``given`` (a one-task job's instance, see ``cost_model``), made by a factory
    ``(name, key, model, seed)``, or by name."""
    if isinstance(given, strategies.SearchStrategy):
        return given
    if isinstance(given, str):
        return strategies.create(given, tune_task.name, tune_task.key, model, seed)
    if callable(given):
        made = given(tune_task.name, tune_task.key, model, seed)
        if not isinstance(made, strategies.SearchStrategy):
            raise TypeError(f"the strategy factory returned a {type(made).__name__}, not a SearchStrategy")
        return made
    raise TypeError(f"strategy must be a name, a SearchStrategy or a factory, got {type(given).__name__}")


def task_scheduler(given, seed: int) -> schedulers.TaskScheduler:
    """``given`` as it is, or the scheduler of that name."""
    if isinstance(given, schedulers.TaskScheduler):
        return given
    if not isinstance(given, str):
        raise TypeError(f"task_scheduler must be a TaskScheduler or a name, got {type(given).__name__}")
    return schedulers.create(given, seed)


def name_of(part, kind: str) -> str:
    """How the job's config in the database names a part: its registered name, else its class name."""
    names = {"strategy": strategies.KINDS, "task_scheduler": {"gradient": schedulers.GradientScheduler,
                                                              "round-robin": schedulers.RoundRobin}}[kind]
    return next((n for n, cls in names.items() if type(part) is cls), type(part).__name__)
