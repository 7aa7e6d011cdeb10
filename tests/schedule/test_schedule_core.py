"""Schedule state: modules, random variables, get, copy, seeds, error typing."""
from __future__ import annotations

import pytest

import programs as P
import tunefarm
from tunefarm.ir import IRModule
from tunefarm.ir import stmt as S
from tunefarm.schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, Trace


def test_exports():
    assert tunefarm.Schedule is Schedule
    assert tunefarm.ScheduleError is ScheduleError
    assert tunefarm.Trace is Trace


def test_prim_func_is_wrapped_as_main_and_module_functions_are_addressable():
    f = P.matmul()
    sch = Schedule(f)
    assert list(sch.mod) == ["main"] and sch.mod["main"] is f
    mod = IRModule({"mm_relu": P.mm_relu(8), "add": P.add4x4()})
    sch = Schedule(mod)
    with pytest.raises(ScheduleError, match="several functions"):
        sch.get_block("C")
    b = sch.get_block("C", func_name="add")
    assert isinstance(sch.get(b), S.Block) and sch.get(b).iter_vars[0].var.dtype == "int32"
    i, j = sch.get_loops(b)
    sch.parallel(i)
    assert sch.mod["mm_relu"] is mod["mm_relu"]  # untouched functions are shared
    assert sch.get(i).kind == "parallel"
    with pytest.raises(ScheduleError, match="no PrimFunc 'nope'"):
        sch.get_block("C", func_name="nope")
    with pytest.raises(TypeError, match="PrimFunc or an IRModule"):
        Schedule("not a function")


def test_get_block_errors_name_the_block():
    sch = Schedule(P.mm_relu(8))
    with pytest.raises(ScheduleError, match="no block named 'Z'") as info:
        sch.get_block("Z")
    assert info.value.primitive == "get_block"


def test_get_returns_ir_nodes_and_ints():
    sch = Schedule(P.matmul(16, 16, 16))
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    assert isinstance(b, BlockRV) and all(isinstance(x, LoopRV) for x in (i, j, k))
    assert sch.get(b).name == "C"
    assert isinstance(sch.get(k), S.For) and sch.get(k).loop_var.name == "k"
    t = sch.sample_perfect_tile(j, n=2, decision=[2, 8])
    assert all(isinstance(x, ExprRV) for x in t)
    assert [sch.get(x) for x in t] == [2, 8]


def test_rv_from_another_schedule_is_rejected():
    a = Schedule(P.matmul())
    b = Schedule(P.matmul())
    loop = a.get_loops(a.get_block("C"))[0]
    with pytest.raises(ScheduleError, match="does not belong to this schedule"):
        b.split(loop, [4, 4])
    with pytest.raises(ScheduleError, match="does not belong"):
        b.get(loop)
    with pytest.raises(ScheduleError, match="expected a LoopRV"):
        a.split(a.get_block("C"), [4, 4])


def test_block_given_by_name_is_recorded_as_get_block():
    sch = Schedule(P.before_inline(8))
    sch.get_loops("C")
    assert sch.trace.as_python() == ['b0 = sch.get_block(name="C", func_name="main")',
                                           "l1, l2 = sch.get_loops(block=b0)"]


def test_copy_is_independent_and_shares_ir():
    sch = Schedule(P.matmul(), seed=5)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    fork = sch.copy()
    assert fork.mod["main"] is sch.mod["main"]
    fork.split(i, [4, 4])
    assert len(fork.trace) == 3 and len(sch.trace) == 2
    assert sch.get(i).const_extent() == 16  # the original is unchanged
    with pytest.raises(ScheduleError, match="no longer exists"):
        fork.get(i)
    sch.parallel(i)  # RVs of the original stay valid in both
    fork.parallel(j)


def test_seed_makes_sampling_reproducible_and_fork_seed_differs():
    def run(seed):
        sch = Schedule(P.matmul(64, 64, 64), seed=seed)
        loops = sch.get_loops(sch.get_block("C"))
        return [sch.get(v) for lp in loops for v in sch.sample_perfect_tile(lp, n=3, max_innermost_factor=64)]

    assert run(7) == run(7)
    assert len({tuple(run(s)) for s in range(8)}) > 1
    sch = Schedule(P.matmul(), seed=1)
    a = sch.fork_seed()
    sch.seed(1)
    assert sch.fork_seed() == a
    assert sch.fork_seed() != a


def test_show_prints_the_module(capsys):
    sch = Schedule(P.add4x4())
    sch.show()
    out = capsys.readouterr().out
    assert 'with T.block("C"):' in out and out.strip() == sch.mod.script().strip()


def test_get_child_blocks_producers_consumers():
    sch = Schedule(P.dense_bias_relu())
    root = sch.get_block("root")
    dense, bias, relu = sch.get_child_blocks(root)
    assert [sch.get(b).name for b in (dense, bias, relu)] == ["dense", "bias", "relu"]
    assert [sch.get(b).name for b in sch.get_producers(bias)] == ["dense"]
    assert [sch.get(b).name for b in sch.get_consumers(bias)] == ["relu"]
    assert sch.get_producers(dense) == [] and sch.get_consumers(relu) == []
    i = sch.get_loops(relu)[0]
    assert [sch.get(b).name for b in sch.get_child_blocks(i)] == ["relu"]
    assert "b1, b2, b3 = sch.get_child_blocks(b0)" in str(sch.trace)
    assert "b4, = sch.get_producers(block=b2)" in str(sch.trace)
