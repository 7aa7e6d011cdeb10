"""Search work on a worker: sample, mutate or replay designs into programs, and describe them as plain data.

This is the per-candidate half of the search (replay, postprocessors, verification, program hash, features)
and it runs where the cores are: on the farm's workers, many requests at once. The driver keeps only what must
be central (population, dedup, cost model, selection; see ``strategy.py``) and sends *requests*:

    {"fresh": k,                                  # k new samples of the space
     "mutate": [[parent trace text, count], ...], # count mutants of each parent (any decision, MetaSchedule's weights)
     "local": [[parent trace text, count], ...],  # count small steps around each (gentle tile moves)
     "designs": [trace text, ...],                # replay these designs (warm start, or designs sampled by the driver)
     "seed": s}

and gets back, per valid program, ``[program hash, full trace text, features (base64 float32), sketch id,
origin]``, plus for ``designs`` one entry (or None) per input in order, and the counts of invalid candidates
with their most common reasons. What crosses the wire is small data: traces with their decisions, hashes,
feature rows.

The worker keeps the programs it produced (the scheduled function, by program hash; ``TaskCache``) so that
when the driver picks one to measure and sends it back to the same worker, nothing is replayed twice.
"""
from __future__ import annotations

import base64
import collections
import hashlib
import json
import random

import numpy as np

from ..ir.serialize import from_json
from ..schedule import Trace
from .errors import SearchError
from .features import extract_features
from .mutators import default_mutators, local_mutators, mutate
from .program import Program, design_part, sketch_key
from .task import TuneTask
from .task_spec import postprocs_from_spec, space_from_spec

PROGRAM_CACHE = 256   # scheduled programs a worker keeps per task for measuring without replay
TRACE_CACHE = 512     # parsed parent designs a worker keeps per task


def encode_features(row: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(row, dtype=np.float32).tobytes()).decode("ascii")


def decode_features(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32)


def sketch_id(design: Trace) -> str:
    """A short name of the design's structure (its instructions without decisions): one per sketch."""
    return hashlib.sha1(sketch_key(design).encode()).hexdigest()[:12]


class TaskCache:
    """One task rebuilt on a worker, with the programs and parsed designs it has seen (bounded LRUs)."""

    def __init__(self, task: TuneTask, n_cores: int):
        self.task = task
        self.n_cores = n_cores
        self.mutators = default_mutators()
        self.local_mutators = local_mutators()
        self.programs: collections.OrderedDict[str, object] = collections.OrderedDict()
        self.designs: collections.OrderedDict[str, Trace] = collections.OrderedDict()

    @classmethod
    def from_spec(cls, spec: dict, workload_text: str) -> "TaskCache":
        """Rebuild a task on a worker from its spec (``task_spec``) and its workload's JSON text."""
        func = from_json(json.loads(workload_text))
        space = space_from_spec(spec["space"]) if spec.get("space") else None
        task = TuneTask(spec.get("name", "task"), func, space, postprocs_from_spec(spec["postprocs"]),
                        key=spec["key"], flop=0.0)
        return cls(task, int(spec.get("n_cores", 1)))

    def keep(self, prog: Program) -> None:
        self.programs[prog.hash] = prog.func
        self.programs.move_to_end(prog.hash)
        while len(self.programs) > PROGRAM_CACHE:
            self.programs.popitem(last=False)

    def scheduled(self, program_hash: str):
        """The scheduled function of a program this worker produced, or None."""
        func = self.programs.get(program_hash)
        if func is not None:
            self.programs.move_to_end(program_hash)
        return func

    def design_of(self, trace_text: str) -> Trace:
        key = hashlib.sha1(trace_text.encode()).hexdigest()
        got = self.designs.get(key)
        if got is None:
            got = self.designs[key] = design_part(Trace.from_json(json.loads(trace_text)))
            while len(self.designs) > TRACE_CACHE:
                self.designs.popitem(last=False)
        return got


def requested(request: dict) -> int:
    """How many new programs a request asks for: its fresh samples and mutants (``designs`` are replays)."""
    return int(request.get("fresh", 0)) + sum(int(c) for key in ("mutate", "local") for _, c in request.get(key, ()))


def generate(cache: TaskCache, request: dict) -> dict:
    """Run one search request (see module doc); failures of single candidates are counted, not raised."""
    task = cache.task
    rng = random.Random(request.get("seed", 0))
    task.rng.seed(rng.randrange(1 << 62))
    valid0, invalid0 = task.n_valid, task.n_invalid
    reasons0 = collections.Counter(task.invalid_reasons)
    out: list = []
    index: dict[str, int] = {}

    def emit(prog: Program | None, origin: str) -> int | None:
        """Add a program to the reply (once); its index in ``programs``, or None for an invalid one."""
        if prog is None:
            return None
        if prog.hash not in index:
            cache.keep(prog)
            index[prog.hash] = len(out)
            if prog.described is None:  # a program sampled again (same decisions) is described once
                prog.described = (json.dumps(prog.trace_json(), separators=(",", ":")),
                                  encode_features(extract_features(prog.func, cache.n_cores)), sketch_id(prog.design))
            out.append([prog.hash, *prog.described, origin])
        return index[prog.hash]

    evaluated = []
    try:
        for text in request.get("designs", ()):
            try:
                design = cache.design_of(text)
            except ValueError as e:
                task.count_invalid(f"stored trace: {e}")
                evaluated.append(None)
                continue
            evaluated.append(emit(task.from_design(design), "design"))
        want = int(request.get("fresh", 0))
        got, attempts = 0, 0
        while got < want and attempts < max(4 * want, 16):
            attempts += 1
            before = len(out)
            emit(task.sample(), "fresh")
            got += len(out) - before
        for key, mutators, origin in (("mutate", cache.mutators, "mutant"), ("local", cache.local_mutators, "local")):
            for text, count in request.get(key, ()):
                parent = cache.design_of(text)
                for _ in range(int(count)):
                    emit(_mutant(task, parent, rng, mutators), origin)
    except SearchError as e:
        return {"error": str(e)}
    reasons = collections.Counter(task.invalid_reasons)
    reasons.subtract(reasons0)
    return {"programs": out, "evaluated": evaluated, "valid": task.n_valid - valid0,
            "invalid": task.n_invalid - invalid0, "reasons": {r: c for r, c in reasons.most_common(5) if c > 0}}


def _mutant(task: TuneTask, parent: Trace, rng: random.Random, mutators) -> Program | None:
    edit = mutate(parent, rng, mutators, task.func)
    if edit is None:
        return None
    try:
        design = parent.with_decision(*edit)
    except ValueError:
        return None
    return task.from_design(design)
