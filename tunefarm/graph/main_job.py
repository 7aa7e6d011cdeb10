"""The main job: tune the course's MLP, compile it from the database, check it, and report the speed-up.

Run by ``tunefarm tune-model mlp``. Every step says what it did; nothing silently falls back: without
the real weights the job says it is using seeded random weights. Per batch size:

1. export the MLP (``nn`` front end) and bind its weights;
2. tune its kernels on the farm (the search logs a per-task progress table every round);
3. compile the whole model from the database's best traces (one native function);
4. check it against numpy's ``relu(x @ w0.T + b0) @ w1.T + b1`` on 1000 random inputs (max abs error
   <= 1e-4 and identical argmax, or the job fails);
5. time a call through Python against numpy and, when installed, torch (one thread each).

It ends with a table of kernels (where each schedule came from, its stored latency) and one of latencies.
"""
from __future__ import annotations

import logging
import os
import statistics
import time

import numpy as np

log = logging.getLogger("tunefarm.main_job")

TOLERANCE = 1e-4
CHECK_ROWS = 1000


class CheckFailed(AssertionError):
    """The compiled model does not reproduce numpy's output."""


def median_call_us(fn, *args, repeat: int = 9, min_time: float = 0.02) -> float:
    """Median per-call time of ``fn(*args)`` in microseconds (loops sized to ~``min_time`` seconds each)."""
    fn(*args)
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        dt = time.perf_counter() - t0
        if dt >= min_time or n >= 1 << 20:
            break
        n *= 2
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times) * 1e6


def torch_mlp(params: dict):
    """``(run, to_tensor)`` for torch's version of the MLP (one thread), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    w0, b0, w1, b1 = (torch.from_numpy(params[k]) for k in ("w0", "b0", "w1", "b1"))
    linear = torch.nn.functional.linear

    def run(x):
        with torch.no_grad():
            return linear(torch.relu(linear(x, w0, b0)), w1, b1)

    return run, torch.from_numpy


def check_against_numpy(exe, params: dict, batch: int, seed: int = 0) -> float:
    """Max abs error over ``CHECK_ROWS`` random inputs; raises CheckFailed beyond 1e-4 or on an argmax change."""
    from .models import mlp_reference

    rng = np.random.default_rng(seed)
    calls = max(1, CHECK_ROWS // batch)
    worst = 0.0
    for _ in range(calls):
        x = rng.random((batch, 784), dtype=np.float32)
        got = exe(x)
        ref = mlp_reference(x, params)
        worst = max(worst, float(np.max(np.abs(got - ref))))
        if not np.array_equal(got.argmax(1), ref.argmax(1)):
            raise CheckFailed(f"batch {batch}: compiled MLP picks a different class than numpy")
    if worst > TOLERANCE:
        raise CheckFailed(f"batch {batch}: compiled MLP differs from numpy by {worst:.2e} (> {TOLERANCE})")
    return worst


def make_farm(kind, target=None, workers: int | None = None, ray_address: str | None = None):
    """A farm from a name (``"ray"`` / ``"local"``) or the farm itself; returns ``(farm, owned)``."""
    if kind is None or isinstance(kind, str):
        from ..farm import LocalFarm, RayFarm

        if kind in (None, "ray"):
            return RayFarm(address=ray_address, num_workers=workers, target=target), True
        if kind == "local":
            return LocalFarm(num_workers=workers, target=target), True
        raise ValueError(f"unknown farm {kind!r}; use 'ray' or 'local'")
    return kind, False


def kernel_rows(mod, params, db, target, batch: int, sources: dict) -> list[dict]:
    from ..ir.structural import workload_key
    from .tasks import extract_tasks

    rows = []
    for t in extract_tasks(mod, params):
        try:
            rec = db.best(workload_key(t.func), target=str(target))
        except LookupError:
            rec = None
        rows.append({"batch": batch, "kernel": t.name, "weight": t.weight,
                     "schedule": sources.get(t.name, "?"),
                     "trials": _count(db, t.func, target),
                     "best_us": rec.median_us if rec is not None else None})
    return rows


def _count(db, func, target) -> int:
    from ..ir.structural import workload_key

    try:
        return db.count_records(workload_key(func), target=str(target))
    except LookupError:
        return 0


def run_mlp_job(params_path: str | None = None, trials: int = 256, db_path: str = "tune.sqlite", target=None,
                farm="ray", workers: int | None = None, ray_address: str | None = None, batch_sizes=(1, 64),
                seed: int = 0, save_dir: str | None = None, download: bool = True, out=print) -> dict:
    """Tune, compile, verify and benchmark the MLP. Returns the measured figures."""
    from ..cli import format_table
    from ..database import Database
    from ..nn import spec
    from ..tuning.api import resolve_target
    from .compile import compile as compile_model
    from .models import mlp, mlp_reference
    from .params import find_mlp_params, random_mlp_params
    from .tune_model import tune_model

    params, source = find_mlp_params(params_path, download=download)
    if params is None:
        out(f"NOTE: the course's MLP weights are unavailable ({source}); running on SEEDED RANDOM weights "
            f"(seed {seed}) instead. Pass --params PATH to use the real ones.")
        params = random_mlp_params(seed)
        source = f"seeded random weights (seed {seed})"
    else:
        out(f"weights: {source}")
    results = {"weights": source, "batches": {}, "kernels": []}
    latency_rows = []
    farm_obj, owned = make_farm(farm, target, workers, ray_address)
    try:
        target = resolve_target(target, farm_obj)
        out(f"target: {target}; database: {db_path}")
        with Database(db_path) as db:
            for batch in batch_sizes:
                mod, named = mlp(params).export({"forward": {"x": spec.Tensor((batch, 784), "float32")}})
                out(f"\n== batch {batch}: tuning (budget {trials} trials, stored trials count) ==")
                t0 = time.perf_counter()
                if trials > 0:
                    tune_model(mod, named, target=target, max_trials=trials, database=db, farm=farm_obj, seed=seed)
                tune_s = time.perf_counter() - t0
                exe = compile_model(mod, named, database=db, target=target)
                results["kernels"].extend(kernel_rows(mod, named, db, target, batch, exe.kernels))
                worst = check_against_numpy(exe, params, batch, seed)
                out(f"checked against numpy on {max(1, CHECK_ROWS // batch) * batch} inputs: max abs error "
                    f"{worst:.1e}, identical argmax")
                if save_dir:
                    os.makedirs(save_dir, exist_ok=True)
                    path = os.path.join(save_dir, f"mlp_b{batch}.tfx")
                    exe.save(path)
                    out(f"saved {path}")
                x = np.random.default_rng(seed).random((batch, 784), dtype=np.float32)
                row = {"batch": batch, "tunefarm_us": median_call_us(exe, x),
                       "numpy_us": median_call_us(mlp_reference, x, params), "torch_us": None,
                       "tune_s": tune_s, "max_abs_err": worst}
                t = torch_mlp(params)
                if t is not None:
                    run, to_t = t
                    row["torch_us"] = median_call_us(run, to_t(x))
                row["vs_numpy"] = row["numpy_us"] / row["tunefarm_us"]
                row["vs_torch"] = row["torch_us"] / row["tunefarm_us"] if row["torch_us"] else None
                results["batches"][batch] = row
                latency_rows.append(row)
    finally:
        if owned:
            farm_obj.close()
    out("\n== kernels ==")
    out(format_table(results["kernels"], ["batch", "kernel", "weight", "schedule", "trials", "best_us"]))
    out("\n== latency per call through Python (median, us; speed-up = other / tunefarm) ==")
    out(format_table(latency_rows, ["batch", "tunefarm_us", "numpy_us", "vs_numpy", "torch_us", "vs_torch",
                                    "tune_s"]))
    if all(r["torch_us"] is None for r in latency_rows):
        out("(torch is not installed: no torch column)")
    return results
