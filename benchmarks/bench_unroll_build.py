"""Benchmark: building auto-space candidates with unrolling done by LLVM (now) vs. copied in the IR (before).

    python benchmarks/bench_unroll_build.py [--per-workload 40] [--repeat 15] [--workloads matmul-128 ...]

For each workload, ``--per-workload`` schedules are sampled from the auto space (``AutoSpace.for_target``,
seeds 0, 1, ...; invalid samples skipped) and postprocessed as the search does; their
``pragma_auto_unroll_max_step`` is one of 0/16/64/512. Each candidate is built both ways:

- ``old``: ``lower(..., unroll_in_ir=True)``: every unrolled loop copied in the IR before flattening;
- ``new``: ``lower(...)``: unrolled loops stay loops marked ``llvm.loop.unroll.full``, unrolled by LLVM.

Build time is lower + LLVM IR emission + LLVM (unrolling, O2, object code) + load, replay excluded; wall and
process CPU time (CPU time is less sensitive to other load on this shared machine). Both outputs are checked
against the unscheduled workload's output. Kernel latency: ``--repeat`` native timing repeats of at least
3 ms each, old and new interleaved so machine drift hits both alike; a candidate's ratio is new/old of the
fastest repeat (robust to other processes stealing the core), the ratio of medians is printed too. Whether
the two object files are byte-identical is counted as well: a noise-free "same kernel" check.

A candidate whose new build takes longer than ``--max-build-s`` is reported and left out (seen: a dense
schedule whose 64-lane gathers, unrolled 56 times, spend ~2 minutes in LLVM's instruction selection in
either pipeline).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tunefarm.codegen import artifact_from_ir, lower  # noqa: E402
from tunefarm.codegen.llvm_codegen import emit_module  # noqa: E402
from tunefarm.codegen.loop_metadata import loops_left_to_unroll  # noqa: E402
from tunefarm.codegen.unroll import AUTO_UNROLL_KEY  # noqa: E402
from tunefarm.ir import stmt as S  # noqa: E402
from tunefarm.runtime import Module, build  # noqa: E402
from tunefarm.schedule import ScheduleError  # noqa: E402
from tunefarm.search.postprocs import PostprocError, apply_postprocs, default_postprocs  # noqa: E402
from tunefarm.search.space import AutoSpace  # noqa: E402
from tunefarm.search.workloads import builtin_workload  # noqa: E402
from tunefarm.target import Target  # noqa: E402

WORKLOADS = ("matmul-128", "dense-relu-784-128", "conv2d-1x64x28x28-64x3x3")
MODES = ("old", "new")


@dataclass
class Row:
    workload: str
    seed: int
    step: int
    build_ms: dict = field(default_factory=dict)  # mode -> wall ms
    cpu_ms: dict = field(default_factory=dict)  # mode -> process CPU ms
    lower_ms: dict = field(default_factory=dict)  # mode -> wall ms of lower + LLVM IR emission (Python)
    latency: dict = field(default_factory=dict)  # mode -> [seconds per call, one per repeat]
    same_object: bool = False
    left_loops: int = 0  # unroll-marked loops LLVM kept (new build)

    def ratio(self) -> float:
        return min(self.latency["new"]) / min(self.latency["old"])

    def median_ratio(self) -> float:
        return statistics.median(self.latency["new"]) / statistics.median(self.latency["old"])


def max_step(func) -> int:
    """The largest ``pragma_auto_unroll_max_step`` in a scheduled function (0 when none)."""
    found = [0]

    def walk(s):
        if isinstance(s, S.For):
            found[0] = max(found[0], int(s.annotations.get(AUTO_UNROLL_KEY, 0) or 0))
            walk(s.body)
        elif isinstance(s, S.SeqStmt):
            for x in s.seq:
                walk(x)
        elif isinstance(s, S.BlockRealize):
            found[0] = max(found[0], int(s.block.annotations.get(AUTO_UNROLL_KEY, 0) or 0))
            walk(s.block.body)
        elif isinstance(s, S.IfThenElse):
            walk(s.then_case)
            walk(s.else_case)
        elif isinstance(s, S.Allocate):
            walk(s.body)

    walk(func.body)
    return found[0]


def build_mode(func, target, mode: str):
    """(Module, object bytes, wall seconds, CPU seconds, seconds in lower + emission, loops LLVM did not
    unroll) for one build."""
    w0, c0 = time.perf_counter(), time.process_time()
    mir = emit_module([lower(func, "main", unroll_in_ir=(mode == "old"))], target)
    w_py = time.perf_counter()
    art = artifact_from_ir(mir, target)
    mod = Module.from_artifact(art)
    w1, c1 = time.perf_counter(), time.process_time()
    return mod, art.object, w1 - w0, c1 - c0, w_py - w0, loops_left_to_unroll(art.ll)


def sample(func, target, n: int):
    """Up to ``n`` postprocessed auto-space schedules (seed, scheduled PrimFunc), seeds 0, 1, ..."""
    space = AutoSpace.for_target(target)
    out, seed = [], 0
    while len(out) < n and seed < 20 * n:
        try:
            sch = space.sample(func, seed)
            apply_postprocs(sch, default_postprocs())
            out.append((seed, sch.mod["main"]))
        except (ScheduleError, PostprocError):
            pass
        seed += 1
    return out


def arrays_for(func, rng):
    return [rng.standard_normal([int(d.value) for d in p.shape]).astype(p.dtype) for p in func.params]


def run_workload(name: str, n: int, target, repeat: int, max_build_s: float, skipped: list) -> list[Row]:
    func = builtin_workload(name)
    rng = np.random.default_rng(0)
    inputs = arrays_for(func, rng)
    expected = [a.copy() for a in inputs]
    build(func, target)["main"](*expected)
    rows = []
    for seed, sched in sample(func, target, n):
        row = Row(name, seed, max_step(sched))
        mods, objects = {}, {}
        for mode in ("new", "old"):  # new first: a pathological candidate is skipped before the slow build
            mod, obj, wall, cpu, py, left = build_mode(sched, target, mode)
            if mode == "new" and wall > max_build_s:
                skipped.append((name, seed, row.step, wall))
                print(f"  {name} seed {seed:3d} step {row.step:3d}: new build {wall:.1f} s > {max_build_s} s, "
                      "left out", flush=True)
                break
            mods[mode], objects[mode] = mod, obj
            row.build_ms[mode], row.cpu_ms[mode], row.lower_ms[mode] = wall * 1e3, cpu * 1e3, py * 1e3
            if mode == "new":
                row.left_loops = left
            got = [a.copy() for a in inputs]
            mod["main"](*got)
            np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-4, atol=1e-4,
                                       err_msg=f"{name} seed {seed}: {mode} build gives a wrong result")
        if len(mods) < 2:
            continue
        row.same_object = objects["old"] == objects["new"]
        timers = {m: mods[m].time_evaluator("main", number=1, repeat=1, min_repeat_ms=3) for m in MODES}
        args = [a.copy() for a in inputs]
        row.latency = {m: [] for m in MODES}
        for m in MODES:
            timers[m](*args)  # warm up (grows ``number`` to the 3 ms minimum)
        for _ in range(repeat):
            for m in MODES:
                row.latency[m].append(timers[m](*args).results[0])
        rows.append(row)
        print(f"  {name} seed {seed:3d} step {row.step:3d}: build {row.build_ms['old']:7.1f} -> "
              f"{row.build_ms['new']:6.1f} ms, kernel {min(row.latency['old']) * 1e6:8.1f} -> "
              f"{min(row.latency['new']) * 1e6:8.1f} us ({row.ratio():.3f}), "
              + ("same object code" if row.same_object else "different object code")
              + (f", {row.left_loops} loops not unrolled" if row.left_loops else ""), flush=True)
    return rows


def geomean(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def summarize(label: str, rows: list[Row]) -> None:
    if not rows:
        return
    old = [r.build_ms["old"] for r in rows]
    new = [r.build_ms["new"] for r in rows]
    cold = [r.cpu_ms["old"] for r in rows]
    cnew = [r.cpu_ms["new"] for r in rows]
    ratios = [r.ratio() for r in rows]
    same = sum(r.same_object for r in rows)
    py_old = statistics.fmean(r.lower_ms["old"] for r in rows)
    py_new = statistics.fmean(r.lower_ms["new"] for r in rows)
    mean_old, mean_new = statistics.fmean(old), statistics.fmean(new)
    print(f"{label:26s} n={len(rows):3d}  build median {statistics.median(old):6.1f} -> {statistics.median(new):6.1f}"
          f"  mean {mean_old:6.1f} -> {mean_new:6.1f} ms"
          f" (x{mean_old / mean_new:.2f}; cpu x{statistics.fmean(cold) / statistics.fmean(cnew):.2f};"
          f" lower+emit {py_old:5.1f} -> {py_new:4.1f}, rest {mean_old - py_old:6.1f} -> {mean_new - py_new:6.1f})"
          f"  kernel new/old median {statistics.median(ratios):.3f} geomean {geomean(ratios):.3f}"
          f" (of medians {statistics.median(r.median_ratio() for r in rows):.3f})  same code {same}/{len(rows)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-workload", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=15, help="kernel timing repeats per build (>= 3 ms each)")
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--cores", type=int, default=1, help="target cores (1, as tuning workers measure)")
    ap.add_argument("--max-build-s", type=float, default=20.0, help="leave out candidates building longer")
    args = ap.parse_args()
    target = Target.host(args.cores)
    rows: list[Row] = []
    skipped: list = []
    for name in args.workloads:
        rows += run_workload(name, args.per_workload, target, args.repeat, args.max_build_s, skipped)
    print()
    print("build = lower + emit + LLVM + load, wall ms (old = copies in the IR, new = llvm.loop.unroll.full; "
          "rest = IR text + LLVM + load); kernel = latency ratio new/old per candidate (fastest repeats)")
    for name in args.workloads:
        summarize(name, [r for r in rows if r.workload == name])
    for step in sorted({r.step for r in rows}):
        summarize(f"max_step {step}", [r for r in rows if r.step == step])
    summarize("all", rows)
    worst = sorted(rows, key=lambda r: abs(math.log(r.ratio())), reverse=True)[:8]
    print("\nfurthest kernel ratios: " + ", ".join(
        f"{r.workload}#{r.seed}(step {r.step}{', same code' if r.same_object else ''}) {r.ratio():.3f}"
        for r in worst))
    print(f"new builds with loops LLVM did not unroll: {sum(1 for r in rows if r.left_loops)} of {len(rows)}")
    if skipped:
        print("left out (new build over --max-build-s): " + ", ".join(
            f"{w}#{s}(step {st}, {t:.0f} s)" for w, s, st, t in skipped))


if __name__ == "__main__":
    main()
