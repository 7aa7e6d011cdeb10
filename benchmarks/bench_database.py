"""Benchmarks of the trace database against its budgets (run: ``python benchmarks/bench_database.py``).

Budgets (medians): commit a 64-record batch <= 20 ms; ``records()`` over 100k records <= 2 s;
``top_k`` with 100k records <= 5 ms. The driver's per-trial overhead must stay far below a measurement,
so these are the numbers that matter when hundreds of workers report to one database. Exits 1 if a budget
is exceeded.

``--part kinds`` (run by default too) compares SQLite and PostgreSQL side by side: the driver's CPU per step and
per record of the database calls with 1, 2 and 6 concurrent writers (budget: PostgreSQL <= 1.5x SQLite per
record), and beside them PostgreSQL running a step as the shared SQL's statements (what its server function
replaced). ``--part job``: a whole tuning job's driver
CPU per trial with each kind (budget: PostgreSQL <= 1.5x SQLite). ``--part clients``: the client's CPU per
statement, psycopg 3 directly vs SQLAlchemy Core on psycopg (when SQLAlchemy is installed). PostgreSQL parts
start a private server with this machine's PostgreSQL.
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

from tunefarm.database import Database, Record, open_database  # noqa: E402
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
    ap.add_argument("--part", choices=("budgets", "kinds", "clients", "job", "all"), default="all")
    ap.add_argument("--steps", type=int, default=300, help="driver steps per writer (--part kinds)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each kind, interleaved (--part kinds)")
    args = ap.parse_args()
    failed = False
    if args.part in ("budgets", "all"):
        failed |= budgets(args) != 0
    if args.part in ("kinds", "all"):
        failed |= compare_kinds(args.steps, args.rounds) != 0
    if args.part in ("clients", "all"):
        compare_clients(args.rounds)
    if args.part in ("job", "all"):
        failed |= compare_jobs(args.rounds) != 0
    return 1 if failed else 0


def budgets(args) -> int:
    """The single-writer budgets of the SQLite store (see the module doc)."""
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



# -- SQLite and PostgreSQL side by side ------------------------------------------------------------------------
STEP = 4  # records committed and programs claimed per driver step (a streaming job's step is a handful)
WARMUP = 10
WRITERS = (1, 2, 6)


def _open_as(kind: str, name: str):
    """The store of ``kind``; ``statements`` is PostgreSQL running a step as the shared SQL's dozen statements (the
    path the server function replaced), measured beside it."""
    if kind != "statements":
        return open_database(name)
    from tunefarm.database.postgres_database import PostgresDatabase
    from tunefarm.database.sqlite_database import SqlDatabase

    class PerStatement(PostgresDatabase):
        commit_and_claim = SqlDatabase.commit_and_claim

    return PerStatement(name)


def _writer(kind: str, name: str, tag: int, steps: int, barrier, queue) -> None:
    """One tuning driver: each step commits the records that arrived and claims the next picks, in one call."""
    try:
        db = _open_as(kind, name)
        job = db.start_job(f"writer-{tag}")
        rng = random.Random(tag)
        pending, cpu = [], []
        barrier.wait(timeout=600)
        for s in range(steps):
            # half of each step's picks are also another writer's picks: dedup is exercised, not just inserts
            hashes = [f"shared-{s}-{i}" if i % 2 else f"w{tag}-{s}-{i}" for i in range(STEP)]
            c0 = time.process_time()
            granted = db.commit_and_claim(pending, job, [("wk-kinds", TARGET, hashes, 10**9)])
            cpu.append((time.process_time() - c0, len(pending)))
            pending = batch(rng, "wk-kinds", job, s * STEP, len(granted[0]))
            for r, h in zip(pending, granted[0]):
                r.program_hash = h
        db.finish_job(job)
        queue.put(cpu[WARMUP:])
    except BaseException as e:  # the parent reports it (a lost writer would leave it waiting)
        queue.put(repr(e))
        raise


def _run_writers(kind: str, name: str, n: int, steps: int) -> tuple[float, float]:
    """(median CPU per step, CPU per committed record) of ``n`` concurrent drivers, in seconds."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(kind, name, i, steps, barrier, queue)) for i in range(n)]
    for p in procs:
        p.start()
    got = [queue.get(timeout=1200) for _ in procs]
    for p in procs:
        p.join(60)
    if any(isinstance(g, str) for g in got):
        raise RuntimeError(f"a writer failed: {[g for g in got if isinstance(g, str)]}")
    samples = [x for g in got for x in g]
    return (statistics.median(c for c, _ in samples),
            sum(c for c, _ in samples) / max(1, sum(r for _, r in samples)))


def _fresh(kind: str, tmp: str, server, k: int) -> str:
    if kind == "sqlite":
        name = os.path.join(tmp, f"kinds-{k}.sqlite")
    else:
        name = server.new_database(f"kinds_{k}")
    db = open_database(name)
    db.commit_workload("wk-kinds", "dense_512", '{"op":"dense"}', 2 * 512 ** 3)
    db.close()
    return name


KINDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "statements": "PG statements"}
BUDGET = 1.5  # PostgreSQL's driver CPU per record, at most this many times SQLite's


def compare_kinds(steps: int, rounds: int) -> int:
    """Driver CPU per step and per record, SQLite vs PostgreSQL (a private server with this machine's
    PostgreSQL) vs PostgreSQL running the shared SQL statement by statement, 1/2/6 writers; rounds interleave
    the kinds. Fails when PostgreSQL's CPU per record exceeds ``BUDGET`` times SQLite's."""
    from tunefarm.testing.postgres_server import PostgresServer

    server = PostgresServer().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows, k, failed = [], 0, False
            for n in WRITERS:
                got = {kind: [] for kind in KINDS}
                for _ in range(rounds):
                    for kind in got:
                        k += 1
                        got[kind].append(_run_writers(kind, _fresh(kind, tmp, server, k), n, steps))
                rows.append((n, got))
            print(f"\ndriver CPU in us, {STEP} records + {STEP} claims per step, {steps - WARMUP} steps per writer, "
                  f"{rounds} interleaved rounds: median [min-max] of the rounds; ratio: median / SQLite's median")
            for idx, unit in ((0, "per step"), (1, "per record")):
                print(f"{unit:>10} {'writers':>7}" + "".join(f"  {name:>22}" for name in KINDS.values())
                      + "".join(f"  {name + ' ratio':>19}" for kind, name in KINDS.items() if kind != "sqlite"))
                for n, got in rows:
                    per = {kind: [r[idx] * 1e6 for r in runs] for kind, runs in got.items()}
                    med = {kind: statistics.median(v) for kind, v in per.items()}
                    ratios = {kind: med[kind] / med["sqlite"] for kind in KINDS if kind != "sqlite"}
                    failed |= idx == 1 and ratios["postgresql"] > BUDGET
                    print(f"{'':>10} {n:>7}" + "".join(f"  {med[kind]:7.0f} [{min(v):5.0f}-{max(v):5.0f}]"
                                                       for kind, v in per.items())
                          + "".join(f"  {r:19.2f}" for r in ratios.values()))
            print(f"(budget: PostgreSQL per record <= {BUDGET}x SQLite: {'OVER BUDGET' if failed else 'ok'})")
            return 1 if failed else 0
    finally:
        server.stop()



def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):8.1f} [{min(xs):7.1f}-{max(xs):7.1f}]"


def compare_clients(rounds: int, n: int = 3000) -> None:
    """CPU per statement of one driver query through psycopg and through SQLAlchemy Core, interleaved."""
    try:
        import sqlalchemy
    except ImportError:
        print("\n(SQLAlchemy is not installed: no client comparison)")
        return
    import psycopg

    from tunefarm.database.pg_connection import PgConnection
    from tunefarm.testing.postgres_server import PostgresServer

    server = PostgresServer().start()
    try:
        url = _fresh("postgresql", "", server, 0)
        direct = PgConnection(psycopg.connect(url, autocommit=True, prepare_threshold=None))
        engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
        core = engine.connect()
        stmt = sqlalchemy.text("SELECT n FROM record_counts WHERE workload_id = :w AND target_id = :t")
        runs = {"psycopg": lambda: direct.execute("SELECT n FROM record_counts WHERE workload_id = ? AND "
                                                  "target_id = ?", (1, 1)).fetchone(),
                "SQLAlchemy Core": lambda: core.execute(stmt, {"w": 1, "t": 1}).fetchone()}
        got = {k: [] for k in runs}
        for _ in range(rounds):
            for name, fn in runs.items():
                for _ in range(100):
                    fn()
                c0 = time.process_time()
                for _ in range(n):
                    fn()
                got[name].append((time.process_time() - c0) / n * 1e6)
        print(f"\nclient CPU per statement (us, median [min-max] of {rounds} rounds of {n})")
        for name, xs in got.items():
            print(f"  {name:<16} {_spread(xs)}   ratio {statistics.median(xs) / statistics.median(got['psycopg']):.2f}")
        core.close()
        engine.dispose()
        direct.close()
    finally:
        server.stop()


def compare_jobs(rounds: int, trials: int = 48) -> int:
    """Driver CPU per trial of one real tuning job (matmul 64, LocalFarm, 1 worker) on each kind, interleaved."""
    from tunefarm.farm import LocalFarm
    from tunefarm.search.workloads import builtin_workload
    from tunefarm.testing.postgres_server import PostgresServer
    from tunefarm.tuning.api import tune

    import logging

    logging.getLogger("tunefarm").setLevel(logging.WARNING)  # the job's progress tables: not what is measured
    server = PostgresServer().start()
    got = {"sqlite": [], "postgresql": []}
    try:
        with tempfile.TemporaryDirectory() as tmp, LocalFarm(num_workers=1, target="llvm -num-cores=1") as farm:
            k = 100
            for _ in range(rounds):
                for kind in got:
                    k += 1
                    name = os.path.join(tmp, f"job-{k}.sqlite") if kind == "sqlite" else server.new_database(f"j{k}")
                    res = tune(builtin_workload("matmul-64"), target="llvm -num-cores=1", max_trials=trials,
                               trials_per_round=8, database=name, farm=farm, seed=k, progress=False)
                    got[kind].append(res.driver_cpu_secs / max(1, res.trials) * 1e3)
    finally:
        server.stop()
    ratio = statistics.median(got["postgresql"]) / statistics.median(got["sqlite"])
    print(f"\ndriver CPU per trial of a whole job (ms, {trials} trials, median [min-max] of {rounds} rounds)")
    print(f"  SQLite     {_spread(got['sqlite'])}\n  PostgreSQL {_spread(got['postgresql'])}   ratio {ratio:.2f}  "
          f"(budget 1.5: {'ok' if ratio <= 1.5 else 'OVER BUDGET'})")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
