"""Re-time the best stored kernel of each workload on this machine, next to its unscheduled program.

``tunefarm bench --db tune.sqlite`` answers the question a tuning job leaves open: how fast are the stored
winners *here and now*, and how much did tuning buy? Each workload's best record for a target this CPU can
run is rebuilt from its trace, checked against the unscheduled program on the same inputs, and timed in
alternating rounds with the unscheduled build (so both see the same machine noise) while it holds the host's
timing slots (``farm/quiet_host.py``: no farm worker here times meanwhile, as for a confirmation); the table
reports medians, the speed-up and GFLOP/s. Nothing is written to the database.
"""
from __future__ import annotations

import json
import statistics

from ..database import best_schedule
from ..farm.check import compare_output, make_arrays, output_params
from ..farm.measure import rewrite_layout_free
from ..farm.quiet_host import quiet_host
from ..ir.serialize import from_json
from ..runtime import aligned, build
from ..target import Target, matching_target


def _median_us(fn, arrays, rounds: int, min_ms: float) -> float:
    timer = fn.time_evaluator(number=1, repeat=rounds, min_repeat_ms=min_ms)
    return statistics.median(timer(*arrays).results) * 1e6


def bench_best(db, workload: str | None = None, target: str | None = None, rounds: int = 7,
               min_repeat_ms: float = 20.0) -> list[dict]:
    """One row per (workload, target) benchmarked; targets this CPU cannot run are skipped."""
    keys = [db.get_workload(workload).key] if workload else list(db.workloads()["key"])
    rows = []
    for key in keys:
        info = db.get_workload(key)
        func = from_json(json.loads(info.ir_json) if isinstance(info.ir_json, str) else info.ir_json)
        for t in ([matching_target(target, db.targets(key))] if target else db.targets(key)):
            tgt = Target(t)
            if not tgt.is_host_compatible():
                continue
            best = best_schedule(db, func, t)
            if best is None:
                continue
            # constant weights (layout_free_buffers) packed the way the job measured them
            scheduled, packers = rewrite_layout_free(best.func)
            tuned = build(scheduled, tgt)["main"]
            plain = build(func, tgt)["main"]
            arrays = make_arrays(func, key)
            expect = [aligned.copy(a) for a in arrays]  # on cache lines, as the farm timed them
            got = [aligned.copy(a) for a in arrays]
            for i, pack in packers:
                got[i] = aligned.copy(pack(got[i]))
            plain(*expect)
            tuned(*got)
            problems = [p for i in output_params(func) if (p := compare_output(
                func.params[i].name, got[i], expect[i], "the unscheduled program")) is not None]
            tuned_us, plain_us = [], []
            with quiet_host():  # no farm worker of this host times beside it, as for a confirmation
                for _ in range(3):  # alternate, so both builds see the same machine
                    tuned_us.append(_median_us(tuned, got, rounds, min_repeat_ms))
                    plain_us.append(_median_us(plain, expect, rounds, min_repeat_ms))
            t_us, p_us = statistics.median(tuned_us), statistics.median(plain_us)
            rows.append({"workload": info.name, "target": t, "tuned_us": t_us, "untuned_us": p_us,
                         "speedup": p_us / t_us, "stored_us": best.record.median_us,
                         "gflops": (info.flop / (t_us * 1e3)) if info.flop else float("nan"),
                         "check": "ok" if not problems else problems[0], "trials": db.count_records(key, target=t)})
    return rows

