"""tunefarm: a distributed auto-tuning farm for CPU tensor programs.

One way to do each thing, and what it is called in Apache TVM (MetaSchedule) and in Optuna:

=========================================  ===========================================  ==============================
tunefarm                                   TVM / MetaSchedule                           Optuna
=========================================  ===========================================  ==============================
``tune(func, max_trials=64, database=p)``  ``ms.tune_tir(mod, target, work_dir, ...)``  ``create_study``, ``optimize``
``tune(..., strategy="random")``           ``ms.search_strategy.ReplayTrace``           ``RandomSampler``
``tune_model(mod, params, ...)``           ``ms.relax_integration.tune_relax``          --
``Database(p)``                            ``ms.database.JSONDatabase``                 ``storage="sqlite:///p"``
``Database(p).records()``                  ``database.get_all_tuning_records()``        ``study.trials_dataframe()``
``Database(p).best(func)``                 ``database.query_tuning_record``             ``study.best_trial``
``compile(func, database=p)``              ``compile_tir`` + ``tvm.build``              --
``compile(func)`` (PrimFuncs)              ``tvm.build``                                --
``compile(model, params)`` (graph)         ``relax.build`` / ``tvm.compile``            --
``load(path)`` (either kind)               ``tvm.runtime.load_module``                  --
``Schedule``, ``Trace``, ``Target``        ``tir.Schedule``, ``Trace``, ``Target``      --
=========================================  ===========================================  ==============================

``compile`` returns a runtime ``Module`` for PrimFuncs (``lib["name"](*arrays)``) and an ``Executable`` for a
model (``exe(x)``); with ``database=`` every kernel takes its best stored schedule. ``tunefarm.tvm`` is TVM's
own Python API over these. Names are loaded on first use, so that ``import tunefarm`` (and ``load``) never
pulls in the tuning stack (ray, xgboost) unless it is used.
"""
import importlib as _importlib

__version__ = "0.1.0"

_LAZY = {
    "Schedule": "tunefarm.schedule",
    "ScheduleError": "tunefarm.schedule",
    "Trace": "tunefarm.schedule",
    "structural_equal": "tunefarm.ir.structural",
    "structural_hash": "tunefarm.ir.structural",
    "workload_key": "tunefarm.ir.structural",
    "interpret": "tunefarm.reference",
    "IRModule": "tunefarm.ir",
    "PrimFunc": "tunefarm.ir",
    "Target": "tunefarm.target",
    "Database": "tunefarm.database",
    "tune": "tunefarm.tuning",
    "tune_model": "tunefarm.graph",
    "compile": "tunefarm.graph",
    "load": "tunefarm.graph",
    "register_func": "tunefarm.graph",
}
_SUBMODULES = {"ir", "script", "te", "schedule", "codegen", "runtime", "reference", "search", "farm", "database",
               "graph", "nn", "target", "cli", "tvm"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return _importlib.import_module(f"tunefarm.{name}")
    raise AttributeError(f"module 'tunefarm' has no attribute {name!r}")


def __dir__():
    """The public names: the lazy ones, the subpackages and ``__version__``."""
    return sorted(["__version__", *_LAZY, *_SUBMODULES])
