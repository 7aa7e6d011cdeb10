"""How one tuning job's throughput grows with the farm: real jobs on 1, 2, 4, 8, 14 workers, and a simulated cluster.

    python benchmarks/bench_scale.py [--workers 1,2,4,8,14] [--workloads matmul-128,dense-relu-784-128]
                                     [--trials 128] [--repeats 2] [--farm local|ray|both]
                                     [--steps batched|per-step|both]
    python benchmarks/bench_scale.py --simulate-cluster 48 [--nodes 4] [--build-secs 2.0] [--search-secs 0.01]
                                     [--trials 480]

Real mode: for each farm and worker count (up to the machine's cores), a job per workload and repeat: auto space,
evolutionary search with the XGBoost cost model, real builds and timings of single-thread kernels
(``-num-cores=1``), a fresh database each time. Before the first job a farm of each size runs a small warm-up
job (worker start-up and the driver's imports are not part of any figure). Printed per workload and worker
count: trials/s (median and range over the repeats), the speed-up over one worker (ratio of medians), the
driver process's whole CPU per trial (search, cost model, database and farm, every thread of the process:
``TuneResult.driver_cpu_secs`` over the whole job, and at steady state: from the end of the first round to the
last trial, read from the process's CPU clock as the job records each trial), and the workers' busy fraction
(seconds in work items / seconds alive, from the farm's own counters), over the whole job and at steady state.
After the table: the driver's CPU per second while its workers run long items (``waiting_cpu``: paid every
second whatever the trial rate, so a slow job's trials carry much of it) and the CPU per trial beyond it, which
gives the trials/s one driver could feed.
Ray farms of every size live at once on one private local Ray, each actor reserving an equal share of the host's
CPUs.

``--steps``: how the driver writes to the database. ``batched`` is the job as it is: a step that claims
programs claims ahead what each worker it picked for holds (at most ``CLAIM_AHEAD``), so most steps need no
transaction, and results wait up to ``COMMIT_EVERY_S`` for one. ``per-step`` is the driver before that: one
transaction per wake-up that has results or picks (``CLAIM_AHEAD = 0``, ``COMMIT_EVERY_S = 0``). ``both`` (the
default) runs every job both ways, interleaved, and prints them side by side.

Simulated cluster (``--simulate-cluster N``): a ``ray.cluster_utils.Cluster`` of ``--nodes`` nodes with N actors
in all, wrapped in ``tunefarm.testing.simulated_job.SimulatedFarm``: the cost model's training runs for real on
the actors; each measurement sleeps ``--build-secs`` (a build and timing on a core of its own) and reports a
latency from the program hash; each search request sleeps ``--search-secs`` per program and answers with real
programs of the task drawn from a pool built before the measured jobs (dozens of actors searching for real
would need as many cores). The driver's whole side is real: taking search replies, scoring them with the cost
model, picking, the database, the farm. It shows whether one driver keeps that many workers busy, and what
each trial costs the driver; "items in flight" (what the job had put and not yet taken back, over the farm's
capacity, at each trial) tells a job that has too little work to hand out from a farm that cannot take more,
and the host's CPU (all processes, ``/proc/stat``) tells when the simulation's own processes fill the host.

Timings on one host are serialized by the host measurement lock (``TUNEFARM_TIMING_SLOTS``, default 1), so on a
small machine the real mode also shows where timing becomes the wall.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tunefarm  # noqa: E402
import xgboost  # noqa: E402,F401  (imported once here: no job's figures include it)
from tunefarm.farm import create as create_farm  # noqa: E402
from tunefarm.tuning import job as job_module  # noqa: E402
from tunefarm.search.workloads import builtin_workload  # noqa: E402
from tunefarm.target import Target  # noqa: E402


logging.getLogger("tunefarm").setLevel(logging.WARNING)  # the task tables of every job would drown the figures


ROUND = 32  # trials per round of the jobs; steady state starts after the first
STEPS = {"per-step": (0, 0.0), "batched": (job_module.CLAIM_AHEAD, job_module.COMMIT_EVERY_S)}


@contextlib.contextmanager
def driver_steps(mode: str):
    """The job's database steps as ``mode`` (see module doc), restored afterwards."""
    saved = job_module.CLAIM_AHEAD, job_module.COMMIT_EVERY_S
    job_module.CLAIM_AHEAD, job_module.COMMIT_EVERY_S = STEPS[mode]
    try:
        yield
    finally:
        job_module.CLAIM_AHEAD, job_module.COMMIT_EVERY_S = saved


class ClockedFarm:
    """``farm`` as the job sees it, plus the clocks read each time the job records a trial: the driver's CPU, the
    wall clock and the farm's (busy, alive) worker-seconds. Steady state is from the end of the first round to the
    last trial: a job's start (its first search round) and end (the last results, the confirmation of its best)
    take the same seconds whatever its length, and dominate the whole-job figures of a short job."""

    def __init__(self, farm):
        self.farm = farm
        self.marks: list[tuple[float, float, float, float]] = []  # (CPU, wall, busy, alive) at each trial
        self.fed: list[float] = []  # items the job had put and not taken back / the farm's capacity, per trial

    def record_trial(self, result, task: str) -> None:
        stats = self.farm.stats
        self.marks.append((time.process_time(), time.monotonic(), stats.busy_secs, stats.worker_secs))
        self.fed.append(self.farm.pending / max(1, self.farm.capacity))
        self.farm.record_trial(result, task)

    def steady(self) -> dict:
        """Driver CPU ms per trial, trials/s and the workers' busy fraction at steady state (NaN for a job too
        short to have one)."""
        k = min(ROUND, len(self.marks) // 4)
        n = len(self.marks) - 1 - k
        if n <= 0:
            return {"steady_ms": float("nan"), "steady_tps": float("nan"), "steady_busy": float("nan")}
        (c0, t0, b0, a0), (c1, t1, b1, a1) = self.marks[k], self.marks[-1]
        return {"steady_ms": 1e3 * (c1 - c0) / n, "steady_tps": n / (t1 - t0) if t1 > t0 else float("nan"),
                "steady_busy": (b1 - b0) / (a1 - a0) if a1 > a0 else float("nan")}

    def __getattr__(self, name):
        return getattr(self.farm, name)


def one_job(farm, workload: str, trials: int, seed: int, target, steps: str = "batched") -> dict:
    """Run one job on ``farm``; its throughput, the driver's CPU per trial and how busy the workers were."""
    with tempfile.TemporaryDirectory() as d, driver_steps(steps):
        busy0, alive0 = farm.stats.busy_secs, farm.stats.worker_secs
        clocked = ClockedFarm(farm)
        r = tunefarm.tune(builtin_workload(workload), target=target, max_trials=trials, trials_per_round=ROUND,
                          database=os.path.join(d, "t.sqlite"), farm=clocked, seed=seed, progress=False)
        alive = farm.stats.worker_secs - alive0
        return {"tps": r.trials / r.wall_secs, "cpu_ms": 1e3 * r.driver_cpu_secs / max(1, r.trials),
                "busy": (farm.stats.busy_secs - busy0) / alive if alive > 0 else float("nan"), **clocked.steady(),
                "best_us": r.best_latency_us, "trials": r.trials, "replayed": r.replayed / max(1, r.trials),
                "fed": statistics.median(clocked.fed) if clocked.fed else float("nan")}


def waiting_cpu(farm, secs: float = 6.0) -> float:
    """The driver's CPU in ms per second while every worker of ``farm`` runs one item of ``secs`` and the driver
    waits for them: what the farm costs per second whatever the trial rate (Ray's threads, progress queries,
    reading the node tables). A job pays it every second, so at a few trials/s it is a large part of each trial."""
    from tunefarm.farm import Work

    left = {farm.put(Work("tunefarm.testing.handlers:pause", {"secs": secs}, timeout_s=secs + 60))
            for _ in range(farm.num_workers)}
    cpu0, t0 = time.process_time(), time.monotonic()
    while left:
        left.difference_update(d.ticket for d in farm.poll(1.0))
    return 1e3 * (time.process_time() - cpu0) / (time.monotonic() - t0)


def make_farm(kind: str, n: int, target, share: float = 1.0):
    """A farm of ``n`` workers; a Ray worker reserves ``share`` of a CPU (every size's farm fits at once)."""
    options = {} if kind == "local" else {"worker_cpus": share}
    return create_farm(kind, num_workers=n, target=target, **options)


def real(args) -> None:
    target = Target.host(1)
    cores = os.cpu_count() or 1
    sizes = [n for n in args.workers if n <= cores] or [1]
    kinds = ["local", "ray"] if args.farm == "both" else [args.farm]
    modes = list(STEPS) if args.steps == "both" else [args.steps]
    print(f"host: {cores} cores; target {target.cpu} -num-cores=1; {args.trials} trials per job, "
          f"{args.repeats} repeat(s); worker counts {sizes}; driver steps {modes}; every size's and mode's jobs "
          "interleaved with the others'")
    for kind in kinds:
        rows: dict = {(wl, n, m): [] for wl in args.workloads for n in sizes for m in modes}
        share = 1.0
        if kind == "ray":
            import ray

            ray.init(address="local", include_dashboard=False, log_to_driver=False)
            share = min(1.0, int(100 * cores / sum(sizes)) / 100)  # every farm's actors fit on the host's CPUs
        farms = {n: make_farm(kind, n, target, share) for n in sizes}  # all alive at once: idle workers cost nothing
        waits: dict[int, list[float]] = {}
        try:
            for n, farm in farms.items():
                one_job(farm, "matmul-32", 16, 0, target)  # warm-up: worker start, imports
            for r in range(args.repeats):  # round r runs every size once, so drift hits them all alike
                for n, farm in farms.items():
                    waits.setdefault(n, []).append(waiting_cpu(farm))
                for wl in args.workloads:
                    for n in sizes:
                        for m in modes:
                            rows[(wl, n, m)].append(one_job(farms[n], wl, args.trials, 100 + r, target, m))
                            print(f"  [{kind}] round {r + 1}: {wl} x{n} {m}: "
                                  f"{rows[(wl, n, m)][-1]['tps']:.1f} trials/s", flush=True)
        finally:
            for farm in farms.values():
                farm.close()
            if kind == "ray":
                import ray

                ray.shutdown()
        report(kind, rows, args.workloads, sizes, modes, waits)


def report(kind: str, rows: dict, workloads: list[str], sizes: list[int], modes: list[str],
           waits: dict[int, list[float]]) -> None:
    print(f"\n{kind} farm")
    print(f"{'workload':<22} {'workers':>7} {'steps':>9} {'trials/s (range)':>22} {'speed-up':>9} "
          f"{'driver ms/trial':>16} {'steady ms (range)':>18} {'busy':>6} {'steady':>6} {'replayed':>9} {'best us':>9}")
    for wl in workloads:
        base = statistics.median(x["tps"] for x in rows[(wl, sizes[0], modes[0])])
        for n in sizes:
            for mode in modes:
                m = rows[(wl, n, mode)]
                tps = [x["tps"] for x in m]
                med = statistics.median(tps)
                print(f"{wl:<22} {n:>7} {mode:>9} {med:>8.1f} ({min(tps):.1f}-{max(tps):.1f}){'':>4} "
                      f"{med / base:>8.2f}x {statistics.median(x['cpu_ms'] for x in m):>16.2f} "
                      f"{statistics.median(x['steady_ms'] for x in m):>6.2f} "
                      f"({min(x['steady_ms'] for x in m):.2f}-{max(x['steady_ms'] for x in m):.2f}) "
                      f"{statistics.median(x['busy'] for x in m):>6.2f} "
                      f"{statistics.median(x['steady_busy'] for x in m):>6.2f} "
                      f"{statistics.median(x['replayed'] for x in m):>9.2f} "
                      f"{statistics.median(x['best_us'] for x in m):>9.2f}")
    print("\nwhat the driver costs per second while it waits (each worker running one 6 s item), and the driver's "
          "capacity that leaves: per trial, the steady CPU less that cost's share at the steady trial rate; capacity = "
          "(1000 ms - the per-second cost) / that")
    for n in sizes:
        wait = statistics.median(waits[n])
        line = f"  {n} worker(s): {wait:.2f} ms/s ({min(waits[n]):.2f}-{max(waits[n]):.2f})"
        for wl in workloads:
            for mode in modes:
                m = rows[(wl, n, mode)]
                tps = statistics.median(x["steady_tps"] for x in m)  # (the rate of the span steady_ms is of)
                per_trial = statistics.median(x["steady_ms"] for x in m) - wait / tps
                line += (f"; {wl} {mode}: {per_trial:.2f} ms per trial beyond it, capacity "
                         f"{(1000 - wait) / per_trial:.0f} trials/s")
        print(line)


def host_cpu_secs() -> float:
    """CPU seconds all of this host's processes have used (``/proc/stat``): in a simulated cluster, the actors,
    raylets and GCS share the host's few cores with the driver, and may be what keeps the actors from being busy."""
    with open("/proc/stat", encoding="ascii") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def simulated(args) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from tunefarm.testing.simulated_job import SimulatedFarm

    n, nodes = args.simulate_cluster, args.nodes
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(nodes):
        cluster.add_node(num_cpus=(n + nodes - 1) // nodes)
    ray.init(address=cluster.address)
    target = Target.host(1)
    try:
        t0 = time.perf_counter()
        farm = SimulatedFarm(create_farm("ray", num_workers=n, target=target, worker_cpus=1.0, start_timeout_s=600),
                             build_secs=args.build_secs, search_secs=args.search_secs, pool=max(2000, 4 * args.trials))
        print(f"simulated cluster: {nodes} nodes, {farm.num_workers} actors on {os.cpu_count()} real cores "
              f"(started in {time.perf_counter() - t0:.0f} s); measurement simulated as {args.build_secs:g} s")
        with farm:
            for wl in args.workloads:  # warm-up: each task's program pool, and each actor rebuilds the task once
                one_job(farm, wl, min(2 * n, 64), 0, target)
            modes = list(STEPS) if args.steps == "both" else [args.steps]
            for wl in args.workloads:
                for r, mode in ((r, mode) for r in range(args.repeats) for mode in modes):
                    host0 = host_cpu_secs()
                    m = one_job(farm, wl, args.trials, 100 + r, target, mode)
                    host = host_cpu_secs() - host0
                    ideal = n / args.build_secs
                    print(f"{wl} [{mode} steps]: {m['trials']} trials, {m['tps']:.1f} trials/s "
                          f"(all-measuring ceiling {ideal:.1f}), workers busy {m['busy']:.2f} "
                          f"({m['steady_busy']:.2f} at steady state), "
                          f"driver {m['cpu_ms']:.2f} ms CPU per trial "
                          f"({m['steady_ms']:.2f} at steady state), "
                          f"{m['replayed']:.0%} of measurements replayed, items in flight {m['fed']:.0%} of the "
                          "farm's capacity (median); the host's cores "
                          f"{host / (m['trials'] / m['tps']) / (os.cpu_count() or 1):.0%} busy, "
                          f"{1e3 * host / m['trials']:.1f} ms of the whole host's CPU per trial", flush=True)
    finally:
        ray.shutdown()
        cluster.shutdown()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8, 14])
    p.add_argument("--workloads", type=lambda s: s.split(","), default=["matmul-128", "dense-relu-784-128"])
    p.add_argument("--trials", type=int, default=128)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--farm", choices=("local", "ray", "both"), default="local")
    p.add_argument("--steps", choices=("batched", "per-step", "both"), default="both",
                   help="the driver's database steps (see module doc)")
    p.add_argument("--simulate-cluster", type=int, default=0, metavar="N")
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--build-secs", type=float, default=2.0)
    p.add_argument("--search-secs", type=float, default=0.01, help="simulated search time per program")
    args = p.parse_args(argv)
    if args.simulate_cluster:
        simulated(args)
    else:
        real(args)


if __name__ == "__main__":
    main()
