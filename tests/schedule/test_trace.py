"""Traces: Python printing, JSON round trip and validation, replay with recorded and edited decisions."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import programs as P
from tunefarm.schedule import INSTRUCTION_KINDS, Schedule, ScheduleError, Trace


def tiled_matmul(sch: Schedule, tile=None) -> Schedule:
    """A loop-only schedule with both kinds of sampling (tile sizes and a categorical choice)."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    ti = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8, decision=tile)
    i0, i1, i2 = sch.split(i, ti)
    tj = sch.sample_perfect_tile(j, n=2, max_innermost_factor=8)
    j0, j1 = sch.split(j, tj)
    sch.reorder(i0, j0, i1, k, i2, j1)
    fused = sch.fuse(i0, j0)
    sch.parallel(fused)
    sch.vectorize(j1)
    v = sch.sample_categorical([0, 16, 64], [0.3, 0.3, 0.4])
    sch.annotate(fused, "pragma_auto_unroll_max_step", v)
    sch.unroll(i2)
    return sch


def test_trace_prints_like_tvm_apply_trace():
    sch = tiled_matmul(Schedule(P.matmul(16, 16, 16), seed=0), tile=[2, 4, 2])
    lines = sch.trace.as_python()
    d = sch.trace.decisions
    assert lines[:4] == [
        'b0 = sch.get_block(name="C", func_name="main")',
        "l1, l2, l3 = sch.get_loops(block=b0)",
        "v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=8, decision=[2, 4, 2])",
        "l7, l8, l9 = sch.split(loop=l1, factors=[v4, v5, v6], preserve_unit_iters=True, disable_predication=False)",
    ]
    assert lines[5] == f"l12, l13 = sch.split(loop=l2, factors=[v10, v11], preserve_unit_iters=True, " \
                       "disable_predication=False)"
    assert lines[4] == f"v10, v11 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=8, decision={d[4]})"
    assert lines[6:] == [
        "sch.reorder(l7, l12, l8, l3, l9, l13)",
        "l14 = sch.fuse(l7, l12, preserve_unit_iters=True)",
        "sch.parallel(loop=l14)",
        "sch.vectorize(loop=l13)",
        f"v15 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.3, 0.3, 0.4], decision={d[10]})",
        'sch.annotate(block_or_loop=l14, ann_key="pragma_auto_unroll_max_step", ann_val=v15)',
        "sch.unroll(loop=l9)",
    ]
    assert len(sch.trace) == 13 and sorted(d) == [2, 4, 10]
    assert [inst.kind for inst in sch.trace.insts][:3] == ["GetBlock", "GetLoops", "SamplePerfectTile"]


def test_show_and_print_wrap_the_trace_in_a_function_that_runs_when_pasted(capsys):
    sch = Schedule(P.matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=[None, 4])
    sch.trace.show()
    out = capsys.readouterr().out
    assert out == str(sch.trace) + "\n"
    assert out.splitlines()[:2] == ["def apply_trace(sch):", '    b0 = sch.get_block(name="C", func_name="main")']
    namespace: dict = {}
    exec(compile(out, "<printed trace>", "exec"), namespace)  # the printed text, as a reader would paste it
    again = Schedule(P.matmul())
    namespace["apply_trace"](again)
    assert again.mod.script() == sch.mod.script()
    assert str(Schedule(P.matmul()).trace) == "def apply_trace(sch):\n    pass"


def test_json_round_trip_and_replay_reproduce_the_program():
    func = P.matmul(16, 16, 16)
    sch = tiled_matmul(Schedule(func, seed=4))
    data = sch.trace.as_json()
    assert data["insts"][0] == ["GetBlock", [], ["C", "main"], ["b0"]]
    assert data["insts"][3] == ["Split", ["l1", "v4", "v5", "v6"], [True, False], ["l7", "l8", "l9"]]
    text = json.dumps(data)
    loaded = Trace.from_json(json.loads(text))
    assert loaded.as_json() == data
    assert str(loaded) == str(sch.trace)
    replayed = Schedule.from_trace(loaded, func)
    assert replayed.mod.script() == sch.mod.script()
    assert replayed.trace.as_json() == data
    P.check_numerics(replayed.mod, "matmul")
    assert Trace.from_json(text).as_json() == data  # JSON text is accepted too
    assert sch.trace.to_json() == data


def test_replay_with_edited_decisions_and_with_decision():
    func = P.matmul(16, 16, 16)
    trace = tiled_matmul(Schedule(func, seed=1), tile=[2, 4, 2]).trace
    edited = Schedule.from_trace(trace, func, decisions={2: [1, 2, 8], 10: 0})
    assert edited.trace.decisions[2] == [1, 2, 8] and edited.trace.decisions[10] == 0
    assert "decision=[1, 2, 8]" in str(edited.trace)
    i_loops = [lp for lp in edited.get_loops(edited.get_block("C"))]
    assert edited.get(i_loops[0]).const_extent() == trace.decisions[4][0]  # fused i0*j0: 1 * j0
    P.check_numerics(edited.mod, "matmul")
    t2 = trace.with_decision(2, [4, 4, 1])
    assert t2.decisions[2] == [4, 4, 1] and trace.decisions[2] == [2, 4, 2]  # traces are immutable
    assert Schedule.from_trace(t2, func).trace.decisions[2] == [4, 4, 1]
    with pytest.raises(ValueError, match="not a sampling instruction"):
        trace.with_decision(3, [1, 2])
    with pytest.raises(ValueError, match="list of 3 integers"):
        trace.with_decision(2, [4, 4])
    resampled = trace.with_decision(2, None)
    assert 2 not in resampled.decisions
    sch = Schedule.from_trace(resampled, func, seed=0)
    assert 2 in sch.trace.decisions  # re-sampled and recorded again


def test_decisions_that_no_longer_fit_are_rejected_naming_the_instruction():
    func = P.matmul(16, 16, 16)
    trace = tiled_matmul(Schedule(func, seed=2)).trace
    with pytest.raises(ScheduleError, match=r"trace instruction 2 \(SamplePerfectTile\).*multiplies to 12") as info:
        Schedule.from_trace(trace, func, decisions={2: [2, 3, 2]})
    assert info.value.inst_index == 2 and info.value.primitive == "sample_perfect_tile"
    with pytest.raises(ScheduleError, match=r"trace instruction 10 \(SampleCategorical\)"):
        Schedule.from_trace(trace, func, decisions={10: 5})
    # the same trace on a different program: a tile that fit 16 does not fit 24
    with pytest.raises(ScheduleError, match="trace instruction 2"):
        Schedule.from_trace(trace, P.matmul(24, 16, 16))


def test_replay_on_a_program_without_the_block_fails_cleanly():
    trace = tiled_matmul(Schedule(P.matmul(), seed=2)).trace
    with pytest.raises(ScheduleError, match=r"trace instruction 0 \(GetBlock\): no block named 'C'"):
        Schedule.from_trace(trace, P.row_sum(16, 16))


def test_apply_to_schedule_appends_to_an_existing_schedule():
    func = P.matmul(16, 16, 16)
    trace = tiled_matmul(Schedule(func, seed=6)).trace
    sch = Schedule(func)
    sch.get_block("C")
    trace.apply_to_schedule(sch)
    assert len(sch.trace) == len(trace) + 1
    assert sch.trace.as_python()[1] == 'b1 = sch.get_block(name="C", func_name="main")'
    assert sch.mod.script() == Schedule.from_trace(trace, func).mod.script()


@pytest.mark.parametrize("bad,match", [
    ({"insts": [["Frobnicate", [], [], []]]}, "instruction 0: unknown instruction kind 'Frobnicate'"),
    ({"insts": [["GetBlock", [], ["C"], ["b0"]]]}, r"instruction 0 \(GetBlock\): expects 2 attributes"),
    ({"insts": [["GetBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0", "b0"], [], ["l1"]]]},
     r"instruction 1 \(GetLoops\): expects 1 inputs"),
    ({"insts": [["GetLoops", ["b7"], [], ["l1"]]]}, "instruction 0 .*'b7', which no earlier instruction defines"),
    ({"insts": [["GetBlock", [], ["C", "main"], ["b0"]], ["Parallel", ["b0"], [], []]]},
     r"instruction 1 \(Parallel\): input 0 must be a loop random variable, but 'b0' is a block"),
    ({"insts": [["GetBlock", [], ["C", "main"], ["b0"]], ["GetBlock", [], ["C", "main"], ["b0"]]]},
     "instruction 1 .*'b0' is defined twice"),
    ({"insts": [["GetBlock", [], [3, "main"], ["b0"]]]}, "attribute name must be a string"),
    ({"insts": [["GetBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1"]],
                ["SamplePerfectTile", ["l1"], [2, 16], ["v2"]]]}, r"instruction 2 .*expects 2 outputs"),
    ({"insts": [["GetBlock", [], ["C", "main"], ["b0"]]], "decisions": [[0, 3]]}, "instruction 0 .*takes no decision"),
    ({"insts": [["SampleCategorical", [], [[1, 2], [0.5, 0.5]], ["v0"]]], "decisions": [[0, [1]]]},
     "must be an integer"),
    ({"insts": [["SampleCategorical", [], [[1, 2], [0.5, 0.5]], ["v0"]]], "decisions": [[4, 0]]},
     "names instruction 4"),
    ({"insts": [], "extra": 1}, "got keys"),
    ({"insts": [["GetBlock", [], ["C", "main"]]]}, r"instruction 0 must be \[kind, inputs, attrs, outputs\]"),
    ("{not json", "not valid JSON"),
    (42, "must be a dict or a list"),
])
def test_from_json_validation(bad, match):
    with pytest.raises(ValueError, match=match):
        Trace.from_json(bad)


def test_every_instruction_kind_has_a_schedule_method():
    for kind in INSTRUCTION_KINDS.values():
        assert callable(getattr(Schedule, kind.method)), kind.name


def test_fresh_process_replay_gives_a_structurally_equal_program(tmp_path: Path):
    """What a farm worker does: get (workload JSON, trace JSON), replay, send the program back."""
    from tunefarm.ir import serialize
    from tunefarm.ir.structural import assert_structural_equal, structural_equal

    from course_trace import course_trace

    func = P.matmul(64, 64, 64)
    sch = course_trace(Schedule(func), tiles=((2, 1, 32, 1), (2, 1, 8, 4), (32, 2)))
    (tmp_path / "workload.json").write_text(serialize.dumps(func))
    (tmp_path / "trace.json").write_text(json.dumps(sch.trace.as_json()))
    script = (
        "import json, sys\n"
        "from tunefarm.ir import serialize\n"
        "from tunefarm.schedule import Schedule, Trace\n"
        f"d = {str(tmp_path)!r}\n"
        "func = serialize.loads(open(d + '/workload.json').read())\n"
        "trace = Trace.from_json(json.load(open(d + '/trace.json')))\n"
        "sys.stdout.write(serialize.dumps(Schedule.from_trace(trace, func).mod))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    remote = serialize.loads(out.stdout)
    assert_structural_equal(remote, sch.mod)
    assert structural_equal(remote["main"], sch.mod["main"])
    assert not structural_equal(remote["main"], func)  # the schedule did change the program
    assert remote.script() == sch.mod.script()


def test_course_metaschedule_trace_prints_as_in_the_notes_and_computes_correctly():
    from course_trace import COURSE_TEXT, course_trace

    sch = course_trace(Schedule(P.matmul(128, 128, 128)))
    printed = "\n".join(sch.trace.as_python()).replace(", disable_predication=False", "")  # older TVM did not print it
    assert printed == COURSE_TEXT
    assert len(sch.trace) == 38
    loops = [sch.get(lp) for lp in sch.get_loops(sch.get_block("C"))]
    assert [lp.kind for lp in loops] == ["parallel"] + ["serial"] * 5 + ["vectorized"]
    assert loops[0].annotations == {"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}
    # the same schedule with tiles for 64^3 (the interpreter is too slow for 128^3 in a unit test)
    small = course_trace(Schedule(P.matmul(64, 64, 64)), tiles=((2, 1, 32, 1), (2, 1, 8, 4), (32, 2)))
    P.check_numerics(small.mod, "matmul")
    again = Schedule.from_trace(Trace.from_json(json.dumps(small.trace.as_json())), P.matmul(64, 64, 64))
    assert again.mod.script() == small.mod.script()


def test_without_postproc_keeps_what_precedes_enter_postproc():
    from course_trace import course_trace

    func = P.matmul(64, 64, 64)
    trace = course_trace(Schedule(func), tiles=((2, 1, 32, 1), (2, 1, 8, 4), (32, 2))).trace
    head = trace.without_postproc()
    assert len(head) == 17 and [i.kind for i in head.insts] == [i.kind for i in trace.insts[:17]]
    assert head.decisions == {k: v for k, v in trace.decisions.items() if k < 17} and len(head.decisions) == 4
    sch = Schedule.from_trace(head, func)
    assert sch.get(sch.get_block("root")).annotations["meta_schedule.unroll_explicit"] == 16
    plain = Trace(trace.insts[:3], {})
    assert plain.without_postproc() is plain


def test_apply_to_schedule_with_remove_postproc_stops_at_enter_postproc():
    """TVM's spelling: ``trace.apply_to_schedule(sch, remove_postproc=...)`` on a schedule the caller made."""
    from course_trace import course_trace

    func = P.matmul(64, 64, 64)
    full = course_trace(Schedule(func), tiles=((2, 1, 32, 1), (2, 1, 8, 4), (32, 2)))
    trace = full.trace
    whole, head = Schedule(func), Schedule(func)
    trace.apply_to_schedule(whole, remove_postproc=False)
    trace.apply_to_schedule(head, remove_postproc=True)
    assert whole.mod.script() == full.mod.script() and len(whole.trace) == len(trace)
    assert len(head.trace) == 17
    assert head.mod.script() == Schedule.from_trace(trace.without_postproc(), func).mod.script()
    assert head.mod.script() != whole.mod.script()  # the postprocessors' parallel and vector loops are not there
    with pytest.raises(ValueError, match="out of range for a trace of 17"):
        trace.apply_to_schedule(Schedule(func), remove_postproc=True, decisions={len(trace) - 1: 0})


def test_from_trace_builds_the_callers_schedule_class():
    class Traced(Schedule):
        pass

    func = P.matmul(16, 16, 16)
    trace = tiled_matmul(Schedule(func, seed=3)).trace
    sch = Traced.from_trace(trace, func, seed=5)
    assert type(sch) is Traced and sch.trace.as_json() == trace.as_json()
    open_tile = trace.with_decision(2, None)
    drawn = [Traced.from_trace(open_tile, func, seed=seed).trace.decisions[2] for seed in range(8)]
    assert drawn == [Traced.from_trace(open_tile, func, seed=seed).trace.decisions[2] for seed in range(8)]
    assert len({tuple(d) for d in drawn}) > 1  # the seed reaches the sampler: same seed, same tiles
