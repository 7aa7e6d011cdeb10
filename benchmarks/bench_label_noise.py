"""How often two measurements of the same programs order a pair the same way: the ceiling of any cost model.

    python benchmarks/bench_label_noise.py [--db tune.sqlite] [--workload matmul-128] [--programs 64]
                                           [--sessions 3] [--busy | --timing-neighbour]

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
    from tunefarm.schedule import Trace
    from tunefarm.target import Target

    funcs = {}
    while not stop.is_set():
        for c in cands:
            if stop.is_set():
                return
            func = funcs.get(c.workload_key) or funcs.setdefault(c.workload_key, from_json(c.workload_dict()))
            compile_funcs(Trace.from_json(c.trace_value()).replay(func).mod["main"], Target(c.target), keep_ll=False)


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
    ap.add_argument("--timing-neighbour", action="store_true",
                    help="meanwhile time candidates in another process, overlapping these timings (two timing "
                         "slots on this host)")
    args = ap.parse_args(argv)

    from tunefarm.farm import Candidate
    from tunefarm.farm.measure import Measurer
    from tunefarm.tuning.api import DEFAULT_MEASURE

    path, rows = job_programs(args)
    rng = random.Random(args.seed)
    rows = rng.sample(rows, min(args.programs, len(rows)))
    if len(rows) < 3:
        print(f"{path}: fewer than 3 successful records")
        return 1
    cands = [Candidate(key, wl, trace, target, **DEFAULT_MEASURE) for key, wl, target, trace in rows]
    measurer = Measurer()
    measurer.measure(cands[0])  # the reference output and the native timer, outside the sessions
    busy = None
    if args.busy or args.timing_neighbour:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        stop = ctx.Event()
        if args.timing_neighbour:
            other_lock = os.path.join(tempfile.mkdtemp(prefix="tunefarm-noise-"), "neighbour.lock")
            busy = ctx.Process(target=_time_forever, args=(cands, stop, other_lock), daemon=True)
        else:
            busy = ctx.Process(target=_build_forever, args=(cands, stop), daemon=True)
        busy.start()
    sessions = []
    for s in range(args.sessions):
        order = list(range(len(cands)))
        rng.shuffle(order)
        labels = [0.0] * len(cands)
        for i in order:
            r = measurer.measure(cands[i])
            labels[i] = min(r.run_secs) if r.ok else float("inf")
        sessions.append(labels)
        print(f"session {s + 1}: {len(cands)} programs measured", flush=True)
    if busy is not None:
        stop.set()
        busy.join(30)

    print(f"\n{len(cands)} programs of {path}, label = fastest repeat of {DEFAULT_MEASURE}"
          + (", another process compiling meanwhile" if args.busy else "")
          + (", another process timing kernels meanwhile" if args.timing_neighbour else ""))
    scores = []
    for a, b in itertools.combinations(range(len(sessions)), 2):
        acc, by_bin = agreement(sessions[a], sessions[b])
        scores.append(acc)
        bins = "  ".join(f"{lo:g}-{hi:g}x: {ok / n:.2f} ({n})" for (lo, hi), (ok, n) in by_bin.items() if n)
        print(f"sessions {a + 1} and {b + 1}: pairs ordered alike {acc:.3f}   by pair ratio  {bins}")
    finite = [k for k in range(len(cands)) if all(s[k] != float("inf") for s in sessions)]
    spread = statistics.median(max(s[k] for s in sessions) / min(s[k] for s in sessions) for k in finite)
    print(f"re-measurement oracle: mean pairwise agreement {statistics.fmean(scores):.3f}; "
          f"a program's labels across sessions, largest / smallest: median {spread:.3f}")
    print(json.dumps({"db": path, "programs": len(cands), "agreement": scores, "spread_median": spread}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
