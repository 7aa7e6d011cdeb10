"""Benchmarks of the trace database against its budgets (run: ``python benchmarks/bench_database.py``).

Budgets (medians): commit a 64-record batch <= 20 ms; ``records()`` over 100k records <= 2 s;
``top_k`` with 100k records <= 5 ms. The driver's per-trial overhead must stay far below a measurement,
so these are the numbers that matter when hundreds of workers report to one database. Exits 1 if a budget
is exceeded.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tunefarm.database import Database, Record  # noqa: E402
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus  # noqa: E402

TARGET = "llvm -mcpu=znver3 -mattr=+avx2,+fma -num-cores=1"
OTHER_TARGET = "llvm -mcpu=skylake -mattr=+avx2 -num-cores=8"


def trace(i: int) -> dict:
    """A trace of realistic size (~1 KB): 12 instructions and their decisions."""
    insts = [["GetBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]]]
    for j in range(5):
        insts.append(["SamplePerfectTile", [f"l{1 + j % 3}"], {"n": 2, "max_innermost_factor": 64},
                      [f"v{10 + 2 * j}", f"v{11 + 2 * j}"]])
        insts.append(["Split", [f"l{1 + j % 3}", f"v{10 + 2 * j}", f"v{11 + 2 * j}"], [],
                      [f"l{20 + 2 * j}", f"l{21 + 2 * j}"]])
    decisions = [[2 + 2 * j, [2 ** ((i + j) % 7), 128 // 2 ** ((i + j) % 7)]] for j in range(5)]
    return {"insts": insts, "decisions": decisions}


def batch(rng: random.Random, key: str, job: int, start: int, n: int, target: str = TARGET) -> list[Record]:
    out = []
    for i in range(start, start + n):
        if rng.random() < 0.85:
            s = rng.uniform(1e-4, 1e-3)
            result = MeasureResult(MeasureStatus.OK, [s, s * 1.01, s * 0.99], 0.05, None, "worker-3")
        else:
            result = MeasureResult(MeasureStatus.BUILD_ERROR, [], 0.05, "LLVM ERROR: something", "worker-3")
        out.append(Record(key, trace(i), f"{key}-{i:08x}", target, result, job, i))
    return out


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=100_000)
    args = ap.parse_args()
    rng = random.Random(0)
    failed = False

    def report(name: str, times: list[float], budget: float | None) -> None:
        nonlocal failed
        med = statistics.median(times)
        verdict = "" if budget is None else ("  ok" if med <= budget else "  OVER BUDGET")
        failed |= budget is not None and med > budget
        limit = "" if budget is None else f"  (budget {budget * 1e3:,.1f} ms)"
        print(f"{name:<44} median {med * 1e3:9.3f} ms  min {min(times) * 1e3:9.3f} ms  n={len(times)}{limit}{verdict}")

    with tempfile.TemporaryDirectory() as tmp:
        db = Database(os.path.join(tmp, "bench.sqlite"))
        key = db.commit_workload("wk-bench", "dense_512", '{"op":"dense"}', 2 * 512 ** 3)
        other = db.commit_workload("wk-other", "relu_512", '{"op":"relu"}', 512 * 512)
        job = db.start_job("bench", {"records": args.records})

        n = 0
        batches = [batch(rng, "wk-bench", job, 64 * i, 64) for i in range(60)]
        it = iter(batches)
        report("commit_records (64-record batch)", timed(lambda: db.commit_records(next(it)), 60), 0.020)
        n += 64 * 60

        t = time.perf_counter()
        while n < args.records:
            m = min(1000, args.records - n)
            db.commit_records(batch(rng, "wk-bench", job, n, m))
            n += m
        db.commit_records(batch(rng, "wk-other", job, 0, 1000, target=OTHER_TARGET))
        print(f"(filled to {db.count_records('wk-bench'):,} records of one workload + 1,000 others "
              f"in {time.perf_counter() - t:.1f} s; file {os.path.getsize(db.path) / 1e6:.0f} MB)")

        it = iter([batch(rng, "wk-bench", job, n + 64 * i, 64) for i in range(30)])
        report(f"commit_records (64-record batch, {n // 1000}k stored)",
               timed(lambda: db.commit_records(next(it)), 30), 0.020)
        report(f"records() over {db.count_records():,} records", timed(db.records, 5), 2.0)
        report("records(workload, target, status='ok')",
               timed(lambda: db.records("wk-bench", target=TARGET, status="ok"), 5), 2.0)
        report("top_k(workload, 10, target=T)", timed(lambda: db.top_k("wk-bench", 10, target=TARGET), 200), 0.005)
        report("top_k(workload name, 10), target inferred", timed(lambda: db.top_k("dense_512", 10), 200), 0.005)
        report("best(workload, target=T)", timed(lambda: db.best("wk-bench", target=TARGET), 200), 0.005)
        report("measured_hashes(workload, target)", timed(lambda: db.measured_hashes("wk-bench", TARGET), 10), None)
        report("count_records(workload)", timed(lambda: db.count_records("wk-bench"), 20), None)
        report("workloads()", timed(db.workloads, 5), None)
        from tunefarm.database.report import write_report

        report("write_report (HTML)", timed(lambda: write_report(db, os.path.join(tmp, "r.html")), 2), None)
        report("export (JSON lines)", timed(lambda: db.export(os.path.join(tmp, "e.jsonl")), 1), None)
        db.close()
        fresh = Database(os.path.join(tmp, "fresh.sqlite"))
        report("import_ into a fresh file", timed(lambda: fresh.import_(os.path.join(tmp, "e.jsonl")), 1), None)
        fresh.close()
        del other
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
