"""Confirm the winner: re-time a workload's best programs together on one quiet host.

The farm's best is the fastest of many single measurements taken beside other work: the winner's figure holds
its luck and its neighbours' load (on a 16-core host with 14 workers the farm's bests read 1.06-1.13x slower
than one worker's). So when a job ends, and on demand (``tunefarm confirm``), the K best records of each
workload (default 5) are built again in this process and timed in interleaved rounds (every round times each
program once, in a rotated order, a block of calls of at least ``BLOCK_S``) while this process holds every
timing slot of the host (``farm/quiet_host.py``): no farm worker times meanwhile. Each program's rounds give a
median and a p10-p90 spread (each sample is one block as it ran, preempted or not: on a busy host the spread
says how far one timing of the program may stray, and a later timing of it lands inside; taking the fastest of
a few blocks per sample made a spread too narrow to hold the next session's figure, 2% off on a loaded VM),
stored beside the farm's figure (``database/confirmed.py``); ``best``, ``top_k`` and ``compile`` then rank by it.

A program is confirmed only on a host whose CPU is the record's target (else the workload is skipped, saying
so); a program that no longer replays or builds is left unconfirmed with its reason.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import time

import numpy as np

from ..codegen import compile_funcs
from ..farm.check import make_arrays
from ..farm.measure import rewrite_layout_free
from ..farm.quiet_host import quiet_host
from ..ir.serialize import from_json
from ..runtime import Module, aligned
from ..schedule import Schedule
from ..target import Target

log = logging.getLogger("tunefarm.tuning")

DEFAULT_TOP = 5
ROUNDS = 31          # rounds of the interleaved timing (a p10 and a p90 need a few dozen samples)
MIN_ROUNDS = 7       # rounds kept even when the time cap cuts the timing short
BLOCK_S = 0.005      # one sample: back-to-back calls lasting at least this long (timer and call overhead vanish,
                     # and a burst of another process's work on the core moves a few samples, not the median)
MAX_SECONDS = 10.0   # timing rounds of one workload stop after this long (past MIN_ROUNDS)
MIN_LEFT_S = 1.0     # a job's confirmation starts only with this much of its time budget left (builds take time)


@dataclasses.dataclass(frozen=True)
class ConfirmedProgram:
    record_id: int
    program_hash: str | None
    farm_secs: float        # the farm's median
    median_secs: float      # the confirmation's median over rounds
    p10_secs: float
    p90_secs: float
    rounds: int


@dataclasses.dataclass
class Confirmation:
    """What confirming one workload on one target did (``skipped``: why it did nothing; ``failed``: record id ->
    why that program was left unconfirmed)."""

    workload: str
    target: str
    programs: list[ConfirmedProgram] = dataclasses.field(default_factory=list)
    failed: dict = dataclasses.field(default_factory=dict)
    skipped: str | None = None


def host_can_time(target_text: str) -> bool:
    """Whether this host's CPU is the one ``target_text`` names (core counts may differ: a build option)."""
    t, host = Target(target_text), Target.host()
    return t.cpu == host.cpu and t.features == host.features


def _built(db, rec, func):
    """The record's program built for its target, and its arrays (inputs as the farm makes them)."""
    scheduled, packers = rewrite_layout_free(Schedule.from_trace(rec.trace, func).mod["main"])
    mod = Module.from_artifact(compile_funcs(scheduled, Target(rec.target), keep_ll=False))
    arrays = [aligned.copy(a) for a in make_arrays(func, rec.workload_key)]
    for i, pack in packers:
        arrays[i] = aligned.copy(pack(arrays[i]))
    return mod, arrays


def interleaved_rounds(programs: dict, rounds: int, max_seconds: float) -> dict[object, list[float]]:
    """Per-call seconds of every program, one sample per round, all in the same rounds (round ``r`` starts at
    program ``r mod k``); ``programs``: ``key -> (module, arrays)``. Stops after ``max_seconds`` once
    ``MIN_ROUNDS`` are in."""
    keys = list(programs)
    timers, numbers = {}, {}
    for k in keys:
        mod, arrays = programs[k]
        first = mod.time_evaluator("main", number=1, repeat=1, min_repeat_ms=BLOCK_S * 1e3)(*arrays)
        numbers[k] = first.number  # calls per block, calibrated once so every round times the same work
        timers[k] = mod.time_evaluator("main", number=first.number, repeat=1)
    samples: dict = {k: [] for k in keys}
    t0 = time.monotonic()
    for r in range(rounds):
        if r >= MIN_ROUNDS and time.monotonic() - t0 > max_seconds:
            break
        start = r % len(keys)
        for k in keys[start:] + keys[:start]:
            samples[k].append(timers[k](*programs[k][1], warm_up=False).results[0])
    return samples


def confirm_workload(db, workload, target: str | None = None, top: int = DEFAULT_TOP, rounds: int = ROUNDS,
                     max_seconds: float = MAX_SECONDS) -> Confirmation:
    """Confirm the ``top`` best records of one workload on one target (see module doc) and store the figures."""
    recs = db.top_k(workload, top, target=target)
    info = db.get_workload(workload)
    out = Confirmation(info.name, target or (recs[0].target if recs else ""))
    if not recs:
        out.skipped = "no successful record"
        return out
    if not host_can_time(recs[0].target):
        out.skipped = f"this host's CPU ({Target.host().label()}) is not the records' target"
        return out
    func = from_json(json.loads(info.ir_json))
    programs = {}
    for rec in recs:
        try:
            programs[rec.record_id] = _built(db, rec, func)
        except Exception as e:  # noqa: BLE001 - a program that no longer builds stays unconfirmed
            out.failed[rec.record_id] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    if not programs:
        return out
    with quiet_host():
        samples = interleaved_rounds(programs, rounds, max_seconds)
    by_id = {r.record_id: r for r in recs}
    for rid, secs in samples.items():
        p10, med, p90 = (float(v) for v in np.percentile(secs, [10, 50, 90]))
        out.programs.append(ConfirmedProgram(rid, by_id[rid].program_hash, by_id[rid].median_secs, med, p10, p90,
                                             len(secs)))
    db.store_confirmed([(p.record_id, p.median_secs, p.p10_secs, p.p90_secs) for p in out.programs])
    out.programs.sort(key=lambda p: p.median_secs)
    return out


def confirm(db, workload=None, target: str | None = None, top: int = DEFAULT_TOP, rounds: int = ROUNDS,
            max_seconds: float = MAX_SECONDS) -> list[Confirmation]:
    """Confirm the best records of ``workload`` (every workload of the database when None) on ``target`` (each
    of its targets when None); returns what each confirmation did."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an integer >= 1, got {top!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    keys = [db.get_workload(workload).key] if workload is not None else list(db.workloads()["key"])
    out = []
    for key in keys:
        for t in ([target] if target is not None else db.targets(key)):
            out.append(confirm_workload(db, key, t, top, rounds, max_seconds))
    return out


def confirm_tasks(db, keys: list[str], target: str, top: int, deadline: float | None) -> list[Confirmation]:
    """The end of a job: confirm each task's best, within what is left of a time budget (``deadline``, a
    ``time.monotonic()`` time; none once less than ``MIN_LEFT_S`` is left). A failure is logged, never raised: the job's
    records are stored already."""
    out = []
    for key in keys:
        left = MAX_SECONDS if deadline is None else min(MAX_SECONDS, deadline - time.monotonic())
        if left < MIN_LEFT_S:
            log.info("the best of %s is not confirmed: the time budget is spent (run tunefarm confirm)", key[:10])
            continue
        try:
            c = confirm_workload(db, key, target, top, ROUNDS, left)
        except Exception as e:  # noqa: BLE001 - the tuning results stand without their confirmation
            log.warning("confirming the best of %s failed: %s", key[:10], f"{e}".splitlines()[0][:300])
            continue
        if c.skipped:
            log.info("not confirmed %s: %s", c.workload, c.skipped)
        out.append(c)
    return out


def spread_text(median: float, p10: float, p90: float) -> str:
    """``12.3 us (p10-p90 12.1-12.9)``: a confirmed figure as the tables print it."""
    if not all(math.isfinite(v) for v in (median, p10, p90)):
        return "-"
    return f"{median * 1e6:.2f} us (p10-p90 {p10 * 1e6:.2f}-{p90 * 1e6:.2f})"
