"""Benchmark: the measurement farm's throughput, the driver's cost per trial, and a scale simulation.

Run: ``python benchmarks/bench_farm.py [--part speedup|driver|scale|all] [--candidates tilings|auto|both]``
(all: about 8 minutes).

1. speedup -- trials per second with 1 vs 2 workers on this 2-core machine (target: at least 1.8x), with real
   candidates, each replayed, LLVM-built, checked against the unscheduled program and timed (repeat=3): 36
   auto-space samples of a 128^3 matmul (tuning-sized trials, ``--candidates auto``) and 36 tilings of a 64x64x64
   matmul (26 ms trials, where per-trial farm overhead shows most, ``--candidates tilings``). Both farms are
   measured: RayFarm (the default farm of ``tunefarm.tune``) and LocalFarm. Both the 1- and the 2-worker farm are
   started and warmed up (worker start, imports, the per-worker reference build); then each round times a control
   (2 plain CPU-bound processes vs 1: the speedup the machine itself offers at that moment), one batch of the 36
   candidates on 1 worker and one on 2 workers, back to back. Reported: the median ratio, and the median over the
   rounds in which the control shows two free cores. Builds run on every core; timings take the host lock, so they
   are serialized -- the speedup is what is left after that serialization.

2. driver -- the driver's CPU time per trial (target: at most 1 ms, i.e. >= 1000 trials/s of driver
   capacity), for a RayFarm sending one item per actor call (``inflight_per_worker=2``) and ones sending batches
   of up to four (8) and up to eight (16, the default; short items fill them), side by side with their ratios.
   A RayFarm with 8 simulated workers (the ``SIMULATE`` handler, tunefarm/testing/simulate.py: no compiler,
   each trial sleeps 0.5 ms in the timing phase) is fed 3000 candidates; the driver's
   ``time.process_time()`` (all threads of the driver process, including Ray's core-worker threads) spent in
   the farm's calls is divided by the number of trials. Simulated workers make the trials short, so this is
   the driver at full speed, not waiting. Then the same trials are streamed as work items (``put`` / ``poll``,
   pending kept at the farm's capacity, as a tuning job streams), on the RayFarm and on a LocalFarm of 8
   processes; reported with the workers' busy fraction (``FarmStats.busy_secs / worker_secs``).

3. scale -- a 3-node local ``ray.cluster_utils.Cluster`` whose nodes claim 16 CPUs each, hosting 48
   lightweight simulated workers (one per claimed CPU; each trial sleeps 100 ms "building", no lock, so on
   real hardware it stands for 48 busy cores). If the driver keeps up, throughput is 48 / 0.1 s = 480
   trials/s minus per-call latency, and work in flight stays at its bound (workers x inflight_per_worker).
   Reported: trials/s vs that ideal, mean in-flight, driver CPU per trial, the driver's CPU utilisation (its
   share of one core) and the workers' busy fraction: a driver at 30% of a core while 48 workers are saturated
   can feed about 48 / 0.3 = 160 workers of this trial length, or proportionally more for real (100 ms-1 s)
   builds.

Numbers measured on this 2-core VM (2026-11-21):

    driver               0.44-0.50 ms driver CPU per trial (median 0.47)  ->  ~2100 trials/s of driver capacity
                         (cProfile: almost all of it is Ray's actor-call submission and ray.wait/ray.get)
    driver (2026-11-27,  one item per actor call: 0.716-0.735 ms per trial (median 0.719), streamed 0.623 ms;
    load average ~20)    batches of four: 0.215-0.321 ms (median 0.284), streamed 0.275 ms: 2.54x and 2.27x
                         less; LocalFarm streamed 0.110 ms per item
    scale (48 workers)   418 trials/s of an ideal 480 (87%), mean in flight 46.3/48, driver 0.61 ms CPU/trial,
                         driver busy 25% of one core  ->  one driver feeds ~190 workers of 100 ms trials
    speedup              two kinds of trials, same method (quiet machine, load average < 2; the control still
                         swings 1.4-2.6x, the hypervisor shares the cores). Default: two calls queued per actor.
                         tuning-sized trials (``--candidates auto``: 36 auto-space samples of matmul 128^3, builds
                         of 50-200 ms, i.e. what a tuning job measures), 2 runs of 6 rounds:
                         RayFarm   1 worker ~14.1-14.4 trials/s, 2 workers ~26.9 trials/s, per-round ratio median
                                   1.82x and 1.86x (ratio of the median rates 1.87x and 1.90x)
                         LocalFarm 1 worker ~13.5-14.3 trials/s, 2 workers ~25.6-27.0 trials/s, 1.93x and 1.85x
                         26 ms trials (``--candidates tilings``: 36 tilings of a 64^3 matmul), same window:
                         RayFarm   1 worker ~38.7 trials/s, 2 workers ~60.1 trials/s, ratio median 1.63x
                         LocalFarm 1 worker ~37.3 trials/s, 2 workers ~67.8 trials/s, ratio median 1.82x
                         Where RayFarm loses on short trials: per trial, the driver process (Ray's core-worker
                         threads included) takes ~1.6 ms CPU and Ray's own daemons (raylet, GCS, agents, idle
                         pool workers) ~8% of one core in total; on a machine with exactly two cores that is
                         about a tenth of the capacity at 60 trials/s, and 4x less at tuning-sized trials.
                         Under load (other test suites on the machine, load average 4-12) the control fell to
                         0.8-1.1x and RayFarm measured 1.33-1.43x.

(see the script's output for the numbers of a given run).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "farm"))

from tunefarm.testing import batch  # noqa: E402  (batches of given traces: the farm measures nothing else)

LOCK = "/tmp/tunefarm-bench-farm.lock"


# --------------------------------------------------------------------------------------------- candidates
def real_candidates():
    import farm_programs as fp  # noqa: E402  (test program builders: te matmul + Schedule traces)

    mm = fp.matmul_func(64)
    cands = []
    for fi in (2, 4, 8, 16, 32, 64):
        for fj in (2, 4, 8, 16, 32, 64):
            cands.append(fp.candidate(mm, _tiled(mm, fi, fj), timeout_s=60.0, repeat=3))
    return cands


def auto_candidates(n: int = 36, workload: str = "matmul-128"):
    """``n`` distinct programs sampled from the auto space (what a tuning job measures: 50-200 ms builds),
    for single-thread kernels (two workers time side by side without sharing a thread team)."""
    from tunefarm.farm import MeasureInput
    from tunefarm.ir.serialize import to_json
    from tunefarm.search.postprocs import default_postprocs
    from tunefarm.search.space import AutoSpace
    from tunefarm.search.task import TuneTask
    from tunefarm.search.workloads import builtin_workload
    from tunefarm.target import Target

    target = Target("llvm -num-cores=1")
    func = builtin_workload(workload)
    task = TuneTask(workload, func, AutoSpace.for_target(target), default_postprocs(), seed=0)
    progs: dict = {}
    while len(progs) < n:
        prog = task.sample()
        if prog is not None:
            progs.setdefault(prog.hash, prog)
    text = to_json(func)
    return [MeasureInput(task.key, text, p.trace_json(), str(target), timeout_s=60.0, repeat=3) for p in progs.values()]


def _tiled(func, fi, fj):
    from tunefarm.schedule import Schedule

    sch = Schedule(func)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, fi])
    j0, j1 = sch.split(j, [None, fj])
    sch.reorder(i0, j0, k, i1, j1)
    return sch.trace.as_json()


def sim_candidates(n: int, **kw):
    from tunefarm.farm import MeasureInput
    from tunefarm.target import Target
    from tunefarm.testing.simulate import simulated_trace

    t = str(Target.host())
    return [MeasureInput("sim", {}, simulated_trace("ok", **kw), t, timeout_s=60.0, repeat=1) for _ in range(n)]


# --------------------------------------------------------------------------------------------- parts
def _batch_rate(farm, cands) -> float:
    t0 = time.perf_counter()
    results = batch.measure(farm, cands)
    dt = time.perf_counter() - t0
    bad = [r for r in results if not r.ok]
    if bad:
        raise SystemExit(f"benchmark candidates failed: {bad[0].status} {bad[0].error}")
    return len(cands) / dt


_SPIN = "x = 0\nfor i in range(6_000_000):\n    x += i"


def _spin_wall(n: int) -> float:
    import subprocess

    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(n)]
    for p in procs:
        p.wait()
    return time.perf_counter() - t0


def machine_speedup() -> float:
    """Control: how much faster 2 plain CPU-bound processes finish than 1, on this machine right now.

    On a shared VM other processes (or the hypervisor) can take the second core; then no farm can reach 1.8x,
    and this number says so.
    """
    return 2 * _spin_wall(1) / _spin_wall(2)


def part_speedup(rounds: int = 6, candidates: str = "tilings") -> None:
    import ray

    from tunefarm.farm import LocalFarm, RayFarm

    if candidates == "auto":
        cands = auto_candidates()
        what = "matmul 128^3 auto-space samples"
    else:
        cands = real_candidates()
        what = "64^3 matmul, distinct tilings"
    print(f"speedup: {len(cands)} real candidates per batch ({what}), {rounds} rounds; "
          "each round times the control, 1 worker and 2 workers back to back")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        # worker_cpus=0: both Ray farms live side by side (each batch runs on one of them at a time)
        makers = {"RayFarm": lambda n: RayFarm(num_workers=n, worker_cpus=0, lock_path=LOCK, metrics=False),
                  "LocalFarm": lambda n: LocalFarm(num_workers=n, lock_path=LOCK)}
        for name, make in makers.items():
            farms = {1: make(1), 2: make(2)}
            try:
                for farm in farms.values():
                    batch.measure(farm, cands[: max(4, farm.num_workers * 2)])  # warm-up: workers, references
                rows = []
                for _ in range(rounds):
                    control = machine_speedup()
                    r1 = _batch_rate(farms[1], cands)
                    r2 = _batch_rate(farms[2], cands)
                    rows.append((control, r1, r2))
            finally:
                for f in farms.values():
                    f.close()
            ratios = [r2 / r1 for _, r1, r2 in rows]
            print(f"  {name:9s}  1 worker {statistics.median(r for _, r, _ in rows):6.2f} trials/s   "
                  f"2 workers {statistics.median(r for _, _, r in rows):6.2f} trials/s   "
                  f"ratio median {statistics.median(ratios):.2f}x  (target >= 1.8x)")
            print("             per round (control -> farm): "
                  + ", ".join(f"{c:.2f}->{r:.2f}" for (c, _, _), r in zip(rows, ratios)))
            quiet = [r for (c, _, _), r in zip(rows, ratios) if c >= 1.8]
            if quiet:
                print(f"             rounds where the machine had 2 free cores (control >= 1.8x): farm ratio "
                      f"median {statistics.median(quiet):.2f}x over {len(quiet)} rounds")
            else:
                print("             no round had 2 free cores (control < 1.8x): the machine, not the farm, "
                      "bounds the ratio")
    finally:
        ray.shutdown()


def _stream_rate(farm, cands, handler: str) -> tuple[float, float]:
    """Stream ``cands`` as measure work items, pending kept at the farm's capacity: (items/s, driver CPU/item)."""
    from tunefarm.farm import DoneStatus, Work

    works = [Work(handler, list(c.to_wire("")), c.timeout_s, shared={c.workload_key: "{}"})
             for c in cands]
    cpu0, t0 = farm.stats.driver_cpu_secs, time.perf_counter()
    left = len(works)
    while left:
        while works and farm.pending < farm.capacity:
            farm.put(works.pop())
        for d in farm.poll(None):
            left -= 1
            if d.status is not DoneStatus.OK:
                raise SystemExit(f"benchmark item failed: {d.status} {d.error}")
    return len(cands) / (time.perf_counter() - t0), (farm.stats.driver_cpu_secs - cpu0) / len(cands)


def part_driver() -> None:
    import ray

    from tunefarm.farm import LocalFarm, RayFarm
    from tunefarm.testing.simulate import SIMULATE

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        medians, streamed = {}, {}
        for inflight in (2, 8, 16):  # one item per actor call (two calls per actor), batches of up to 4, up to 8
            with RayFarm(num_workers=8, worker_cpus=0, lock_path=LOCK,
                         inflight_per_worker=inflight) as farm:
                print(f"RayFarm, up to {inflight} items per worker in 2 actor calls of up to {inflight // 2}:")
                batch.measure(farm, sim_candidates(200, run_secs=0.0005, lock=False), SIMULATE)
                per_trial = []
                for _ in range(3):
                    cands = sim_candidates(1000, run_secs=0.0005, lock=False)
                    cpu0, t0 = farm.stats.driver_cpu_secs, time.perf_counter()
                    batch.measure(farm, cands, SIMULATE)
                    wall = time.perf_counter() - t0
                    per_trial.append((farm.stats.driver_cpu_secs - cpu0) / len(cands))
                    print(f"  batch of {len(cands)}: {len(cands) / wall:7.1f} trials/s wall, "
                          f"driver {per_trial[-1] * 1e3:.3f} ms CPU/trial")
                medians[inflight] = med = statistics.median(per_trial)
                print(f"  driver: median {med * 1e3:.3f} ms CPU per trial (range {min(per_trial) * 1e3:.3f}-"
                      f"{max(per_trial) * 1e3:.3f}) -> {1 / med:.0f} trials/s of driver capacity")
                rate, cpu = _stream_rate(farm, sim_candidates(3000, run_secs=0.0005, lock=False), SIMULATE)
                streamed[inflight] = cpu
                print(f"  streamed (put/poll): {rate:7.1f} items/s, driver {cpu * 1e3:.3f} ms CPU/item, "
                      f"workers busy {farm.stats.busy_fraction:.0%} of their time")
        for big in (8, 16):
            print(f"driver CPU per trial, one item per call / batches of up to {big // 2}: measure "
                  f"{medians[2] / medians[big]:.2f}x, streamed {streamed[2] / streamed[big]:.2f}x")
        with LocalFarm(num_workers=8, lock_path=LOCK) as farm:
            batch.measure(farm, sim_candidates(200, run_secs=0.0005, lock=False), SIMULATE)
            rate, cpu = _stream_rate(farm, sim_candidates(3000, run_secs=0.0005, lock=False), SIMULATE)
            print(f"  LocalFarm streamed (put/poll): {rate:7.1f} items/s, driver {cpu * 1e3:.3f} ms CPU/item, "
                  f"workers busy {farm.stats.busy_fraction:.0%} of their time")
    finally:
        ray.shutdown()


def part_scale(nodes: int = 3, cpus_per_node: int = 16, build_secs: float = 0.1, trials: int = 2000) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from tunefarm.farm import RayFarm
    from tunefarm.testing.drills import in_flight_by_node
    from tunefarm.testing.simulate import SIMULATE

    t0 = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus_per_node, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus_per_node)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        with RayFarm(lock_path=LOCK, metrics=True) as farm:
            workers = farm.num_workers
            print(f"scale: {nodes} nodes x {cpus_per_node} claimed CPUs, {workers} simulated workers "
                  f"(cluster + workers up in {time.perf_counter() - t0:.0f} s)")
            batch.measure(farm, sim_candidates(workers * 2, build_secs=build_secs, lock=False), SIMULATE)
            cands = sim_candidates(trials, build_secs=build_secs, lock=False)
            in_flight = []
            cpu0 = farm.stats.driver_cpu_secs
            t0 = time.perf_counter()
            for k, _ in enumerate(batch.submit(farm, cands, SIMULATE)):
                if k % 50 == 0:
                    in_flight.append(sum(in_flight_by_node(farm).values()))
            wall = time.perf_counter() - t0
            cpu = farm.stats.driver_cpu_secs - cpu0
            ideal = workers / build_secs
            print(f"  {trials / wall:7.1f} trials/s (ideal {ideal:.0f}: {trials / wall / ideal:.0%}), "
                  f"mean in flight {statistics.mean(in_flight):.1f}/{workers * farm.inflight_per_worker}, "
                  f"driver {cpu / trials * 1e3:.3f} ms CPU/trial, driver busy {cpu / wall:.0%} of one core, "
                  f"workers busy {farm.stats.busy_fraction:.0%} of their time")
            print(f"  -> one driver can feed about {workers / max(cpu / wall, 1e-9):.0f} workers of "
                  f"{build_secs * 1e3:.0f} ms trials")
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("speedup", "driver", "scale", "all"), default="all")
    p.add_argument("--candidates", choices=("tilings", "auto", "both"), default="both",
                   help="speedup part: 26 ms trials (36 tilings of a 64^3 matmul), tuning-sized trials "
                        "(36 auto-space samples of a 128^3 matmul), or both")
    p.add_argument("--rounds", type=int, default=6, help="speedup part: rounds (medians reported)")
    a = p.parse_args()
    if a.part in ("speedup", "all"):
        for kind in (("tilings", "auto") if a.candidates == "both" else (a.candidates,)):
            part_speedup(a.rounds, kind)
    if a.part in ("driver", "all"):
        part_driver()
    if a.part in ("scale", "all"):
        part_scale()


if __name__ == "__main__":
    main()
