"""Transfer across workloads: the cost model starts from the study's records of *other* workloads on the same
target, so a new workload's first picks are ranked by what the study learned of programs like it (Ansor's and
MetaSchedule's cross-task pre-training).

The model's labels are throughput normalized per workload (``search/cost_model.py``), so samples of other
workloads join as groups of their own and teach which program features are fast, not which absolute times.
Their stored traces are replayed and featurized on the workers, as a resumed job's are (``warm_start.py``):
per other workload its ``TRANSFER_PER_WORKLOAD`` fastest successful records and as many others at random (a
model must see slow programs to rank), failures left out. Nothing of another workload enters a task's dedup,
population or budget: only the model learns from them.

Whether it pays is measured, not assumed (``benchmarks/bench_transfer.py``): trials a held-out workload needs to
reach the best a 256-trial job without transfer finds. ``DEFAULT`` records the outcome.
"""
from __future__ import annotations

import json
import logging

from ..ir.serialize import from_json
from ..search import strategy as strategies
from ..search.task import TuneTask
from .job_task import JobTask
from .warm_start import replay_stored

log = logging.getLogger("tunefarm.tuning")

# measured (README, benchmarks/bench_transfer.py): held-out matmul-96x192x160 over 9 seeds, trials to come within 2%
# of a 256-trial job's best: median 28 without transfer, 44 with (per seed 0.02x-12.8x): no 20% gain, so off
DEFAULT = False
TRANSFER_PER_WORKLOAD = 64  # fastest records per other workload (and as many at random)


def _rows(db, key: str, target: str) -> list:
    df = db.records(key, target=target, status="ok", decisions=False)
    best = df.sort_values("min_us").head(TRANSFER_PER_WORKLOAD)
    rest = df.drop(best.index)
    rest = rest.sample(min(len(rest), TRANSFER_PER_WORKLOAD), random_state=0)
    return list(best.itertuples(index=False)) + list(rest.itertuples(index=False))


def transfer(tasks: list[JobTask], db, target: str, farm, model, space_for, postprocs, n_cores: int) -> int:
    """Teach ``model`` the stored records of the study's other workloads on ``target`` (see module doc);
    ``space_for(func)``: the space a helper task replays designs in. Returns the samples added."""
    own = {t.key for t in tasks}
    batches = []
    for key in db.workloads()["key"]:
        if key in own or target not in db.targets(key):
            continue
        rows = _rows(db, key, target)
        if not rows:
            continue
        info = db.get_workload(key)
        func = from_json(json.loads(info.ir_json))
        tune_task = TuneTask(info.name, func, space_for(func), postprocs, 1.0)
        helper = JobTask(tune_task, n_cores, strategies.create("random", info.name, key, model, 0))  # replays only
        batches.append((helper, rows))
    added = []
    replay_stored(batches, farm, lambda helper, chunk, reply, worker: added.append(
        _learn(helper, chunk, reply, worker, model)))
    if sum(added):
        log.info("cost model starts from %d records of other workloads on this target", sum(added))
    return sum(added)


def _learn(helper: JobTask, chunk: list, reply: dict, worker: str, model) -> int:
    programs = reply.get("programs", [])
    n = 0
    for row, index in zip(chunk, reply.get("evaluated", [])):
        if index is not None:
            features = strategies.Candidate.from_reply(programs[index], worker).features
            model.add([features], [helper.key], [row.min_us / 1e6])
            n += 1
    return n
