"""A farm that searches for real but only simulates building and timing the programs a tuning job picks.

``SimulatedFarm(farm, build_secs=..., run_secs=...)`` wraps a real farm (LocalFarm, or a RayFarm on a
``ray.cluster_utils.Cluster`` of many simulated nodes). Search and training work run on its workers exactly
as in production; each *measurement* instead sleeps ``build_secs`` (a build on a core of its own: sleeping
leaves the machine's cores to the search) and reports a latency derived from the program hash. It answers
capacity questions a small machine cannot answer for real: can one driver keep hundreds of workers busy, and
how much of its CPU does each trial cost (benchmarks/bench_scale.py).

With ``search_secs`` set, search is simulated too (dozens of actors searching for real need as many cores):
the first search request of a task builds a pool of ``pool`` real programs of it (real sampling,
postprocessing and features, once, in this process), and every request is then answered on a worker by
sleeping ``search_secs`` per program and returning programs drawn from the pool. The driver's side of the
search (taking replies, scoring with the cost model, picking) stays real.

The simulated latency honours the early stop like the real measurer: a program slower than
``stop_above_s`` gets two timings instead of ``repeat``.
"""
from __future__ import annotations

import hashlib
import json
import random
import time

from ..runtime.measure_result import MeasureResult, MeasureStatus
from ..farm.work import Work, WorkerContext

JOB_MEASURE = "tunefarm.tuning.handlers:measure"
JOB_SEARCH = "tunefarm.tuning.handlers:search"
SIMULATED_MEASURE = "tunefarm.testing.simulated_job:measure_program"
SIMULATED_SEARCH = "tunefarm.testing.simulated_job:search_from_pool"


def simulated_latency(program_hash: str, run_secs: float) -> float:
    """A stable latency per program: ``run_secs`` times 1 to 10, spread evenly by a digest of the hash (a
    program hash is decimal text: reading its digits as hex would keep every latency below 6.4 times)."""
    u = int.from_bytes(hashlib.blake2b(program_hash.encode(), digest_size=4).digest(), "big") / 0xFFFFFFFF
    return run_secs * (1.0 + 9.0 * u)


def measure_program(payload: dict, ctx: WorkerContext) -> dict:
    """The tuning job's measure handler, simulated (see module doc)."""
    sim = payload["simulate"]
    time.sleep(float(sim["build_secs"]))
    lat = simulated_latency(payload["hash"], float(sim["run_secs"]))
    settings = payload["settings"]
    stop = settings.get("stop_above_s")
    n = 2 if stop is not None and lat > stop else int(settings.get("repeat", 3))
    time.sleep(lat * n)
    result = MeasureResult(MeasureStatus.OK, [lat] * n, float(sim["build_secs"]), None, ctx.host)
    return {"result": result.to_dict(), "replayed": False}


def search_from_pool(payload: dict, ctx: WorkerContext) -> dict:
    """The search handler, simulated (see module doc): as many programs as the request asks for, drawn from
    the task's pool, after ``search_secs`` per program."""
    from ..search.generate import requested  # (the search stack: a worker has it for the job's training items)

    request = payload["request"]
    pools = ctx.state.setdefault("tunefarm.testing.pools", {})
    pool = pools.get(payload["task"])
    if pool is None:
        pool = pools[payload["task"]] = json.loads(ctx.shared[f"simulated-pool:{payload['task']}"])
    n = requested(request)
    time.sleep(float(payload["search_secs"]) * n)
    rng = random.Random(f"{request.get('seed', 0)}:{ctx.worker_id}")
    rows = rng.sample(pool, min(n, len(pool)))
    return {"programs": rows, "evaluated": [None] * len(request.get("designs", ())), "valid": len(rows),
            "invalid": 0, "reasons": {}}


def program_pool(task_text: str, workload_text: str, n: int) -> list:
    """``n`` real programs of a task (its spec and workload texts), as a search reply lists them."""
    from ..search.generate import TaskCache, generate  # (the search stack: loaded only to build a pool)

    cache = TaskCache.from_spec(json.loads(task_text), workload_text)
    return generate(cache, {"fresh": n, "seed": 1})["programs"]


class SimulatedFarm:
    """A farm (see module doc); everything but the job's measurements (and, with ``search_secs``, its search)
    goes to ``farm`` unchanged."""

    def __init__(self, farm, build_secs: float = 0.2, run_secs: float = 1e-4, search_secs: float | None = None,
                 pool: int = 2000):
        self.farm = farm
        self.simulate = {"build_secs": float(build_secs), "run_secs": float(run_secs)}
        self.search_secs = search_secs
        self.pool = pool
        self._pools: dict[str, str] = {}  # task digest -> its pool's JSON text

    def put(self, work: Work) -> int:
        if work.handler == JOB_MEASURE:
            work.handler = SIMULATED_MEASURE
            work.payload = dict(work.payload, simulate=self.simulate)
        elif work.handler == JOB_SEARCH and self.search_secs is not None:
            digest = work.payload["task"]
            text = self._pools.get(digest)
            if text is None:
                spec_text = work.shared[f"task:{digest}"]
                key = json.loads(spec_text)["key"]
                rows = program_pool(spec_text, work.shared[f"workload:{key}"], self.pool)
                text = self._pools[digest] = json.dumps(rows, separators=(",", ":"))
            work.handler = SIMULATED_SEARCH
            work.payload = dict(work.payload, search_secs=self.search_secs)
            work.shared = {f"simulated-pool:{digest}": text}
        return self.farm.put(work)

    def __getattr__(self, name):
        return getattr(self.farm, name)

    def close(self) -> None:
        self.farm.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
