"""The MLC course's auto-tuning flow on tunefarm, step by step (course notes, section 5).

1. A 128 x 128 x 128 matmul written in TVMScript (``MyModule``).
2. ``stochastic_schedule_mm``: a *stochastic* schedule, each call samples a tiling of ``j``.
3. ``random_search``: the course's hand-written search loop (build, time, keep the best).
4. ``tunefarm.tune``: the same space searched by the farm (the course's ``ms.tune_tir``), with the
   MetaSchedule-like task table in the log, then ``tunefarm.compile(..., database=...)`` (the course's
   ``compile_tir``: the best trace applied and built).
5. The auto space (no ``space=``): tunefarm generates the space itself (the course's auto-scheduling).

Run:  python examples/tune_matmul.py [--trials 64] [--db tune.sqlite] [--farm local|ray]
"""
from __future__ import annotations

import argparse
import logging
import os
import tempfile

import numpy as np

import tunefarm
from tunefarm.script import T, ir_module


@ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def stochastic_schedule_mm(sch: tunefarm.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def random_search(mod, a_nd, b_nd, c_nd, target, num_trials=10):
    """The course's loop: sample, build, time, keep the fastest."""
    best_result = None
    best_sch = None
    for i in range(num_trials):
        sch = stochastic_schedule_mm(tunefarm.Schedule(mod))
        lib = tunefarm.compile(sch.mod, target=target)
        f_timer_after = lib.time_evaluator("main", number=10, repeat=3)
        result = f_timer_after(a_nd, b_nd, c_nd).mean
        print("==========Attempt %d, time-cost: %.3f ms====" % (i, result * 1000))
        print(sch.trace)
        if best_result is None or result < best_result:
            best_result = result
            best_sch = sch
    return best_sch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--db", default=None, help="trace database (default: a temporary file)")
    ap.add_argument("--farm", choices=("local", "ray"), default="local")
    ap.add_argument("--skip-auto", action="store_true", help="skip step 5 (the auto space)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
    target = tunefarm.Target("llvm -num-cores=1")
    db_path = args.db or os.path.join(tempfile.mkdtemp(prefix="tune_matmul-"), "tune.sqlite")

    a_np = np.random.rand(128, 128).astype("float32")
    b_np = np.random.rand(128, 128).astype("float32")
    c_mm = a_np @ b_np

    print("--- 2. one sample of the stochastic schedule")
    sch = stochastic_schedule_mm(tunefarm.Schedule(MyModule))
    print(sch.trace)

    print("--- 3. random search (the course's loop)")
    c_nd = np.zeros((128, 128), dtype="float32")
    best = random_search(MyModule, a_np, b_np, c_nd, target, num_trials=5)
    print(best.trace)

    with tunefarm.farm.create(args.farm, target=target) as farm:
        print("--- 4. tune with the course's space")
        database = tunefarm.tune(MyModule, target=target, max_trials=args.trials, trials_per_round=args.trials,
                                 space=stochastic_schedule_mm, database=db_path, farm=farm, seed=0).database
        lib = tunefarm.compile(MyModule, database=database, target=target)
        c_nd = np.zeros((128, 128), dtype="float32")
        lib["main"](a_np, b_np, c_nd)
        np.testing.assert_allclose(c_nd, c_mm, rtol=1e-5)
        rec = database.best(MyModule["main"], target=str(target))
        print(f"best of the course's space: {rec.median_us:.2f} us")
        print(rec.trace)

        if not args.skip_auto:
            print("--- 5. tune with the auto space")
            result = tunefarm.tune(MyModule, target=target, max_trials=2 * args.trials, trials_per_round=32,
                                   database=db_path, farm=farm, seed=0, task_name="main_auto")
            lib = tunefarm.compile(MyModule, database=result.database, target=target)
            c_nd = np.zeros((128, 128), dtype="float32")
            lib["main"](a_np, b_np, c_nd)
            np.testing.assert_allclose(c_nd, c_mm, rtol=1e-5)
            print(f"best of the auto space: {result.best_latency_us:.2f} us "
                  f"({result.trials} trials, {result.trials_per_second:.1f} trials/s)")
            print(result.best_trace)
    print(f"records are in {db_path}")


if __name__ == "__main__":
    main()
