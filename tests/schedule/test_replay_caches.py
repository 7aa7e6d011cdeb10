"""The shortcuts that make replay fast give the answers of the slow paths they replace.

Replay caches analyses per IR node (a function's block/loop index, derived instead of rebuilt after edits
that keep the tree's shape; a block's inferred regions and accessed buffers), folds integer arithmetic
directly, reads bounds off affine forms and seeds the sampler lazily. Each test here compares one of those
with a from-scratch computation over many schedules, or checks a program a fast path produced against
numpy.
"""
from __future__ import annotations

import itertools
import json
import random

import pytest

import programs as P
import tiling_traces as TT
from course_trace import course_trace
from tunefarm.ir import expr as E
from tunefarm.ir import regions
from tunefarm.ir import stmt as S
from tunefarm.ir.arith import add_int, const_bound, mul_int, simplified_bound, simplified_int, simplify, sub_int
from tunefarm.ir.functor import collect_buffer_accesses
from tunefarm.ir.memo import NodeCache
from tunefarm.schedule import Schedule, ScheduleError, Trace, sampling, tree
from tunefarm.schedule.primitives import dataflow as D
from tunefarm.schedule.tree import FuncIndex, block_names


# ----------------------------------------------------------------------------------------------------------
# random schedules: every primitive, arguments from the random variables produced so far
# ----------------------------------------------------------------------------------------------------------
PROGRAMS = {
    "matmul": lambda: P.matmul(6, 10, 8),
    "mm_relu": lambda: P.mm_relu(8),
    "dense_bias_relu": lambda: P.dense_bias_relu(4, 6, 8),
    "conv2d": lambda: P.conv2d(1, 2, 5, 3, 3, 1),
    "row_sum": lambda: P.row_sum(8, 12),
}


def random_schedule(name: str, seed: int, steps: int, after_each=None) -> Schedule:
    """Apply ``steps`` random primitives (refusals included) and call ``after_each(sch)`` after each."""
    rnd = random.Random(seed)
    sch = Schedule(PROGRAMS[name](), seed=seed)
    blocks, loops = [], []

    def block():
        if blocks and rnd.random() < 0.5:
            return rnd.choice(blocks)
        rv = sch.get_block(rnd.choice(block_names(sch.mod["main"])))
        blocks.append(rv)
        return rv

    def loop(of=None):
        if not loops or rnd.random() < 0.6:
            ls = sch.get_loops(of or block())
            loops.extend(ls)
            if ls:
                return rnd.choice(ls)
        return rnd.choice(loops) if loops else None

    actions = [
        lambda: sch.split(loop(), [rnd.choice([None, 2, 3]), rnd.choice([2, 4])]),
        lambda: sch.fuse(*sch.get_loops(block())[:rnd.randint(1, 3)]),
        lambda: sch.reorder(*rnd.sample(sch.get_loops(block()), 2)),
        lambda: sch.parallel(loop()),
        lambda: sch.vectorize(loop()),
        lambda: sch.unroll(loop()),
        lambda: sch.annotate(rnd.choice([block(), loop()]), "k", rnd.choice([1, "x"])),
        lambda: sch.unannotate(rnd.choice([block(), loop()]), "k"),
        lambda: sch.compute_inline(block()),
        lambda: sch.reverse_compute_inline(block()),
        lambda: sch.cache_write(block(), 0, rnd.choice(["local", "global"])),
        lambda: sch.cache_read(block(), rnd.randint(0, 1), "global"),
        lambda: sch.decompose_reduction(block(), loop()),
        lambda: sch.rfactor(loop(), 0),
        lambda: sch.compute_at(block(), sch.sample_compute_location(block())),
        lambda: sch.reverse_compute_at(block(), loop(), rnd.random() < 0.5),
    ]
    for _ in range(steps):
        try:
            rnd.choice(actions)()
        except (ScheduleError, IndexError, ValueError):
            pass  # refused (or nothing to pick): the schedule is unchanged
        if after_each is not None:
            after_each(sch)
    return sch


def _same_index(a: FuncIndex, b: FuncIndex, func) -> bool:
    return (a.parent == b.parent and a.blocks == b.blocks and a.loops == b.loops and a.realizes == b.realizes
            and a.duplicate_blocks == b.duplicate_blocks and a.order == b.order and list(a.order) == list(b.order)
            and a.names(func) == b.names(func))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cached_and_derived_indexes_equal_a_fresh_walk(name):
    checked = []

    def check(sch):
        func = sch.mod["main"]
        assert _same_index(tree.func_index(func), FuncIndex.build(func.body), func)
        checked.append(func)

    for seed in range(12):
        random_schedule(name, seed, 14, check)
    assert len({id(f.body) for f in checked}) > 20  # many different functions were compared


def test_annotations_and_loop_kinds_derive_the_index_instead_of_walking():
    func = P.matmul(16, 16, 16)
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    before = tree.func_index(sch.mod["main"])
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.parallel(i)
    sch.annotate(sch.get_block("C"), "k", 1)
    after = tree._INDEXES.get(sch.mod["main"].body)
    assert after is not None and after is not before  # derived when the function was made, not looked up
    assert _same_index(after, FuncIndex.build(sch.mod["main"].body), sch.mod["main"])


def test_cached_regions_and_accesses_equal_a_fresh_inference():
    blocks = []

    def collect(sch):
        blocks.extend(r.block for r in tree.all_block_realizes(sch.mod["main"]))

    for name in PROGRAMS:
        for seed in range(4):
            random_schedule(name, seed, 10, collect)
    assert len({id(b) for b in blocks}) > 50
    for blk in blocks:
        reads, writes = regions.infer_block_regions(blk)
        fresh_reads, fresh_writes = regions._infer(blk)
        assert repr(reads) == repr(fresh_reads) and repr(writes) == repr(fresh_writes)
        assert [r.buffer for r in reads] == [r.buffer for r in fresh_reads]
        r, w = D.accessed_buffers(blk)
        body = [x for x in (blk.init, blk.body) if x is not None]
        lr, lw = collect_buffer_accesses(S.SeqStmt(body))
        local = D._allocated_inside(blk)
        assert r == {b for b in lr if b not in local} | {x.buffer for x in blk.reads}
        assert w == {b for b in lw if b not in local} | {x.buffer for x in blk.writes}


# ----------------------------------------------------------------------------------------------------------
# arithmetic fast paths
# ----------------------------------------------------------------------------------------------------------
def _operands():
    x, y = E.Var("x"), E.Var("y")
    w = E.Var("w", "int64")
    f = E.Var("f", "float32")
    return [x, y, w, f, E.IntImm(0), E.IntImm(1), E.IntImm(7), E.IntImm(0, "int64"), E.IntImm(3, "int64"),
            E.add(x, 3), E.mul(y, 4), E.FloatImm(0.0), E.FloatImm(2.5), E.IntImm(1, "bool"), E.Var("b", "bool")]


@pytest.mark.parametrize("fast, slow", [(add_int, E.add), (sub_int, E.sub), (mul_int, E.mul)])
def test_integer_constructors_fold_like_the_general_ones(fast, slow):
    ops = _operands()
    for a, b in itertools.product(ops, ops + [ops[0]]):
        try:
            want = slow(a, b)
        except TypeError as e:
            with pytest.raises(type(e)):
                fast(a, b)
            continue
        got = fast(a, b)
        assert type(got) is type(want) and got.dtype == want.dtype and repr(got) == repr(want)
        assert (got is a) == (want is a) and (got is b) == (want is b)


def _random_index_expr(rnd: random.Random, vs, depth: int):
    if depth == 0 or rnd.random() < 0.25:
        return rnd.choice(vs) if rnd.random() < 0.7 else E.IntImm(rnd.randint(-3, 9))
    a = _random_index_expr(rnd, vs, depth - 1)
    op = rnd.choice(["+", "-", "*", "//", "%", "min", "max"])
    if op in ("*", "//", "%"):
        return {"*": E.mul, "//": E.floordiv, "%": E.floormod}[op](a, rnd.randint(1, 6))
    b = _random_index_expr(rnd, vs, depth - 1)
    return {"+": E.add, "-": E.sub, "min": E.min_, "max": E.max_}[op](a, b)


def test_bounds_and_values_read_off_the_affine_form_match_simplify():
    rnd = random.Random(3)
    vs = [E.Var(f"v{i}") for i in range(4)]
    for _ in range(600):
        e = _random_index_expr(rnd, vs, 4)
        bounds = {v: (lo, lo + rnd.randint(0, 12)) for v in vs if rnd.random() < 0.8 for lo in [rnd.randint(-2, 5)]}
        s = simplify(e, bounds)
        assert simplified_bound(e, bounds) == const_bound(s, bounds)
        assert simplified_int(e, bounds) == (s.value if isinstance(s, E.IntImm) else None)


def test_literal_intervals_match_the_symbolic_route():
    rnd = random.Random(5)
    vs = [E.Var(f"v{i}") for i in range(4)]
    for _ in range(600):
        e = _random_index_expr(rnd, vs, 4)
        relax = {v: (E.IntImm(lo), E.IntImm(lo + rnd.randint(0, 9))) for v in vs if rnd.random() < 0.85
                 for lo in [rnd.randint(-3, 4)]}
        fast = D.interval(e, relax)
        slow = D._interval(e, relax, None)
        slow = (e, e) if slow is D._FIXED else slow
        assert (fast is None) == (slow is None)
        if fast is not None:
            assert [repr(x) for x in fast] == [repr(x) for x in slow]
            assert [x.dtype for x in fast] == [x.dtype for x in slow]


# ----------------------------------------------------------------------------------------------------------
# caches, sampler, replay
# ----------------------------------------------------------------------------------------------------------
def test_node_cache_is_bounded_and_keeps_what_is_used():
    cache = NodeCache("test", max_entries=4)
    keys = [object() for _ in range(20)]
    cache.put(keys[0], "kept")
    for k in keys[1:]:
        cache.put(k, "x")
        assert cache.get(keys[0]) == "kept"  # a hit moves the entry to the young generation
        assert len(cache) <= 8
    assert cache.get(keys[1]) is None  # old entries that nobody asked for are gone


def test_lazily_seeded_sampler_draws_what_an_eagerly_seeded_one_would():
    func = P.matmul(64, 64, 64)
    a = TT.multi_level_tiling(Schedule(func, seed=11), "C")
    b = TT.multi_level_tiling(Schedule(func, seed=11), "C")
    assert a.trace.as_json() == b.trace.as_json()
    sch = Schedule(func, seed=5)
    i = sch.get_loops(sch.get_block("C"))[0]
    got = sch.sample_perfect_tile(i, n=3, max_innermost_factor=16)
    assert [sch.get(v) for v in got] == sampling.sample_perfect_tile(random.Random(5), 64, 3, 16)
    parent = Schedule(func, seed=7)
    child = parent.copy()
    twin = Schedule(func, seed=7)
    seed = twin.fork_seed()
    c_loop = child.get_loops(child.get_block("C"))[1]
    got = child.sample_perfect_tile(c_loop, n=2, max_innermost_factor=8)
    assert [child.get(v) for v in got] == sampling.sample_perfect_tile(random.Random(seed), 64, 2, 8)
    parent.seed(3)
    p_loop = parent.get_loops(parent.get_block("C"))[0]
    got = parent.sample_perfect_tile(p_loop, n=2, max_innermost_factor=8)
    assert [parent.get(v) for v in got] == sampling.sample_perfect_tile(random.Random(3), 64, 2, 8)


@pytest.mark.parametrize("seed", range(6))
def test_multi_level_tiling_schedules_compute_the_right_numbers_and_replay(seed):
    for name, func, block, kwargs in [
        ("dense_bias_relu", P.dense_bias_relu(4, 6, 8), "dense", {"inline": ["bias"], "epilogues": ["relu"]}),
        ("conv2d", P.conv2d(1, 2, 5, 3, 3, 1), "conv", {"inline": ["pad"]}),
        ("matmul", P.matmul(8, 12, 16), "C", {}),
    ]:
        sch = TT.multi_level_tiling(Schedule(func, seed=seed), block, **kwargs)
        P.check_numerics(sch.mod, name, seed=seed)
        again = Schedule.from_trace(Trace.from_json(json.dumps(sch.trace.as_json())), func)
        assert again.mod.script() == sch.mod.script()


def test_benchmark_traces_replay_to_the_programs_they_were_recorded_on():
    for build, make in [(TT.dense_bias_relu, TT.dense_trace_schedule), (TT.conv2d, TT.conv2d_trace_schedule)]:
        sch = make(seed=2)
        replayed = Schedule.from_trace(Trace.from_json(json.dumps(sch.trace.as_json())), build())
        assert replayed.mod.script() == sch.mod.script()
    func = P.matmul(128, 128, 128)
    course = course_trace(Schedule(func))
    for _ in range(3):  # the workload's cached index is shared by every replay and stays right
        assert Schedule.from_trace(course.trace, func).mod.script() == course.mod.script()


def test_rfactor_refuses_a_loop_the_block_predicate_depends_on():
    func = P.conv2d(1, 2, 5, 3, 3, 1)
    sch = Schedule(func)
    loops = sch.get_loops(sch.get_block("conv"))
    rc_0, rc_1 = sch.split(loops[4], [3, None])  # 3 * 1 > 2 channels: predicated
    with pytest.raises(ScheduleError, match="predicate of block 'conv' depends on loop"):
        sch.rfactor(rc_0, 1)
    ok = Schedule(func)
    loops = ok.get_loops(ok.get_block("conv"))
    rc_0, rc_1 = ok.split(loops[4], [2, None])  # divides: no predicate
    ok.rfactor(rc_0, 1)
    P.check_numerics(ok.mod, "conv2d", seed=1)
