"""Helpers of the search tests: run a task's search in this process, as the workers would."""
from __future__ import annotations

import json

from tunefarm.schedule import Trace
from tunefarm.search.strategy import SearchStrategy
from tunefarm.search.generate import TaskCache, generate
from tunefarm.search.postprocs import default_postprocs
from tunefarm.search.task import TuneTask


def task_cache(func, space, seed=0, postprocs=None) -> TaskCache:
    post = default_postprocs() if postprocs is None else postprocs
    return TaskCache(TuneTask("t", func, space, post, seed=seed), 1)


def fill(search: SearchStrategy, cache: TaskCache, n: int) -> int:
    """One search request of about ``n`` candidates, answered here; returns the new candidates."""
    return search.receive(generate(cache, search.request(n)), "here")


def design(entry) -> Trace:
    return Trace.from_json(json.loads(entry.trace))


def oracle(entry) -> float:
    """A made-up latency: programs whose innermost j tile is wide are fast (the j tiles are the second
    ``sample_perfect_tile`` of the auto space, the only one of the course's space)."""
    t = design(entry)
    tiles = [d for i, d in sorted(t.decisions.items()) if t.insts[i].kind == "SamplePerfectTile"]
    return 1e-3 / tiles[min(1, len(tiles) - 1)][-1]
