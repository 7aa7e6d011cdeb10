"""The facade's schedule pieces TVM's own tests lean on: structural equality blind to block names (as TVM's),
``tir.Schedule(debug_mask=...)``, TVM-shaped traces, and ``verify_trace_roundtrip``."""
from __future__ import annotations

import pytest

from tunefarm import tvm
from tunefarm.tvm import tir
from tunefarm.tvm.script import tir as T
from tunefarm.tvm.tir.schedule import BlockRV, Instruction, InstructionKind, Trace
from tunefarm.tvm.tir.schedule.testing import verify_trace_roundtrip


def _scale(name: str, factor: float):
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block(name):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] * factor

    return f


def test_structural_equality_ignores_block_names_but_nothing_else():
    tvm.ir.assert_structural_equal(_scale("B", 2.0), _scale("renamed", 2.0))
    assert tvm.ir.structural_equal(_scale("B", 2.0), _scale("renamed", 2.0))
    assert not tvm.ir.structural_equal(_scale("B", 2.0), _scale("renamed", 3.0))
    with pytest.raises(AssertionError, match="structurally different"):
        tvm.ir.assert_structural_equal(_scale("B", 2.0), _scale("renamed", 3.0))


@pytest.mark.parametrize("mask", ["all", "none", 1, 3])
def test_debug_mask_values_are_accepted(mask):
    sch = tir.Schedule(_scale("B", 2.0), debug_mask=mask)
    assert sch.copy().debug_mask == sch.debug_mask


@pytest.mark.parametrize("mask", ["some", -1, 8, True])
def test_a_bad_debug_mask_is_refused(mask):
    with pytest.raises(ValueError, match="debug_mask"):
        tir.Schedule(_scale("B", 2.0), debug_mask=mask)


def test_tvm_shaped_trace_prints_simplifies_and_replays():
    b0, b1 = BlockRV(), BlockRV()
    get = InstructionKind.get("GetBlock")
    trace = Trace([Instruction(get, [], ["B", "main"], [b0]), Instruction(get, [], ["B", "main"], [b1]),
                   Instruction(InstructionKind.get("Annotate"), [b0, "x"], ["key"], [])], {})
    assert str(trace).splitlines()[:2] == ["# from tvm import tir", "def apply_trace(sch: tir.Schedule) -> None:"]
    assert len(trace.simplified(remove_postproc=True).insts) == 2  # the unused get_block is dropped
    sch = tir.Schedule(_scale("B", 2.0))
    Trace.apply_json_to_schedule(trace.as_json(), sch)
    assert sch.get(sch.get_block("B")).annotations == {"key": "x"}
    assert trace.pop().kind == "Annotate" and len(trace.insts) == 2
    with pytest.raises(ValueError, match="unknown instruction kind"):
        InstructionKind.get("Bind")


def test_verify_trace_roundtrip_replays_json_and_python():
    func = _scale("B", 2.0)
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4])
    again = verify_trace_roundtrip(sch, func)
    tvm.ir.assert_structural_equal(again.mod, sch.mod)


def test_split_takes_intimm_factors_and_cache_read_takes_a_buffer_name():
    func = _scale("B", 2.0)
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    outer, inner = sch.split(i, factors=[tir.IntImm("int32", 4), None])
    assert [sch.get(lp).extent.value for lp in (outer, inner)] == [4, 4]
    cached = sch.cache_read(sch.get_block("B"), "A", "local")
    assert sch.get(cached).writes[0].buffer.scope == "local"
    with pytest.raises(tir.ScheduleError, match="no buffer named 'Z'"):
        sch.cache_read(sch.get_block("B"), "Z", "local")
