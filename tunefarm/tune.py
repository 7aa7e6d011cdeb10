"""``tunefarm.tune``: the course's ``ms.tune_tir`` (see tuning/api.py).

This module shares its name with the function ``tunefarm.tune``. Importing it (``from tunefarm.tune import
tune_tasks``) makes Python bind the *module* to ``tunefarm.tune``, so the module itself is callable and calls
the function: ``tunefarm.tune(func, ...)`` works whichever import came first.
"""
import sys
import types

from tunefarm.tuning.api import TuneResult, tune, tune_tasks

__all__ = ["tune", "tune_tasks", "TuneResult"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return tune(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
