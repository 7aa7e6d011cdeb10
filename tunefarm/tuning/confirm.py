"""Confirm the winner: re-time a workload's best programs together on one quiet host.

The farm's best is the fastest of many single measurements taken beside other work: the winner's figure holds
its luck and its neighbours' load (on a 16-core host with 14 workers the farm's bests read 1.06-1.13x slower
than one worker's). So when a job ends, and on demand (``tunefarm confirm``), the K best records of each
workload (default 5) are built again in this process and timed while this process holds every timing slot of
the host (``farm/quiet_host.py``): no farm worker times meanwhile.

The confirmed figure must hold what a later standalone timing of the program reads (``tunefarm bench``, a
``time_evaluator``). On a shared host that drifts from one timing session to the next -- other processes' load
comes and goes over seconds, a new load puts code and arrays at new addresses -- by 2-10% on a loaded 2-core VM
and by 3x under heavy load, while the blocks of one short session agree within a few percent. So the timing is
a series of sessions for ``WINDOW_S`` seconds, interleaved across the programs (session ``s`` starts at program
``s mod k``): in each, every program is loaded afresh from its object code, with fresh copies of its arrays,
warmed up and timed in up to ``BLOCKS`` blocks of back-to-back calls of at least ``BLOCK_MS``, the farm's. Each
program's median and p10-p90 are taken over the blocks of all its sessions, stored beside the farm's figure
(``database/confirmed.py``); ``best``, ``top_k`` and ``compile`` then rank by it.

Why short blocks: a block shorter than the scheduler's time slice either runs clean or holds a whole
preemption, so the low blocks read the program and the high ones the host's load, and a later timing in long
blocks (``tunefarm bench``'s 20 ms average the preemptions in) lands between them. Blocks of 5 ms on a loaded
host are all preempted alike: their spread is narrow at the load of the moment and missed a later timing (3
runs in 5 agreed). Why a window of time rather than a count of sessions: the spread must sample the load of
more than one moment, whatever the number and speed of the programs. It does not sample the load of a later
moment: on a host whose other users come and go over seconds, a window that happened to be quiet gives a
narrow spread that a later timing in a busy second misses (on a loaded 2-core VM a ``tunefarm bench`` a few
seconds later fell outside in about 1 check in 15).

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
WINDOW_S = 1.0       # sessions of one workload go on this long: the spread samples the host's load over it
MIN_SESSIONS = 2     # sessions kept even when a time budget cuts the window short
BLOCKS = 15          # blocks per program per session (fewer for a program whose call is long: SESSION_S)
SESSION_S = 0.015    # a slow program's blocks in one session last about this long (at least one block)
BLOCK_MS = 1.0       # one block: back-to-back calls for at least this long, the farm's (api.DEFAULT_MEASURE)
MIN_LEFT_S = 1.0     # a job's confirmation starts only with this much of its time budget left (builds take time)


@dataclasses.dataclass(frozen=True)
class ConfirmedProgram:
    record_id: int
    program_hash: str | None
    farm_secs: float        # the farm's median
    median_secs: float      # the confirmation's median over the blocks of all sessions
    p10_secs: float
    p90_secs: float
    samples: int            # blocks timed
    sessions: int


@dataclasses.dataclass
class Confirmation:
    """What confirming one workload on one target did (``skipped``: why it did nothing; ``failed``: record id ->
    why that program was left unconfirmed)."""

    workload: str
    target: str
    programs: list[ConfirmedProgram] = dataclasses.field(default_factory=list)
    failed: dict = dataclasses.field(default_factory=dict)
    skipped: str | None = None


@dataclasses.dataclass(frozen=True)
class BuiltProgram:
    """A record's program built once for its target; ``load`` gives a fresh copy of it to time."""

    artifact: object
    arrays: list        # inputs as the farm makes them (weights packed as the job measured them)

    def load(self):
        """``(function, arrays)``: the object code loaded anew (its own engine and addresses) and aligned copies
        of the arrays, as a later standalone timing of the program would have them."""
        return Module.from_artifact(self.artifact)["main"], [aligned.copy(a) for a in self.arrays]


def host_can_time(target_text: str) -> bool:
    """Whether this host's CPU is the one ``target_text`` names (core counts may differ: a build option)."""
    t, host = Target(target_text), Target.host()
    return t.cpu == host.cpu and t.features == host.features


def build_record(rec, func) -> BuiltProgram:
    """The record's program built for its target, with its arrays."""
    scheduled, packers = rewrite_layout_free(Schedule.from_trace(rec.trace, func).mod["main"])
    arrays = make_arrays(func, rec.workload_key)
    for i, pack in packers:
        arrays[i] = pack(arrays[i])
    return BuiltProgram(compile_funcs(scheduled, Target(rec.target), keep_ll=False), arrays)


def timing_sessions(programs: dict, window_s: float) -> dict[object, list[list[float]]]:
    """Per program (``key -> BuiltProgram``), its sessions' blocks in seconds per call: sessions for ``window_s``
    (at least ``MIN_SESSIONS``), in each every program loaded afresh, warmed up and timed in blocks of at least
    ``BLOCK_MS``. A program's first session times one block, which finds its calls per block (grown later when a
    block falls short); later sessions time as many blocks as fit in ``SESSION_S``, from 1 to ``BLOCKS``."""
    keys = list(programs)
    numbers = dict.fromkeys(keys, 1)
    blocks = dict.fromkeys(keys, 1)
    out: dict = {k: [] for k in keys}
    t0 = time.monotonic()
    s = 0
    while s < MIN_SESSIONS or time.monotonic() - t0 < window_s:
        start = s % len(keys)
        s += 1
        for k in keys[start:] + keys[:start]:
            fn, arrays = programs[k].load()
            res = fn.time_evaluator(number=numbers[k], repeat=blocks[k], min_repeat_ms=BLOCK_MS)(*arrays)
            numbers[k] = res.number
            # a block of more than one call lasts about BLOCK_MS; a program slower than that gets fewer blocks
            blocks[k] = BLOCKS if res.number > 1 else max(1, min(BLOCKS, int(SESSION_S / min(res.results))))
            out[k].append(list(res.results))
    return out


def confirm_workload(db, workload, target: str | None = None, top: int = DEFAULT_TOP) -> Confirmation:
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
            programs[rec.record_id] = build_record(rec, func)
        except Exception as e:  # noqa: BLE001 - a program that no longer builds stays unconfirmed
            out.failed[rec.record_id] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    if not programs:
        return out
    with quiet_host():
        timed = timing_sessions(programs, WINDOW_S)
    by_id = {r.record_id: r for r in recs}
    for rid, blocks in timed.items():
        secs = [b for session in blocks for b in session]
        p10, med, p90 = (float(v) for v in np.percentile(secs, [10, 50, 90]))
        out.programs.append(ConfirmedProgram(rid, by_id[rid].program_hash, by_id[rid].median_secs, med, p10, p90,
                                             len(secs), len(blocks)))
    db.store_confirmed([(p.record_id, p.median_secs, p.p10_secs, p.p90_secs) for p in out.programs])
    out.programs.sort(key=lambda p: p.median_secs)
    return out


def confirm(db, workload=None, target: str | None = None, top: int = DEFAULT_TOP) -> list[Confirmation]:
    """Confirm the best records of ``workload`` (every workload of the database when None) on ``target`` (each
    of its targets when None); returns what each confirmation did."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an integer >= 1, got {top!r}")
    keys = [db.get_workload(workload).key] if workload is not None else list(db.workloads()["key"])
    out = []
    for key in keys:
        for t in ([target] if target is not None else db.targets(key)):
            out.append(confirm_workload(db, key, t, top))
    return out


def confirm_tasks(db, keys: list[str], target: str, top: int, deadline: float | None) -> list[Confirmation]:
    """The end of a job: confirm each task's best, within what is left of a time budget (``deadline``, a
    ``time.monotonic()`` time; none once less than ``MIN_LEFT_S`` is left). A failure is logged, never raised: the job's
    records are stored already."""
    out = []
    for key in keys:
        if deadline is not None and deadline - time.monotonic() < MIN_LEFT_S:
            log.info("the best of %s is not confirmed: the time budget is spent (run tunefarm confirm)", key[:10])
            continue
        try:
            c = confirm_workload(db, key, target, top)
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
