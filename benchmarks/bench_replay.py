"""Benchmark: replaying schedule traces (what the search does for every candidate), copying and loading them.

Rows (each printed as the median wall time and the median process CPU time per call):

* the trace MetaSchedule found for the 128x128x128 matmul in the MLC course notes (tiling, cache_write,
  reverse_compute_at, parallel/vectorize/unroll annotations, decompose_reduction: 38 instructions), and its
  first 30 instructions (the issue's target: at most 5 ms, median);
* multi-level tiling traces (``SSRSRS`` + local write cache + CPU postprocessing, see
  ``tests/schedule/tiling_traces.py``) on dense + bias + ReLU 1x784x128 and on a 1x64x56x56 3x3 conv2d;
* ``Schedule.copy`` after the course trace, ``Trace.from_json`` of the course trace, and sampling a fresh
  dense schedule (the space function with new random decisions).

CPU time is measured over batches of calls with ``time.process_time`` (insensitive to other load on the
machine); wall time is what a caller waits. Replays start from the same workload function object each
time, as the search and the farm do.

Run: ``python benchmarks/bench_replay.py`` (``--repeat N`` for more samples, ``--only SUBSTRING`` to pick
rows, ``--profile SUBSTRING`` to print a cProfile of one row instead).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "schedule"))

import programs  # noqa: E402  (test program builders: the IR constructors only)
import tiling_traces  # noqa: E402
from course_trace import course_trace  # noqa: E402

from tunefarm.schedule import Schedule, Trace  # noqa: E402

TARGET_30_MS = 5.0


def median_ms(fn, repeat: int, clock=time.perf_counter) -> float:
    fn()  # warm up (imports, caches of the workload function)
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) * 1e3


def cpu_ms(fn, repeat: int, batch: int = 20) -> float:
    """Median process CPU time per call, over batches of ``batch`` calls."""
    def run():
        for _ in range(batch):
            fn()
    return median_ms(run, max(3, repeat // batch), time.process_time) / batch


def _roundtrip(trace: Trace) -> Trace:
    return Trace.from_json(json.dumps(trace.as_json()))


def rows():
    """``(label, fn, calls per repeat scale)``: what the benchmark times."""
    mm = programs.matmul(128, 128, 128)
    course = _roundtrip(course_trace(Schedule(mm)).trace)
    assert Schedule.from_trace(course, mm).mod.script() == course_trace(Schedule(mm)).mod.script()
    prefix30 = Trace(course.insts[:30], {i: d for i, d in course.decisions.items() if i < 30})

    dense_sch = tiling_traces.dense_trace_schedule(seed=1)
    dense_func = tiling_traces.dense_bias_relu()
    dense = _roundtrip(dense_sch.trace)
    conv_func = tiling_traces.conv2d()
    conv = _roundtrip(tiling_traces.conv2d_trace_schedule(seed=1).trace)
    for trace, func in ((dense, dense_func), (conv, conv_func)):
        Schedule.from_trace(trace, func)  # must replay cleanly on a fresh copy of its workload

    replayed = Schedule.from_trace(course, mm)
    text = json.dumps(course.as_json())
    seeds = iter(range(10 ** 9))
    return [
        (f"replay: course matmul trace ({len(course)} inst)", lambda: Schedule.from_trace(course, mm), 1),
        ("replay: its first 30 instructions", lambda: Schedule.from_trace(prefix30, mm), 1),
        (f"replay: dense+bias+relu 1x784x128 MLT ({len(dense)} inst)",
         lambda: Schedule.from_trace(dense, dense_func), 1),
        (f"replay: conv2d 1x64x56x56 k3 MLT ({len(conv)} inst)", lambda: Schedule.from_trace(conv, conv_func), 1),
        ("Schedule.copy after the course trace", replayed.copy, 10),
        ("Trace.from_json (course trace, JSON text)", lambda: Trace.from_json(text), 3),
        ("sample: dense MLT space, fresh decisions", lambda: tiling_traces.multi_level_tiling(
            Schedule(dense_func, seed=next(seeds)), "T_matmul_NT", inline=["T_add"], epilogues=["relu"]), 1),
    ]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=200, help="samples per row (default 200)")
    ap.add_argument("--only", default="", help="time only rows whose label contains this text")
    ap.add_argument("--profile", default=None, help="cProfile the first row whose label contains this text")
    args = ap.parse_args(argv)
    table = rows()
    if args.profile is not None:
        import cProfile
        import pstats

        label, fn, _ = next(r for r in table if args.profile in r[0])
        fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.repeat):
            fn()
        prof.disable()
        print(f"profile of {label!r} x {args.repeat}")
        pstats.Stats(prof).sort_stats("cumtime").print_stats(40)
        return
    print(f"{'':52s} {'wall ms':>9s} {'cpu ms':>9s}")
    results = {}
    for label, fn, scale in table:
        if args.only not in label:
            continue
        wall = median_ms(fn, args.repeat * scale)
        cpu = cpu_ms(fn, args.repeat * scale)
        results[label] = (wall, cpu)
        print(f"{label:52s} {wall:9.3f} {cpu:9.3f}", flush=True)
    part = next((v for k, v in results.items() if "first 30" in k), None)
    if part is not None:
        print(f"30-instruction replay vs the {TARGET_30_MS:g} ms target: ratio {part[1] / TARGET_30_MS:.2f} (cpu), "
              f"{part[0] / TARGET_30_MS:.2f} (wall)")


if __name__ == "__main__":
    main()
