"""Measuring one candidate in-process: statuses, the reference check, deterministic inputs, tolerances."""
from __future__ import annotations

import json

import numpy as np
import pytest

from farm_programs import (EMPTY_TRACE, HOST, add_func, candidate, matmul_func, tiled_trace,
                           wrong_matmul_func)
from tunefarm.farm import MeasureInput, MeasureStatus
from tunefarm.farm.check import compare_output, make_arrays, output_params, tolerance, workload_seed
from tunefarm.farm.measure import Measurer
from tunefarm.farm.trial_clock import TrialClock
from tunefarm.ir.serialize import to_json
from tunefarm.ir.structural import workload_key


@pytest.fixture(scope="module")
def measurer(tmp_path_factory):
    return Measurer(str(tmp_path_factory.mktemp("lock") / "lock"))


def test_a_tiled_matmul_measures_ok_and_the_reference_is_built_once(measurer):
    f = matmul_func(32)
    before = measurer.compiles
    clock = TrialClock()
    clock.start(1)
    r1 = measurer.measure(candidate(f, tiled_trace(f), repeat=4), clock)
    assert r1.status is MeasureStatus.OK, r1.error
    assert len(r1.run_secs) == 4 and all(0 < s < 0.1 for s in r1.run_secs)
    assert r1.build_secs > 0 and r1.host
    assert measurer.compiles == before + 2  # the candidate and the unscheduled reference
    r2 = measurer.measure(candidate(f, tiled_trace(f, (None, 4))))
    assert r2.ok
    assert measurer.compiles == before + 3  # reference cached for this workload
    snap = clock.snapshot()
    assert snap["token"] == 1 and snap["paused"] is None and snap["active_secs"] >= 0


def test_a_trace_that_does_not_apply_is_a_build_error_with_the_schedule_message(measurer):
    r = measurer.measure(candidate(add_func(), tiled_trace(matmul_func())))
    assert r.status is MeasureStatus.BUILD_ERROR
    assert r.error.startswith("schedule:") and "no block named 'C'" in r.error


def test_malformed_inputs_are_build_errors(measurer):
    f = matmul_func(8)
    bad_trace = candidate(f, {"insts": [["NoSuchInstruction", [], [], []]], "decisions": []})
    r = measurer.measure(bad_trace)
    assert r.status is MeasureStatus.BUILD_ERROR and "trace replay" in r.error
    bad_workload = MeasureInput("k-bad", {"format": "nope"}, EMPTY_TRACE, HOST)
    r = measurer.measure(bad_workload)
    assert r.status is MeasureStatus.BUILD_ERROR and r.error.startswith("workload:")


def test_a_wrong_store_is_a_wrong_result_against_the_reference_program(measurer):
    right = matmul_func(16)
    wrong = wrong_matmul_func(16)
    r = measurer.measure(candidate(wrong, reference_json=to_json(right)))
    assert r.status is MeasureStatus.WRONG_RESULT
    assert "output C" in r.error and "256 of 256" in r.error and "reference program" in r.error
    assert r.run_secs == []
    # the same program checked against itself is fine, and check=False skips the comparison
    assert measurer.measure(candidate(wrong)).ok
    assert measurer.measure(candidate(wrong, reference_json=to_json(right), check=False)).ok


def test_a_reference_with_another_signature_is_refused(measurer):
    r = measurer.measure(candidate(matmul_func(16), reference_json=to_json(matmul_func(8))))
    assert r.status is MeasureStatus.BUILD_ERROR and "parameters differ" in r.error


def test_inputs_are_deterministic_in_the_workload_key():
    f = matmul_func(8)
    a, b = make_arrays(f, "key-1"), make_arrays(f, "key-1")
    c = make_arrays(f, "key-2")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    assert [x.dtype for x in a] == [np.float32] * 3 and a[0].min() >= -1 and a[0].max() < 1
    assert workload_seed("key-1") == workload_seed("key-1") != workload_seed("key-2")
    assert output_params(f) == [2]


def test_comparison_tolerance_depends_on_dtype():
    ref = np.linspace(-10, 10, 101).astype(np.float32)
    assert compare_output("C", ref * (1 + 1e-5), ref) is None  # reassociated float32 sums
    msg = compare_output("C", ref + np.where(np.arange(101) == 7, 0.5, 0).astype(np.float32), ref)
    assert msg is not None and "1 of 101" in msg and "(7,)" in msg
    ints = np.arange(10, dtype=np.int32)
    assert compare_output("I", ints.copy(), ints) is None
    off = ints.copy()
    off[3] += 1
    assert "1 of 10" in compare_output("I", off, ints)
    nan = np.array([np.nan, 1.0], np.float32)
    assert compare_output("N", nan.copy(), nan) is None
    assert compare_output("S", ints[:5], ints) .startswith("output S: shape")
    assert tolerance("int32", ints) is None
    rtol16, _ = tolerance("float16", ref.astype(np.float16))
    rtol32, atol32 = tolerance("float32", ref)
    assert rtol16 > rtol32 and atol32 == pytest.approx(1e-4 * 10)


def test_a_symbolic_workload_is_refused_with_a_clear_message(measurer):
    from tunefarm import te

    n = te.size_var("n")
    A = te.placeholder((n,), "float32", "A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    r = measurer.measure(candidate(te.create_prim_func([A, B])))
    assert r.status is MeasureStatus.BUILD_ERROR
    assert "symbolic shape" in r.error and "parameter A" in r.error


def test_constant_weights_are_measured_in_the_packed_layout_the_model_uses(measurer):
    """A workload marking B layout-free (a bound weight) is timed with B stored as its kernel reads it."""
    from tunefarm.farm.measure import rewrite_layout_free
    from tunefarm.ir.function import PrimFunc
    from tunefarm.schedule import Schedule, Trace

    plain = matmul_func(32)
    f = PrimFunc(plain.params, plain.body, {**plain.attrs, "layout_free_buffers": [1]}, plain.name)
    trace = tiled_trace(f)
    scheduled = Schedule.from_trace(Trace.from_json(trace), f).mod["main"]
    rewritten, packers = rewrite_layout_free(scheduled)
    assert [i for i, _ in packers] == [1]
    assert rewritten.params[1].const_shape() != plain.params[1].const_shape()  # B is stored tile by tile
    b = np.arange(32 * 32, dtype="float32").reshape(32, 32)
    packed = packers[0][1](b)
    assert packed.size == b.size and not np.array_equal(packed.reshape(32, 32), b)

    r = measurer.measure(candidate(f, trace))  # checked against the unscheduled, plain-layout program
    assert r.status is MeasureStatus.OK, r.error
    # the same schedule without the attribute keeps the plain layout
    assert rewrite_layout_free(Schedule.from_trace(Trace.from_json(tiled_trace(plain)), plain).mod["main"])[1] == []


# --- timing with an early stop ---------------------------------------------------------------------------
def _counting_call():
    """A kernel that adds 1 to ``B[0]`` per call, so ``B[0]`` counts the calls the timing made."""
    from farm_programs import _one_loop_func
    from tunefarm.runtime import build

    mod = build(_one_loop_func("count", 1, lambda A, B, i: B[i % 16] + 1.0), HOST)
    return mod["main"].time_evaluator(number=3, repeat=4), np.zeros(16, "float32"), np.zeros(16, "float32")


def test_timing_counts_its_calls_and_stops_after_slow_repeats():
    timer, a, b = _counting_call()
    r = timer(a, b).results
    assert len(r) == 4 and all(s > 0 for s in r)
    assert b[0] == 1 + 4 * 3  # warm-up + repeats x number
    b[0] = 0
    r = timer(a, b, warm_up=False).results
    assert len(r) == 4 and b[0] == 4 * 3  # the caller's run was the warm-up
    b[0] = 0
    r = timer(a, b, stop_above_s=1e-12).results
    assert len(r) == 2 and min(r) > 0 and b[0] == 1 + 2 * 3  # stopped after two slow repeats
    b[0] = 0
    r = timer(a, b, stop_above_s=10.0).results
    assert len(r) == 4 and b[0] == 1 + 4 * 3  # never slower than 10 s per call: no early stop


def test_an_early_stopped_candidate_is_ok_with_the_repeats_it_got(measurer):
    f = matmul_func(64)
    full = measurer.measure(candidate(f, tiled_trace(f), repeat=5))
    stopped = measurer.measure(candidate(f, tiled_trace(f), repeat=5, stop_above_s=1e-9))
    assert full.ok and stopped.ok, (full.error, stopped.error)
    assert len(full.run_secs) == 5
    assert len(stopped.run_secs) == 2  # slower than the cutoff: two real timings, then stop
    # they are real measurements of the same program: the same order of magnitude as the full timing (the
    # fastest of each: a timing the scheduler preempted is slow, never fast)
    assert 0.2 < min(stopped.run_secs) / min(full.run_secs) < 5.0
    unchecked = measurer.measure(candidate(f, tiled_trace(f), repeat=5, stop_above_s=1e-9, check=False))
    assert unchecked.ok and len(unchecked.run_secs) == 2  # without a check run the repeats alone decide
    relaxed = measurer.measure(candidate(f, tiled_trace(f), repeat=5, stop_above_s=100 * full.median_secs))
    assert relaxed.ok and len(relaxed.run_secs) == 5


def test_measure_func_times_a_function_the_caller_already_scheduled(measurer):
    """The tail of a measurement: the caller replayed the trace itself (as a worker with a program cache does)."""
    from tunefarm.farm.measure import MeasureSettings
    from tunefarm.schedule import Schedule, Trace

    f = matmul_func(32)
    key, text = workload_key(f), json.dumps(to_json(f))
    scheduled = Schedule.from_trace(Trace.from_json(tiled_trace(f)), f).mod["main"]
    before = measurer.compiles
    r = measurer.measure_func(key, text, scheduled, HOST, MeasureSettings(repeat=4))
    assert r.status is MeasureStatus.OK, r.error
    assert len(r.run_secs) == 4 and r.build_secs > 0 and r.host
    assert measurer.compiles in (before + 1, before + 2)  # the program (and the reference, unless cached)
    # checked against the unscheduled program: a different workload's schedule is a wrong result, not a crash
    wrong = Schedule.from_trace(Trace.from_json(EMPTY_TRACE), wrong_matmul_func(32)).mod["main"]
    r = measurer.measure_func(key, text, wrong, HOST, MeasureSettings())
    assert r.status is MeasureStatus.WRONG_RESULT and "unscheduled program" in r.error
    r = measurer.measure_func(key, text, wrong, HOST, MeasureSettings(check=False, repeat=2))
    assert r.ok and len(r.run_secs) == 2
    r = measurer.measure_func(key, text, scheduled, "not a target", MeasureSettings())
    assert r.status is MeasureStatus.BUILD_ERROR and r.error.startswith("target:")
