"""The tuning job's work on a farm worker: search requests, measuring picked programs, training the model.

Each handler is a plain function ``(payload, ctx) -> JSON-able`` that a worker imports by name
(``"tunefarm.tuning.handlers:search"``) the first time the driver sends it work (see ``farm/work.py``). Per
worker process, ``ctx.state`` keeps the tasks rebuilt from their specs (``search.generate.TaskCache``: the
workload, the space, the programs this worker produced) and the measurer, so:

- ``search`` runs a search request (``search.generate``) for a task;
- ``measure`` measures a picked program, taking its scheduled function from the task's cache when this worker
  produced it (the driver sends the work there when it can), and replaying its trace only otherwise;
- ``train`` fits the cost model on the packed samples (``search.model_training.fit``), adding them to those this
  worker kept from the model's earlier payloads (``TrainingSets``).
"""
from __future__ import annotations

import json
import time

from ..database.provenance import cpu_model
from ..farm.measure import MeasureSettings, worker_measurer
from ..runtime.measure_result import MeasureResult
from ..search.generate import TaskCache, generate
from ..search.model_training import TrainingSets

TASKS_PER_WORKER = 16  # rebuilt tasks a worker keeps (a model has a few; more than this is a new job)


def task_cache(task_digest: str, ctx) -> TaskCache:
    """The task named by ``task_digest`` on this worker, rebuilt from its spec and workload on first use."""
    tasks = ctx.state.setdefault("tunefarm.tasks", {})
    cache = tasks.get(task_digest)
    if cache is None:
        spec = json.loads(ctx.shared[f"task:{task_digest}"])
        cache = TaskCache.from_spec(spec, ctx.shared[f"workload:{spec['key']}"])
        if len(tasks) >= TASKS_PER_WORKER:
            tasks.pop(next(iter(tasks)))
        tasks[task_digest] = cache
    return cache


def search(payload: dict, ctx) -> dict:
    """``{"task": digest, "request": {...}}`` -> the reply of ``search.generate.generate``, or
    ``{"unavailable": why}`` when this worker cannot rebuild the task (its space cannot be imported here)."""
    try:
        cache = task_cache(payload["task"], ctx)
    except Exception as e:  # noqa: BLE001 - the driver then samples the space itself
        return {"unavailable": f"{type(e).__name__}: {e}"[:500]}
    return generate(cache, payload["request"])


def measure(payload: dict, ctx) -> dict:
    """Measure one picked program: ``{"task", "hash", "trace", "target", "settings"}`` -> a MeasureResult dict."""
    cache = task_cache(payload["task"], ctx)
    started = time.perf_counter()
    with worker_measurer(ctx) as measurer:
        func = cache.scheduled(payload["hash"])
        replayed = func is None
        if replayed:
            func = measurer.replay(json.loads(payload["trace"]), cache.task.func, started)
            if isinstance(func, MeasureResult):
                return {"result": func.to_dict(), "replayed": True}
        key = cache.task.key
        result = measurer.measure_func(key, ctx.shared[f"workload:{key}"], func, payload["target"],
                                       MeasureSettings(**payload["settings"]), ctx.clock, started=started,
                                       name=cache.task.name)
    return {"result": result.to_dict(), "replayed": replayed, "cpu_model": cpu_model()}


def train(payload: dict, ctx) -> dict:
    """Fit the cost model on the samples ``XGBCostModel.training_payload`` packed (and, for a payload that sends
    only new samples, those this worker kept); ``{"missing": k}`` when it holds only ``k`` of the earlier ones."""
    return ctx.state.setdefault("tunefarm.training", TrainingSets()).fit(payload)
