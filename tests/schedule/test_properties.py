"""Property: any sequence of schedule calls either raises ScheduleError or yields a program that computes
the same numbers as numpy -- and whose trace replays (also through JSON) to the very same program.

Every primitive takes part, with arguments drawn from the random variables the sequence has produced so far
(including stale ones: loops already split away, blocks already inlined), so illegal requests are common
and must be refused with ScheduleError and nothing else.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import programs as P
from tunefarm.schedule import Schedule, ScheduleError, Trace
from tunefarm.schedule.tree import block_names

PROGRAMS = {
    "matmul": lambda: P.matmul(6, 10, 8),
    "dense_bias_relu": lambda: P.dense_bias_relu(4, 6, 8),
    "conv2d": lambda: P.conv2d(1, 2, 5, 3, 3, 1),
}
_FUNCS = {name: build() for name, build in PROGRAMS.items()}  # built once: the IR is immutable

PRIMITIVES = ["get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers", "split", "fuse",
              "reorder", "parallel", "vectorize", "unroll", "compute_inline", "reverse_compute_inline",
              "compute_at", "reverse_compute_at", "cache_read", "cache_write", "decompose_reduction", "rfactor",
              "annotate", "unannotate", "sample_perfect_tile", "sample_categorical", "sample_compute_location"]


class Pools:
    """The random variables produced so far (stale ones stay: using them must be a ScheduleError)."""

    def __init__(self):
        self.blocks: list = []
        self.loops: list = []
        self.loop_groups: list = []  # results of get_loops / split, for adjacent fuse and reorder
        self.exprs: list = []
        self.tiles: list = []  # results of sample_perfect_tile


def _block(data, sch: Schedule, pools: Pools):
    names = block_names(sch.mod["main"])
    if pools.blocks and data.draw(st.booleans()):
        return data.draw(st.sampled_from(pools.blocks))
    if len(names) > 1 and data.draw(st.integers(0, 9)):
        names.remove("root")  # the root block is rarely a useful argument
    rv = sch.get_block(data.draw(st.sampled_from(names)))
    pools.blocks.append(rv)
    return rv


def _own_loop(data, sch: Schedule, pools: Pools, block):
    """Mostly one of the loops above ``block``, else any loop."""
    if data.draw(st.integers(0, 3)):
        group = sch.get_loops(block)
        if group:
            pools.loop_groups.append(group)
            pools.loops.extend(group)
            return data.draw(st.sampled_from(group))
    return _loop(data, sch, pools)


def _loop_near(data, sch: Schedule, pools: Pools, block, relation: str):
    """Mostly a loop of a consumer/producer of ``block`` (where compute_at may be legal), else any loop."""
    if data.draw(st.integers(0, 3)):
        others = getattr(sch, relation)(block)
        if others:
            group = sch.get_loops(data.draw(st.sampled_from(others)))
            if group:
                pools.loop_groups.append(group)
                pools.loops.extend(group)
                return data.draw(st.sampled_from(group))
    return _loop(data, sch, pools)


def _loop(data, sch: Schedule, pools: Pools):
    if not pools.loops or data.draw(st.integers(0, 4)) == 0:
        group = sch.get_loops(_block(data, sch, pools))
        if group:
            pools.loop_groups.append(group)
            pools.loops.extend(group)
        elif not pools.loops:
            raise ScheduleError("test", "no loops yet")  # the root block has none; try another step
    return data.draw(st.sampled_from(pools.loops))


def _factors(data, pools: Pools):
    if pools.tiles and data.draw(st.integers(0, 2)) == 0:
        return list(data.draw(st.sampled_from(pools.tiles)))
    n = data.draw(st.integers(1, 3))
    factors = [data.draw(st.integers(1, 6)) for _ in range(n)]
    if data.draw(st.integers(0, 3)):
        factors[data.draw(st.integers(0, n - 1))] = None
    return factors


def step(data, sch: Schedule, pools: Pools) -> None:
    prim = data.draw(st.sampled_from(PRIMITIVES))
    if prim == "get_block":
        _block(data, sch, pools)
    elif prim == "get_loops":
        _loop(data, sch, pools)
    elif prim == "get_child_blocks":
        target = _block(data, sch, pools) if data.draw(st.booleans()) else _loop(data, sch, pools)
        pools.blocks.extend(sch.get_child_blocks(target))
    elif prim in ("get_producers", "get_consumers"):
        pools.blocks.extend(getattr(sch, prim)(_block(data, sch, pools)))
    elif prim == "split":
        loop = _loop(data, sch, pools)
        group = sch.split(loop, _factors(data, pools))
        pools.loops.extend(group)
        pools.loop_groups.append(group)
    elif prim == "fuse":
        _loop(data, sch, pools)
        group = data.draw(st.sampled_from(pools.loop_groups or [pools.loops]))
        lo = data.draw(st.integers(0, max(0, len(group) - 1)))
        hi = data.draw(st.integers(lo + 1, max(lo + 1, len(group))))
        chosen = group[lo:hi] if data.draw(st.integers(0, 4)) else data.draw(st.lists(
            st.sampled_from(pools.loops), min_size=1, max_size=3))
        pools.loops.append(sch.fuse(*chosen))
    elif prim == "reorder":
        _loop(data, sch, pools)
        source = data.draw(st.sampled_from(pools.loop_groups or [pools.loops])) if data.draw(st.integers(0, 3)) \
            else pools.loops
        chosen = data.draw(st.lists(st.sampled_from(source), min_size=1, max_size=4, unique=True))
        sch.reorder(*data.draw(st.permutations(chosen)))
    elif prim in ("parallel", "vectorize", "unroll"):
        getattr(sch, prim)(_loop(data, sch, pools))
    elif prim in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, prim)(_block(data, sch, pools))
    elif prim in ("compute_at", "reverse_compute_at"):
        block = _block(data, sch, pools)
        loop = _loop_near(data, sch, pools, block, "get_consumers" if prim == "compute_at" else "get_producers")
        getattr(sch, prim)(block, loop, preserve_unit_loops=data.draw(st.booleans()))
    elif prim in ("cache_read", "cache_write"):
        block = _block(data, sch, pools)
        n = len(sch.get(block).reads if prim == "cache_read" else sch.get(block).writes)
        index = data.draw(st.integers(0, max(0, n - 1))) if data.draw(st.integers(0, 5)) else n
        pools.blocks.append(getattr(sch, prim)(block, index, data.draw(st.sampled_from(["local", "global"]))))
    elif prim == "decompose_reduction":
        block = _block(data, sch, pools)
        pools.blocks.append(sch.decompose_reduction(block, _own_loop(data, sch, pools, block)))
    elif prim == "rfactor":
        loop = _own_loop(data, sch, pools, _block(data, sch, pools))
        pools.blocks.append(sch.rfactor(loop, data.draw(st.integers(0, 2))))
    elif prim == "annotate":
        target = _block(data, sch, pools) if data.draw(st.booleans()) else _loop(data, sch, pools)
        value = data.draw(st.sampled_from(pools.exprs)) if pools.exprs and data.draw(st.booleans()) else \
            data.draw(st.one_of(st.integers(0, 64), st.sampled_from(["SSRSRS", "x"]), st.floats(0, 1)))
        sch.annotate(target, data.draw(st.sampled_from(["k1", "pragma_auto_unroll_max_step"])), value)
    elif prim == "unannotate":
        target = _block(data, sch, pools) if data.draw(st.booleans()) else _loop(data, sch, pools)
        sch.unannotate(target, data.draw(st.sampled_from(["k1", "pragma_auto_unroll_max_step"])))
    elif prim == "sample_perfect_tile":
        loop = _loop(data, sch, pools)
        tiles = sch.sample_perfect_tile(loop, n=data.draw(st.integers(1, 3)),
                                        max_innermost_factor=data.draw(st.sampled_from([2, 4, 16, -1])))
        pools.exprs.extend(tiles)
        pools.tiles.append(tiles)
    elif prim == "sample_categorical":
        pools.exprs.append(sch.sample_categorical([1, 2, 3, 4], [0.25, 0.25, 0.25, 0.25]))
    elif prim == "sample_compute_location":
        block = _block(data, sch, pools)
        location = sch.sample_compute_location(block)
        pools.loops.append(location)
        if data.draw(st.integers(0, 2)):  # MetaSchedule's RandomComputeLocation: compute it there
            sch.compute_at(block, location)


def check_sequence(data, max_steps: int) -> None:
    name = data.draw(st.sampled_from(sorted(PROGRAMS)))
    func = _FUNCS[name]
    sch = Schedule(func, seed=data.draw(st.integers(0, 2 ** 16)))
    pools = Pools()
    for _ in range(data.draw(st.integers(1, max_steps))):
        try:
            step(data, sch, pools)
        except ScheduleError:
            pass  # refused: the schedule must be unchanged and still usable
    P.check_numerics(sch.mod, name, seed=1)
    replayed = Schedule.from_trace(Trace.from_json(json.loads(json.dumps(sch.trace.as_json()))), func)
    assert replayed.mod.script() == sch.mod.script()
    assert str(replayed.trace) == str(sch.trace)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_schedules_are_refused_or_correct(data):
    check_sequence(data, max_steps=8)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_schedules_are_refused_or_correct_many(data):
    check_sequence(data, max_steps=14)
