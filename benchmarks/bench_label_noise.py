"""How often two measurements of the same programs order a pair the same way: the ceiling of any cost model.

    python benchmarks/bench_label_noise.py [--db tune.sqlite] [--workload matmul-128] [--programs 64]
                                           [--sessions 3] [--busy] [--neighbours 0,3,7]

A cost model is scored by its pairwise ranking accuracy against measured labels (``bench_cost_model.py``). The
labels are measurements, so they carry the machine's noise; this asks what accuracy a perfect oracle would get
that "predicts" each label by measuring the program once more. ``--programs`` successful programs of a tuning
job (``--db``, else a fresh 256-trial auto-space job of ``--workload`` on a LocalFarm) are measured in
``--sessions`` sessions, each program once per session, one after another in a shuffled order, exactly the way
a farm worker measures a trial: ``Measurer.measure`` replays, builds, checks and times with the tuner's
settings (``DEFAULT_MEASURE``, aligned arrays, the host lock), and the label is the fastest repeat (what the
tuner learns from). Printed: for every two sessions, the share of program pairs they order the same way (all
pairs, then by how far apart the pair's labels are, so the closest bins hold the pairs the noise swapped), and
the median over programs of the largest / smallest of a program's labels across sessions.

``--neighbours K1,K2,...`` repeats the sessions with K other processes timing kernels meanwhile (each with a
lock of its own, so their timings overlap the sessions': K+1 timing slots on this host), one K after another,
and prints for each K: how alike its sessions order pairs, how alike they order them to the first K's sessions
(K=0: alone), and the median over programs of its labels / the first K's labels (the slow-down). That is the
measurement behind the default timing slots (``tunefarm/farm/measure_lock.py``); run it on a host of your own
before changing ``TUNEFARM_TIMING_SLOTS``.

On this project's 2-core VM the oracle scored 0.76-0.84 on 64 programs of a matmul 128^3 job, in runs minutes
apart (0.76 with ``--busy``, session pairs 0.74-0.79), with pairs less than 1.1x apart ordered alike about as
often as by a coin; one program's labels differed by a median 1.11-1.29x between sessions. The machine's speed
switches between two modes ~1.4x apart every few tens of milliseconds and drifts over minutes
(``bench_timing_drift.py``). The cost model scores 0.77-0.81 (``bench_cost_model.py``, ``bench_tune.py``):
about what measuring again scores.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BINS = ((1.0, 1.1), (1.1, 1.2), (1.2, 1.5), (1.5, 2.0), (2.0, float("inf")))


def agreement(x: list[float], y: list[float]) -> tuple[float, dict]:
    """Share of pairs ordered the same way by ``x`` and ``y`` (ties in either skipped), overall and by the
    ratio of the pair's mean labels."""
    ok = total = 0
    by_bin = {b: [0, 0] for b in BINS}
    for i, j in itertools.combinations(range(len(x)), 2):
        if x[i] == x[j] or y[i] == y[j]:
            continue
        same = (x[i] < x[j]) == (y[i] < y[j])
        ok += same
        total += 1
        a, b = (x[i] + y[i]) / 2, (x[j] + y[j]) / 2
        ratio = max(a, b) / min(a, b)
        for lo, hi in BINS:
            if lo <= ratio < hi:
                by_bin[(lo, hi)][0] += same
                by_bin[(lo, hi)][1] += 1
    return ok / total if total else float("nan"), by_bin


def job_programs(args) -> tuple[str, list]:
    """(database path, [(workload key, workload json, target, trace json)] of successful records)."""
    import sqlite3

    path = args.db
    if path is None:
        import tunefarm
        from tunefarm.farm import LocalFarm
        from tunefarm.search.workloads import builtin_workload

        path = os.path.join(tempfile.mkdtemp(prefix="tunefarm-noise-"), f"{args.workload}.sqlite")
        target = tunefarm.Target("llvm -num-cores=1")
        print(f"tuning {args.workload} for {args.trials} trials into {path} ...", flush=True)
        with LocalFarm(num_workers=2, target=target) as farm:
            tunefarm.tune(builtin_workload(args.workload), target=target, max_trials=args.trials,
                          trials_per_round=32, database=path, farm=farm, seed=args.seed)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # read only: the records are data
    with conn:
        rows = conn.execute(
            "SELECT w.key, w.ir_json, t.target, r.trace_json FROM records r JOIN workloads w ON w.id = r.workload_id"
            " JOIN targets t ON t.id = r.target_id WHERE r.status = 'ok' ORDER BY r.id").fetchall()
    conn.close()
    return path, [tuple(r) for r in rows]


def _build_forever(cands, stop) -> None:
    """The other worker of a job: replay and compile candidates (no timing) until told to stop."""
    from tunefarm.codegen import compile_funcs
    from tunefarm.ir.serialize import from_json
    from tunefarm.schedule import Schedule, Trace
    from tunefarm.target import Target

    funcs = {}
    while not stop.is_set():
        for c in cands:
            if stop.is_set():
                return
            func = funcs.get(c.workload_key) or funcs.setdefault(c.workload_key, from_json(c.workload_dict()))
            scheduled = Schedule.from_trace(Trace.from_json(c.trace_value()), func).mod["main"]
            compile_funcs(scheduled, Target(c.target), keep_ll=False)


def _time_forever(cands, stop, lock_path) -> None:
    """A neighbour that times kernels too: what a second timing slot on this host means for the first one.
    It takes its own lock file, so its timings overlap the sessions' (``TUNEFARM_TIMING_SLOTS=2``)."""
    from tunefarm.farm.measure import Measurer

    measurer = Measurer(lock_path)
    while not stop.is_set():
        for c in cands:
            if stop.is_set():
                return
            measurer.measure(c)


def run_sessions(measurer, cands, args, rng, neighbours: int) -> list[list[float]]:
    """``args.sessions`` shuffled sessions over ``cands`` while ``neighbours`` processes time kernels (or, with
    ``--busy``, one compiles) meanwhile; each session's labels."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    others = []
    for k in range(neighbours):
        other_lock = os.path.join(tempfile.mkdtemp(prefix="tunefarm-noise-"), f"neighbour{k}.lock")
        others.append(ctx.Process(target=_time_forever, args=(cands, stop, other_lock), daemon=True))
    if args.busy:
        others.append(ctx.Process(target=_build_forever, args=(cands, stop), daemon=True))
    for p in others:
        p.start()
    sessions = []
    try:
        for s in range(args.sessions):
            order = list(range(len(cands)))
            rng.shuffle(order)
            labels = [0.0] * len(cands)
            for i in order:
                r = measurer.measure(cands[i])
                labels[i] = min(r.run_secs) if r.ok else float("inf")
            sessions.append(labels)
            print(f"{neighbours} neighbour(s), session {s + 1}: {len(cands)} programs measured", flush=True)
    finally:
        stop.set()
        for p in others:
            p.join(30)
    return sessions


def report(cands, sessions: list[list[float]]) -> tuple[list[float], float]:
    """Pairwise agreement of every two sessions (with the pair-ratio bins) and the label spread."""
    scores = []
    for a, b in itertools.combinations(range(len(sessions)), 2):
        acc, by_bin = agreement(sessions[a], sessions[b])
        scores.append(acc)
        bins = "  ".join(f"{lo:g}-{hi:g}x: {ok / n:.2f} ({n})" for (lo, hi), (ok, n) in by_bin.items() if n)
        print(f"  sessions {a + 1} and {b + 1}: pairs ordered alike {acc:.3f}   by pair ratio  {bins}")
    finite = [k for k in range(len(cands)) if all(s[k] != float("inf") for s in sessions)]
    spread = statistics.median(max(s[k] for s in sessions) / min(s[k] for s in sessions) for k in finite)
    print(f"  re-measurement oracle: mean pairwise agreement {statistics.fmean(scores):.3f}; "
          f"a program's labels across sessions, largest / smallest: median {spread:.3f}")
    return scores, spread


def compare(base: list[list[float]], other: list[list[float]]) -> tuple[float, float]:
    """How alike ``other``'s sessions order pairs to ``base``'s (mean over session pairs), and the median
    over programs of the ratio of their median labels (the slow-down)."""
    alike = statistics.fmean(agreement(a, b)[0] for a in base for b in other)
    ratios = []
    for k in range(len(base[0])):
        x = statistics.median(s[k] for s in other)
        y = statistics.median(s[k] for s in base)
        if x != float("inf") and y != float("inf"):
            ratios.append(x / y)
    return alike, statistics.median(ratios)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default=None, help="a database with successful records (default: tune one now)")
    ap.add_argument("--workload", default="matmul-128")
    ap.add_argument("--trials", type=int, default=256)
    ap.add_argument("--programs", type=int, default=64)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--busy", action="store_true",
                    help="meanwhile compile candidates in another process, as the other worker of a job does")
    ap.add_argument("--neighbours", type=lambda t: [int(x) for x in t.split(",")], default=[0],
                    help="K1,K2,...: repeat the sessions with K other processes timing kernels meanwhile")
    args = ap.parse_args(argv)
    if any(k < 0 for k in args.neighbours):
        ap.error("--neighbours takes counts >= 0")

    from tunefarm.farm import MeasureInput
    from tunefarm.farm.measure import Measurer
    from tunefarm.tuning.api import DEFAULT_MEASURE

    path, rows = job_programs(args)
    rng = random.Random(args.seed)
    rows = rng.sample(rows, min(args.programs, len(rows)))
    if len(rows) < 3:
        print(f"{path}: fewer than 3 successful records")
        return 1
    cands = [MeasureInput(key, wl, trace, target, **DEFAULT_MEASURE) for key, wl, target, trace in rows]
    measurer = Measurer()
    measurer.measure(cands[0])  # the reference output and the native timer, outside the sessions
    runs = {k: run_sessions(measurer, cands, args, rng, k) for k in args.neighbours}

    first = args.neighbours[0]
    print(f"\n{len(cands)} programs of {path}, label = fastest repeat of {DEFAULT_MEASURE}"
          + (", another process compiling meanwhile" if args.busy else ""))
    table, out = [], {}
    for k, sessions in runs.items():
        print(f"{k} other timing loop(s):")
        scores, spread = report(cands, sessions)
        alike, slow = compare(runs[first], sessions) if k != first else (float("nan"), 1.0)
        table.append((k, statistics.fmean(scores), alike, slow))
        out[k] = {"agreement": scores, "spread_median": spread, "agree_with_first": alike, "slowdown": slow}
    print(f"\n{'K other timing loops':>20} {'sessions agree':>15} {f'agree with K={first}':>16} {'median slow-down':>17}")
    for k, agree, alike, slow in table:
        vs = "-" if k == first else f"{alike:.3f}"
        print(f"{k:>20} {agree:>15.3f} {vs:>16} {slow:>16.2f}x")
    print(json.dumps({"db": path, "programs": len(cands), "by_neighbours": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
