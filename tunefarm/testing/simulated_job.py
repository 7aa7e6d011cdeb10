"""A farm that searches for real but only simulates building and timing the programs a tuning job picks.

``SimulatedFarm(farm, build_secs=..., run_secs=...)`` wraps a real farm (LocalFarm, or a RayFarm on a
``ray.cluster_utils.Cluster`` of many simulated nodes). Search and training work run on its workers exactly
as in production; each *measurement* instead sleeps ``build_secs`` (a build on a core of its own: sleeping
leaves the machine's cores to the search) and reports a latency derived from the program hash. It answers
capacity questions a small machine cannot answer for real: can one driver keep hundreds of workers busy, and
how much of its CPU does each trial cost (benchmarks/bench_scale.py).

The simulated latency honours the early stop like the real measurer: a program slower than
``stop_above_s`` gets two timings instead of ``repeat``.
"""
from __future__ import annotations

import hashlib
import time

from ..runtime.measure_result import MeasureResult, MeasureStatus
from ..farm.work import Work, WorkerContext

JOB_MEASURE = "tunefarm.tuning.handlers:measure"
SIMULATED_MEASURE = "tunefarm.testing.simulated_job:measure_program"


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


class SimulatedFarm:
    """A farm (see module doc); everything but the job's measurements goes to ``farm`` unchanged."""

    def __init__(self, farm, build_secs: float = 0.2, run_secs: float = 1e-4):
        self.farm = farm
        self.simulate = {"build_secs": float(build_secs), "run_secs": float(run_secs)}

    def put(self, work: Work) -> int:
        if work.handler == JOB_MEASURE:
            work.handler = SIMULATED_MEASURE
            work.payload = dict(work.payload, simulate=self.simulate)
        return self.farm.put(work)

    def __getattr__(self, name):
        return getattr(self.farm, name)

    def close(self) -> None:
        self.farm.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
