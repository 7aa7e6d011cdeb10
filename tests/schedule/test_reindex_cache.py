"""``reindex_cache_read`` / ``reindex_cache_write``: the cache takes the index map's layout, the copy stage sits
where it must, the trace replays (the map is data), and the built program computes what numpy does."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.runtime import build
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.schedule.trace_python import apply_python
from tunefarm.script import T


@T.prim_func
def matmul(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 24), "float32"), C: T.Buffer((32, 24), "float32")):
    for i, j, k in T.grid(32, 24, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _check_and_replay(sch):
    rng = np.random.default_rng(0)
    a, b = rng.random((32, 16), dtype=np.float32), rng.random((16, 24), dtype=np.float32)
    c = np.zeros((32, 24), np.float32)
    build(sch.mod["main"])(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    again = Schedule.from_trace(Trace.from_json(sch.trace.as_json()), matmul)
    from_text = Schedule(matmul)
    apply_python(sch.trace.as_python(), from_text)
    for other in (again, from_text):
        assert str(other.mod["main"]) == str(sch.mod["main"])
        assert other.trace.as_python() == sch.trace.as_python()


def test_reindex_cache_read_packs_the_operand():
    sch = Schedule(matmul)
    cache = sch.reindex_cache_read("C", 1, "local", lambda i, j, k: (j // 8, k, j % 8))
    copy = sch.get(cache)
    assert copy.writes[0].buffer.name == "B_local"
    assert [s.value for s in copy.writes[0].buffer.shape] == [3, 16, 8]
    assert "index_map=lambda i, j, k: (j // 8, k, j % 8)" in sch.trace.as_python()[-1]
    _check_and_replay(sch)


def test_reindex_cache_write_transposes_the_accumulator():
    sch = Schedule(matmul)
    sch.reindex_cache_write("C", 0, "global", lambda i, j, k: (j, i))
    func = sch.mod["main"]
    assert [s.value for s in func.body.block.alloc_buffers[-1].shape] == [24, 32]
    _check_and_replay(sch)


@pytest.mark.parametrize("index_map, reason", [
    (lambda i, j, k: (j,), "must use exactly the iteration variables"),
    (lambda i, j: (i, j), "must take 3 positional arguments"),
    ("lambda i, j, k: (__import__('os'),)", "only its arguments, integers"),
    ("lambda i, j, k: (j // 0, k)", "divides by zero"),
])
def test_bad_index_maps_are_refused(index_map, reason):
    with pytest.raises(ScheduleError, match=reason):
        Schedule(matmul).reindex_cache_read("C", 1, "local", index_map)
