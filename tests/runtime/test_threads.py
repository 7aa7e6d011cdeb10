"""Building and calling from several Python threads at once (a farm worker may use a thread pool)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import runtime_programs as RP
from tunefarm.runtime import build


def _build_and_run(k: int) -> bool:
    n = 8 + k
    mod = build(RP.add(n))
    a = np.arange(n, dtype="float32")
    c = np.zeros(n, "float32")
    mod(a, a, c)
    res = mod.time_evaluator("add", number=2, repeat=1)(a, a, c)
    return bool((c == 2 * a).all()) and res.results[0] > 0


def test_concurrent_builds_and_calls():
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(_build_and_run, range(16)))
