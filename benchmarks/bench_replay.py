"""Benchmark: replaying a schedule trace on a 128x128x128 matmul.

The trace is the one MetaSchedule found for this matmul in the MLC course notes (tiling, cache_write,
reverse_compute_at, parallel/vectorize/unroll annotations, decompose_reduction: 38 instructions). The
search replays traces like it for every candidate, so replay must stay far below a measurement (target:
a 30-instruction trace in at most 5 ms, median). Also timed: JSON loading and ``Schedule.copy``.

Run: ``python benchmarks/bench_replay.py``
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "schedule"))

import programs  # noqa: E402  (test program builders: the IR constructors only)
from course_trace import course_trace  # noqa: E402

from tunefarm.schedule import Schedule, Trace  # noqa: E402


def median_ms(fn, repeat: int, clock=time.perf_counter) -> float:
    fn()  # warm caches (imports, lru caches)
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) * 1e3


def cpu_ms(fn, repeat: int) -> float:
    """Median process CPU time per call, over batches of 20 calls (insensitive to other load on the machine)."""
    def batch():
        for _ in range(20):
            fn()
    return median_ms(batch, max(3, repeat // 20), time.process_time) / 20


def main() -> None:
    func = programs.matmul(128, 128, 128)
    trace = course_trace(Schedule(func)).trace
    text = json.dumps(trace.as_json())
    loaded = Trace.from_json(text)
    assert loaded.replay(func).mod.script() == course_trace(Schedule(func)).mod.script()
    prefix30 = Trace(trace.insts[:30], {i: d for i, d in trace.decisions.items() if i < 30})

    n = len(trace)
    rows = [
        (f"replay, course matmul trace ({n} instructions)", lambda: loaded.replay(func)),
        ("replay, its first 30 instructions", lambda: prefix30.replay(func)),
        ("Trace.from_json (JSON text)", lambda: Trace.from_json(text)),
    ]
    print(f"{'':48s} {'wall ms':>9s} {'cpu ms':>9s}")
    for label, fn in rows:
        print(f"{label:48s} {median_ms(fn, 200):9.3f} {cpu_ms(fn, 200):9.3f}")
    part = cpu_ms(rows[1][1], 200)
    print(f"30-instruction replay vs the 5 ms target: ratio {part / 5:.2f} (cpu), "
          f"{median_ms(rows[1][1], 200) / 5:.2f} (wall)")
    sch = loaded.replay(func)
    print(f"Schedule.copy after the trace: {median_ms(sch.copy, 2000) * 1e3:.1f} us median")


if __name__ == "__main__":
    main()
