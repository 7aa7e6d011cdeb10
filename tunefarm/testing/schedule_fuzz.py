"""Differential schedule fuzzer: random schedules of small programs, built with LLVM and run against the
unscheduled program's result.

Each program tried is a random sequence of primitives (every primitive ``Schedule`` has, on random blocks
and loops, stale ones included); a request the schedule refuses (``ScheduleError``) leaves it unchanged.
What the schedule accepted is built for a multi-core target and run; a program with a ``parallel`` loop runs
``PARALLEL_RUNS`` times, each run on fresh arrays and compared with the reference, because a data race can
give the right answer once and a wrong one the next time. The reference is the unscheduled program run by
the numpy reference executor on the same inputs.

``python -m tunefarm.testing.schedule_fuzz --programs N --seed S`` prints programs tried, parallel programs,
runs and mismatches (and exits 1 on a mismatch).
"""
from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from ..codegen.code_size import CodeSizeError
from ..ir import stmt as S
from ..ir.structural import program_hash
from ..ir.stmt_functor import iter_stmts
from ..reference import interpret
from ..runtime.build_module import build
from ..schedule import Schedule, ScheduleError
from ..schedule.tree import block_names
from ..script import from_source
from .fuzz_programs import PROGRAMS

PARALLEL_RUNS = 20
TARGET = "llvm -num-cores=4"  # more threads than this host's cores: threads interleave, races show


class _Pools:
    """The random variables a sequence has produced (stale ones stay: using them must be refused)."""

    def __init__(self):
        self.blocks: list = []
        self.loops: list = []
        self.groups: list = []  # results of get_loops / split: candidates for fuse and reorder


def _block(rng: random.Random, sch: Schedule, pools: _Pools):
    if pools.blocks and rng.random() < 0.4:
        return rng.choice(pools.blocks)
    names = block_names(sch.mod["main"])
    if len(names) > 1 and rng.random() < 0.9:
        names.remove("root")
    rv = sch.get_block(rng.choice(names))
    pools.blocks.append(rv)
    return rv


def _loops_of(rng: random.Random, sch: Schedule, pools: _Pools, block) -> list:
    group = sch.get_loops(block)
    if group:
        pools.groups.append(group)
        pools.loops.extend(group)
    return group


def _loop(rng: random.Random, sch: Schedule, pools: _Pools):
    if not pools.loops or rng.random() < 0.5:
        group = _loops_of(rng, sch, pools, _block(rng, sch, pools))
        if group:
            return rng.choice(group)
        if not pools.loops:
            raise ScheduleError("fuzz", "no loops yet")
    return rng.choice(pools.loops)


def _near_loop(rng: random.Random, sch: Schedule, pools: _Pools, block, relation: str):
    """Mostly a loop of a consumer / producer of ``block`` (where compute_at may be legal)."""
    others = getattr(sch, relation)(block) if rng.random() < 0.8 else []
    if others:
        group = _loops_of(rng, sch, pools, rng.choice(others))
        if group:
            return rng.choice(group)
    return _loop(rng, sch, pools)


def _factors(rng: random.Random) -> list:
    factors = [rng.randint(1, 6) for _ in range(rng.randint(2, 3))]
    if rng.random() < 0.8:
        factors[rng.randrange(len(factors))] = None
    return factors


def _step(rng: random.Random, sch: Schedule, pools: _Pools) -> None:
    """One random primitive call. Long because it is one branch per primitive, each a few lines."""
    prim = rng.choice(_PRIMITIVES)
    if prim == "split":
        group = sch.split(_loop(rng, sch, pools), _factors(rng))
        pools.loops.extend(group)
        pools.groups.append(group)
    elif prim == "fuse":
        group = rng.choice(pools.groups) if pools.groups else [_loop(rng, sch, pools)]
        lo = rng.randrange(len(group))
        pools.loops.append(sch.fuse(*group[lo:rng.randint(lo + 1, len(group))]))
    elif prim == "reorder":
        group = rng.choice(pools.groups) if pools.groups and rng.random() < 0.8 else \
            [_loop(rng, sch, pools) for _ in range(2)]
        chosen = rng.sample(group, min(len(group), rng.randint(2, 4)))
        rng.shuffle(chosen)
        sch.reorder(*chosen)
    elif prim in ("parallel", "vectorize", "unroll"):
        getattr(sch, prim)(_loop(rng, sch, pools))
    elif prim in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, prim)(_block(rng, sch, pools))
    elif prim in ("compute_at", "reverse_compute_at"):
        block = _block(rng, sch, pools)
        loop = _near_loop(rng, sch, pools, block, "get_consumers" if prim == "compute_at" else "get_producers")
        getattr(sch, prim)(block, loop, preserve_unit_loops=rng.random() < 0.5)
    elif prim in ("cache_read", "cache_write"):
        block = _block(rng, sch, pools)
        n = len(sch.get(block).reads if prim == "cache_read" else sch.get(block).writes)
        pools.blocks.append(getattr(sch, prim)(block, rng.randrange(max(n, 1)), rng.choice(["local", "global"])))
    elif prim == "decompose_reduction":
        block = _block(rng, sch, pools)
        pools.blocks.append(sch.decompose_reduction(block, rng.choice(_loops_of(rng, sch, pools, block) or
                                                                      [_loop(rng, sch, pools)])))
    elif prim == "rfactor":
        pools.blocks.append(sch.rfactor(_loop(rng, sch, pools), rng.randint(0, 1)))
    elif prim == "annotate":
        sch.annotate(_loop(rng, sch, pools), "pragma_auto_unroll_max_step", rng.choice([0, 16, 64]))
    elif prim == "unannotate":
        sch.unannotate(_loop(rng, sch, pools), "pragma_auto_unroll_max_step")
    elif prim == "sample_compute_location":
        block = _block(rng, sch, pools)
        sch.compute_at(block, sch.sample_compute_location(block))


_PRIMITIVES = ["split", "split", "fuse", "reorder", "reorder", "parallel", "parallel", "vectorize", "unroll",
               "compute_inline", "reverse_compute_inline", "compute_at", "reverse_compute_at", "cache_read",
               "cache_write", "decompose_reduction", "rfactor", "annotate", "unannotate", "sample_compute_location"]


def random_schedule(rng: random.Random, func, max_steps: int = 10) -> tuple[Schedule, int]:
    """A random schedule of ``func`` and the number of requests it refused."""
    sch = Schedule(func, seed=rng.randrange(1 << 30))
    pools = _Pools()
    refused = 0
    for _ in range(rng.randint(1, max_steps)):
        try:
            _step(rng, sch, pools)
        except ScheduleError:
            refused += 1
    return sch, refused


def has_parallel_loop(func) -> bool:
    return any(isinstance(s, S.For) and s.kind == "parallel" for s in iter_stmts(func.body))


class Reference:
    """Inputs and the unscheduled program's outputs for one program (numpy reference executor)."""

    def __init__(self, func, seed: int):
        rng = np.random.default_rng(seed)
        self.arrays = [rng.standard_normal(p.const_shape()).astype(p.dtype) for p in func.params]
        expected = self.fresh()
        interpret(func, *expected)
        self.expected = expected

    def fresh(self) -> list:
        return [a.copy() for a in self.arrays]

    def mismatch(self, got: list) -> str | None:
        for k, (g, want) in enumerate(zip(got, self.expected)):
            if not np.allclose(g, want, rtol=1e-4, atol=1e-4):
                return f"argument {k}: largest difference {float(np.abs(g - want).max())}"
        return None


class Stats:
    def __init__(self):
        self.programs = 0
        self.builds = 0
        self.too_large = 0  # refused by the build's code-size bound (an unrolled loop too large): expected
        self.refused_requests = 0
        self.parallel_programs = 0
        self.runs = 0
        self.mismatches: list = []
        self.build_errors: list = []

    def report(self) -> str:
        return (f"programs tried: {self.programs}\ndistinct programs built: {self.builds}\n"
                f"requests refused: {self.refused_requests}\n"
                f"parallel programs: {self.parallel_programs}\nruns: {self.runs}\n"
                f"builds refused for code size: {self.too_large}\n"
                f"build errors: {len(self.build_errors)}\nmismatches: {len(self.mismatches)}")


class _Built:
    """Built functions, by program (random sequences often arrive at the same program: it is run again, not
    rebuilt); ``failed`` remembers programs that do not build.

    Every module built stays loaded until the run ends, then ``release`` closes the engines: a dropped
    ``Module`` would be freed by the cycle collector (it and its functions refer to each other), which runs
    finalizers in no fixed order and so could dispose an LLVM context before the engine owning a module in
    it. A precaution: no such crash has been traced to it."""

    def __init__(self):
        self.functions: dict = {}
        self.failed: set = set()
        self.modules: list = []

    def get(self, key):
        return self.functions.get(key)

    def put(self, key, fn) -> None:
        self.functions[key] = fn
        if not self.modules or self.modules[-1] is not fn.module:
            self.modules.append(fn.module)

    def release(self) -> None:
        """Close every engine now, each before its LLVM context could be finalized."""
        for mod in self.modules:
            mod._loaded.close()  # noqa: SLF001 - the runtime has no public close; see the class docstring
        self.modules.clear()
        self.functions.clear()


class Candidate:
    """One program tried: the base program's name, its random schedule and the scheduled function."""

    def __init__(self, name: str, sch: Schedule):
        self.name = name
        self.sch = sch
        self.func = sch.mod["main"]
        self.key = (name, program_hash(self.func))


def _build_one(c: Candidate, stats: Stats, built: _Built) -> None:
    try:
        built.put(c.key, build({"p": c.func}, TARGET)["p"])
        stats.builds += 1
    except CodeSizeError:
        built.failed.add(c.key)
        stats.too_large += 1
    except Exception as exc:  # noqa: BLE001 - any build failure of an accepted schedule is reported
        built.failed.add(c.key)
        stats.build_errors.append((c.name, str(c.sch.trace), f"{type(exc).__name__}: {exc}"))


def _build_batch(cands: list, stats: Stats, built: _Built) -> None:
    """Build the programs not built yet as the functions of one module (LLVM's fixed cost per module is
    most of a small program's build); when that fails, one by one, to tell which program does not build."""
    todo: dict = {}
    for c in cands:
        if c.key not in built.failed and built.get(c.key) is None:
            todo.setdefault(c.key, c)
    if not todo:
        return
    named = {f"p{k}": c.func for k, c in enumerate(todo.values())}
    try:
        mod = build(named, TARGET)
    except Exception:  # noqa: BLE001 - which program failed, and how, is found out one by one
        for c in todo.values():
            _build_one(c, stats, built)
        return
    for k, c in enumerate(todo.values()):
        built.put(c.key, mod[f"p{k}"])
        stats.builds += 1


def _run(c: Candidate, ref: Reference, stats: Stats, built: _Built) -> None:
    fn = built.get(c.key)
    if fn is None:
        return  # did not build (counted when it was built)
    runs = 1
    if has_parallel_loop(c.func):
        stats.parallel_programs += 1
        runs = PARALLEL_RUNS
    for _ in range(runs):
        args = ref.fresh()
        fn(*args)
        stats.runs += 1
        why = ref.mismatch(args)
        if why:
            stats.mismatches.append((c.name, str(c.sch.trace), why))
            return


def check_programs(cands: list, refs: dict, stats: Stats, built: _Built) -> None:
    """Build the candidates, run each (``PARALLEL_RUNS`` times if it has a parallel loop) and compare."""
    _build_batch(cands, stats, built)
    for c in cands:
        _run(c, refs[c.name], stats, built)


def fuzz(n_programs: int, seed: int, progress_every: int = 0, max_seconds: float | None = None,
         batch: int = 32) -> Stats:
    """Try ``n_programs`` random schedules (fewer if ``max_seconds`` runs out first: the figures then say how
    many were tried)."""
    rng = random.Random(seed)
    funcs = {name: from_source(src) for name, src in PROGRAMS.items()}
    refs = {name: Reference(f, seed) for name, f in funcs.items()}
    stats = Stats()
    built = _Built()
    t0 = time.monotonic()
    try:
        _fuzz_loop(n_programs, max_seconds, batch, rng, funcs, refs, stats, built, progress_every, t0)
    finally:
        built.release()
    return stats


def _fuzz_loop(n_programs, max_seconds, batch, rng, funcs, refs, stats, built, progress_every, t0) -> None:
    names = sorted(funcs)
    done = 0
    while done < n_programs and (max_seconds is None or time.monotonic() - t0 < max_seconds):
        cands = []
        for i in range(done, min(done + batch, n_programs)):
            name = names[i % len(names)]
            sch, refused = random_schedule(rng, funcs[name])
            stats.programs += 1
            stats.refused_requests += refused
            cands.append(Candidate(name, sch))
        check_programs(cands, refs, stats, built)
        if progress_every and done // progress_every != (done + len(cands)) // progress_every:
            print(f"[{time.monotonic() - t0:.0f}s] {stats.programs} programs, {stats.parallel_programs} "
                  f"parallel, {stats.runs} runs, {len(stats.mismatches)} mismatches", file=sys.stderr, flush=True)
        done += len(cands)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--progress-every", type=int, default=0)
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="stop starting new programs after this long (the figures say how many were tried)")
    args = ap.parse_args(argv)
    max_seconds = None if args.max_minutes is None else args.max_minutes * 60
    stats = fuzz(args.programs, args.seed, args.progress_every, max_seconds)
    print(f"seed: {args.seed}")
    print(stats.report())
    for name, trace, why in stats.mismatches[:5]:
        print(f"MISMATCH {name}: {why}\n{trace}")
    for name, trace, why in stats.build_errors[:5]:
        print(f"BUILD ERROR {name}: {why}\n{trace}")
    return 1 if stats.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
