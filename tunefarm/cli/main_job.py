"""The main job: tune the course's MLP, compile it from the database, check it, and time it honestly.

Run by ``tunefarm tune-model mlp``. It runs on the course's FashionMNIST weights shipped with tunefarm (sha256
checked) unless ``--params`` names another file, and says which. Per batch size:

1. export the MLP (``nn`` front end) and bind its weights;
2. tune its kernels on the farm (the search logs a per-task progress table every round);
3. compile the whole model twice: from the database's best traces (``tuned``) and with the default schedules
   (``untuned``), so the table shows what tuning bought on its own;
4. check both against numpy's ``relu(x @ w0.T + b0) @ w1.T + b1`` on 1000 random inputs (max abs error
   <= 1e-4 and identical argmax, or the job fails);
5. time a call through Python of untuned, tuned, numpy and (when installed) torch side by side
   (``side_by_side.py``: interleaved rounds in this process, baselines held to the compiled model's thread
   count, medians with their 10th-90th percentile range, ratios taken round by round).

It ends with a table of kernels (where each schedule came from, its stored latency) and one of latencies.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..database import UnknownWorkloadError, best_record, open_database
from ..graph import compile_model
from ..graph import extract_tasks, tune_model
from ..graph.params import find_mlp_params
from ..nn import spec
from ..nn.models import mlp, mlp_reference
from ..tuning.api import resolve_target
from ..tuning.farm_on_demand import farm_on_demand
from .output import format_table
from .side_by_side import Spread, ratio_spread, time_side_by_side

TOLERANCE = 1e-4
CHECK_ROWS = 1000
LATENCY_COLUMNS = ["batch", "program", "median_us", "p10-p90_us", "vs_numpy", "vs_untuned"]


class CheckFailed(AssertionError):
    """The compiled model does not reproduce numpy's output."""


def torch_mlp(params: dict):
    """``(run, to_tensor)`` for torch's version of the MLP, or None without torch (threads: see side_by_side)."""
    try:
        import torch
    except ImportError:
        return None
    w0, b0, w1, b1 = (torch.from_numpy(params[k]) for k in ("w0", "b0", "w1", "b1"))
    linear = torch.nn.functional.linear

    def run(x):
        with torch.no_grad():
            return linear(torch.relu(linear(x, w0, b0)), w1, b1)

    return run, torch.from_numpy


def check_against_numpy(exe, params: dict, batch: int, seed: int = 0, what: str = "compiled MLP") -> float:
    """Max abs error over ``CHECK_ROWS`` random inputs; raises CheckFailed beyond 1e-4 or on an argmax change."""
    rng = np.random.default_rng(seed)
    calls = max(1, CHECK_ROWS // batch)
    worst = 0.0
    for _ in range(calls):
        x = rng.random((batch, 784), dtype=np.float32)
        got = exe(x)
        ref = mlp_reference(x, params)
        worst = max(worst, float(np.max(np.abs(got - ref))))
        if not np.array_equal(got.argmax(1), ref.argmax(1)):
            raise CheckFailed(f"batch {batch}: the {what} picks a different class than numpy")
    if worst > TOLERANCE:
        raise CheckFailed(f"batch {batch}: the {what} differs from numpy by {worst:.2e} (> {TOLERANCE})")
    return worst


def kernel_rows(mod, params, db, target, batch: int, sources: dict) -> list[dict]:
    """One row per kernel: its workload name, weight, where its schedule came from, trials and best latency."""
    rows = []
    for t in extract_tasks(mod, params):
        rec = best_record(db, t.workload_key, target)
        try:
            trials = db.count_records(t.workload_key, target=str(target))
        except UnknownWorkloadError:
            trials = 0
        rows.append({"batch": batch, "kernel": t.workload_name, "weight": t.weight,
                     "schedule": sources.get(t.name, "?"), "trials": trials,
                     "best_us": rec.median_us if rec is not None else None})
    return rows


def _ratio_text(samples: dict[str, list[float]], other: str, name: str) -> str | None:
    return None if other == name else ratio_spread(samples, other, name).text(suffix="x")


def latency_rows(batch: int, samples: dict[str, list[float]]) -> list[dict]:
    """The latency table's rows of one batch size, from ``time_side_by_side``'s samples."""
    rows = []
    for name, times in samples.items():
        s = Spread.of(times)
        rows.append({"batch": batch, "program": name, "median_us": s.median,
                     "p10-p90_us": f"{s.p10:,.2f}-{s.p90:,.2f}",
                     "vs_numpy": _ratio_text(samples, "numpy", name),
                     "vs_untuned": _ratio_text(samples, "untuned", name), "spread": s})
    return rows


def _contenders(tuned, untuned, params: dict, x: np.ndarray) -> dict:
    contenders = {"untuned": (untuned, (x,)), "tuned": (tuned, (x,)), "numpy": (mlp_reference, (x, params))}
    t = torch_mlp(params)
    if t is not None:
        run, to_tensor = t
        contenders["torch"] = (run, (to_tensor(x),))
    return contenders


def _one_batch(batch, params, named_params, mod, db, target, farm, trials, seed, save_dir, rounds, out,
               tune_options: dict) -> dict:
    """Tune, compile (tuned and untuned), check, save and time the model at one batch size."""
    out(f"\n== batch {batch}: tuning (budget {trials} trials, stored trials count) ==")
    t0 = time.perf_counter()
    if trials > 0:
        farm.start()  # here, on the main thread, not on the job's measuring one
        job = tune_model(mod, named_params, target=target, max_trials=trials, database=db, farm=farm, seed=seed,
                         **tune_options)
        out(f"tuning took {time.perf_counter() - t0:.1f} s")
        for error in job.errors.values():  # such a kernel keeps its default schedule
            out(f"NOTE: {error}")
    tune_s = time.perf_counter() - t0
    tuned = compile_model(mod, named_params, db, target)
    untuned = compile_model(mod, named_params, None, target)
    worst = check_against_numpy(tuned, params, batch, seed, "tuned model")
    check_against_numpy(untuned, params, batch, seed, "untuned model")
    out(f"checked against numpy on {max(1, CHECK_ROWS // batch) * batch} inputs: max abs error {worst:.1e}, "
        "identical argmax (tuned and untuned)")
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
        path = os.path.join(save_dir, f"mlp_b{batch}.tfx")
        tuned.save(path)
        out(f"saved {path}")
    x = np.random.default_rng(seed).random((batch, 784), dtype=np.float32)
    samples = time_side_by_side(_contenders(tuned, untuned, params, x), rounds=rounds,
                                threads=target.num_cores)
    return {"tune_s": tune_s, "max_abs_err": worst, "samples": samples, "kernels": tuned.kernels,
            "rows": latency_rows(batch, samples)}


def run_mlp_job(params_path: str | None = None, trials: int = 256, db_path: str = "tune.sqlite", target=None,
                farm: str = "ray", workers: int | None = None, ray_address: str | None = None, batch_sizes=(1, 64),
                seed: int = 0, save_dir: str | None = None, rounds: int = 61, out=print,
                tune_options: dict | None = None) -> dict:
    """Tune, compile, verify and time the MLP (see the module doc) on the farm named ``farm`` (``"ray"`` or
    ``"local"``, started only when something is measured; ``tune_options``: ``time_budget_s``, ``patience``,
    ``confirm`` for each job). Returns the measured figures."""
    params, source = find_mlp_params(params_path)
    out(f"weights: {source}")
    results = {"weights": source, "batches": {}, "kernels": []}
    farm_obj = farm_on_demand(farm, target, workers, ray_address)
    try:
        with open_database(db_path) as db:  # a bad file fails here, before a farm that must ask Ray for its target
            target = resolve_target(target, farm_obj)
            out(f"target: {target.label()}")
            out(f"database: {db.path}")
            for batch in batch_sizes:
                mod, named = mlp(params).export({"forward": {"x": spec.Tensor((batch, 784), "float32")}})
                res = _one_batch(batch, params, named, mod, db, target, farm_obj, trials, seed, save_dir, rounds,
                                 out, dict(tune_options or {}))
                results["batches"][batch] = res
                results["kernels"].extend(kernel_rows(mod, named, db, target, batch, res["kernels"]))
    finally:
        farm_obj.close()
    out("\n== kernels ==")
    out(format_table(results["kernels"], ["batch", "kernel", "weight", "schedule", "trials", "best_us"]))
    rows = [r for b in results["batches"].values() for r in b["rows"]]
    out(f"\n== latency per call through Python (us; {rounds} interleaved rounds, {target.num_cores} thread(s) "
        "each) ==")
    out(format_table(rows, LATENCY_COLUMNS))
    out("median [p10-p90] over rounds; vs_X: X's time / this program's time in the same round (> 1: faster than X)")
    if not any(r["program"] == "torch" for r in rows):
        out("(torch is not installed: no torch row)")
    return results
