"""``ms.tune_tir``: TVM's tuning call onto ``tunefarm.tune``.

The arguments map one to one: ``max_trials_global`` trials in rounds of ``num_trials_per_iter``, ``space`` a
``ScheduleFn`` (or ``"post-order-apply"``, TVM's default, for tunefarm's rule-based space), ``task_name``
names the task. Records go to ``work_dir/database.sqlite``; like TVM's work directory it accumulates across
calls, and each call measures ``max_trials_global`` new trials (tunefarm counts the stored ones in its
budget, so the budget passed on is stored + new). Measuring runs on a ``LocalFarm`` of ``num_tuning_cores``
worker processes (TVM's local builder and runner), or on the farm given as ``runner`` (e.g. a ``RayFarm``).

TVM's MetaSchedule prints its task table as it tunes; tunefarm logs it (``tunefarm.search``), so when no
logging is configured the call shows that log on stdout while it runs.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys

from ...database import Database, UnknownWorkloadError
from ...ir.function import PrimFunc
from ...ir.structural import workload_key
from ...target import as_target
from .space_generator import ScheduleFn

DATABASE_FILE = "database.sqlite"


def _workload(mod) -> PrimFunc:
    """TVM's rule, as the tuner applies it: a PrimFunc, or the module's ``main`` (its only PrimFunc when it has
    one); a module it cannot choose from is a ValueError, as in TVM."""
    # the search loads on first use, not with ``tunefarm.tvm``
    from ...search.errors import SearchError
    from ...search.workloads import as_prim_func

    try:
        return as_prim_func(mod, "tune_tir")
    except SearchError as e:
        raise ValueError(str(e)) from None


def _space(space):
    if isinstance(space, ScheduleFn):
        return space.sch_fn
    if space == "post-order-apply":
        return None
    if callable(space):
        return space
    raise ValueError(f"space must be ms.space_generator.ScheduleFn(f) or 'post-order-apply', got {space!r}")


def _farm(runner, num_tuning_cores, target):
    """``(farm, made_here)``: the farm given as ``runner``, or a local farm of ``num_tuning_cores`` workers."""
    from ...farm import Farm, create  # the farm loads with the first tuning call, not with ``tunefarm.tvm``

    if isinstance(runner, Farm):
        return runner, False
    if runner != "local":
        raise ValueError(f"runner is 'local' or a tunefarm farm (LocalFarm, RayFarm), got {runner!r}")
    if num_tuning_cores in ("physical", "logical"):
        workers = None  # one per core
    elif isinstance(num_tuning_cores, int) and not isinstance(num_tuning_cores, bool) and num_tuning_cores >= 1:
        workers = num_tuning_cores
    else:
        raise ValueError(f"num_tuning_cores is 'physical', 'logical' or an integer >= 1, got {num_tuning_cores!r}")
    return create("local", num_workers=workers, target=target), True


@contextlib.contextmanager
def _show_tuning_log():
    """Print tunefarm's tuning log (the task table) on stdout while tuning, unless logging is configured."""
    log = logging.getLogger("tunefarm.search")
    if log.hasHandlers():
        yield
        return
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(message)s"))
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def tune_tir(mod, target, work_dir: str, max_trials_global: int, *, num_trials_per_iter: int = 64,
             space="post-order-apply", task_name: str = "main", seed: int | None = None, runner="local",
             num_tuning_cores="physical"):
    """Tune ``mod``'s function for ``target``; returns the ``tunefarm.Database`` holding every trial."""
    from ...tuning.api import tune  # the tuning stack loads on first use, not with ``tunefarm.tvm``
    if not isinstance(max_trials_global, int) or isinstance(max_trials_global, bool) or max_trials_global < 1:
        raise ValueError(f"max_trials_global must be an integer >= 1, got {max_trials_global!r}")
    func = _workload(mod)
    target = as_target(target)
    sch_fn = _space(space)
    farm, own_farm = _farm(runner, num_tuning_cores, target)
    try:
        os.makedirs(work_dir, exist_ok=True)
        database = Database(os.path.join(work_dir, DATABASE_FILE))
        try:
            stored = database.count_records(workload_key(func), target=str(target))
        except UnknownWorkloadError:
            stored = 0
        with _show_tuning_log():
            tune(func, target, max_trials=stored + max_trials_global, trials_per_round=num_trials_per_iter,
                 space=sch_fn, database=database, farm=farm, seed=seed, task_name=task_name)
    finally:
        if own_farm:
            farm.close()
    return database


__all__ = ["tune_tir"]
