"""Evolutionary search guided by the cost model (MetaSchedule's ``EvolutionarySearch``, sized for Python).

Each round:
1. ``fresh_factor * n`` fresh samples of the space are scored by the cost model; the population starts from
   the fastest programs measured so far (this job and, via warm start, earlier ones in the database), the
   best still-unmeasured programs of the previous round, and the best-scored fresh samples;
2. a few generations: parents are drawn by predicted score (tournament), mutated with probability
   ``mutate_prob`` (a mutant edits one decision and is replayed; if it no longer fits, the parent survives),
   and the next population keeps the best-scored unique programs (by program hash);
3. the batch, never-measured programs only (the dedup includes every program hash the database already
   holds for this workload, so a resumed job never re-measures one): the best predicted of the evolved pool
   (exploitation), an ``explore_share`` of the best-predicted *fresh* samples (exploration screened by the
   model: mutation alone settles in flat regions where many neighbours predict alike), and an
   ``eps_greedy`` share of unscreened fresh samples.

Spaces with several sketches (write cache or not, packing, rfactor) need one more kind of exploration: a
cost model trained on a few unlucky samples of a sketch can write the whole sketch off, and the search then
never measures it again. So each round every *open* sketch gets ``sketch_quota`` places for its best-predicted
program: a sketch is open until it has ``sketch_min_samples`` successful measurements, and stays open while
its best is within ``sketch_keep_ratio`` of the best of all.

Until the cost model is trained (too few measurements) the batch is random fresh samples.
"""
from __future__ import annotations

import math
import random

from .mutators import default_mutators, mutate
from .program import Program, sketch_key
from .strategy import SearchStrategy


class EvolutionarySearch(SearchStrategy):
    name = "evolutionary"

    def __init__(self, task, cost_model, features=None, population_size: int = 64, generations: int = 2,
                 mutate_prob: float = 0.85, eps_greedy: float = 0.05, init_measured: int = 16, carry_over: int = 32,
                 fresh_per_round: int | None = None, fresh_factor: int = 2, explore_share: float = 0.4,
                 mutators=None, seed: int = 0, max_attempts: int = 512,
                 sketch_quota: int | None = None, sketch_min_samples: int = 8, sketch_keep_ratio: float = 1.25):
        super().__init__(task, cost_model, features, max_attempts)
        self.population_size = population_size
        self.generations = generations
        self.mutate_prob = mutate_prob
        self.eps_greedy = eps_greedy
        self.init_measured = init_measured
        self.carry_over = carry_over
        self.fresh_per_round = fresh_per_round
        self.fresh_factor = fresh_factor
        self.explore_share = explore_share
        self.mutators = list(mutators) if mutators is not None else default_mutators()
        self.rng = random.Random(seed)
        self._carry: list[Program] = []
        self.last_stats: dict = {}
        self.sketch_quota = sketch_quota
        self.sketch_min_samples = sketch_min_samples
        self.sketch_keep_ratio = sketch_keep_ratio
        self._sketches: dict = {}  # sketch key -> [successful measurements, best latency]

    def notify(self, programs, latencies) -> None:
        super().notify(programs, latencies)
        for p, lat in zip(programs, latencies):
            st = self._sketches.setdefault(sketch_key(p.design), [0, math.inf])
            if lat is not None:
                st[0] += 1
                st[1] = min(st[1], lat)

    def _open_sketches(self, keys) -> set:
        best = min((st[1] for st in self._sketches.values()), default=math.inf)
        out = set()
        for key in keys:
            n, lat = self._sketches.get(key, (0, math.inf))
            if n < self.sketch_min_samples or lat <= self.sketch_keep_ratio * best:
                out.add(key)
        return out

    # ---------------------------------------------------------------------------------------------------
    def _mutant(self, parent: Program) -> Program | None:
        edit = mutate(parent.design, self.rng, self.mutators, self.task.func)
        if edit is None:
            return None
        index, decision = edit
        try:
            design = parent.design.with_decision(index, decision)
        except ValueError:
            return None
        return self.task.from_design(design)

    def _pick(self, pop: list[Program]) -> Program:
        a, b = self.rng.choice(pop), self.rng.choice(pop)
        return a if (a.score or 0.0) >= (b.score or 0.0) else b

    def propose(self, n: int) -> list[Program]:
        known = self.task.known_hashes
        model_ready = self.cost_model is not None and self.cost_model.is_trained
        if not model_ready:
            out = self.fresh(n)
            if not out:
                self.exhausted = True
            return out

        # 1. fresh samples of the whole space, scored; the best of them join the measured best and the
        #    promising leftovers of the last round in the initial population
        n_fresh = self.fresh_per_round if self.fresh_per_round is not None else \
            max(self.fresh_factor * n, self.population_size // 2)
        seeds: dict[str, Program] = {}
        for _, p in self.task.best[: self.init_measured]:
            seeds.setdefault(p.hash, p)
        for p in self._carry[: self.carry_over]:
            if p.hash not in known:
                seeds.setdefault(p.hash, p)
        fresh = self.fresh(n_fresh, exclude=set(seeds), attempts=max(4 * n_fresh, 64))
        self.score(fresh)
        fresh.sort(key=lambda p: -(p.score or 0.0))
        for p in fresh[: max(0, self.population_size - len(seeds))]:
            seeds.setdefault(p.hash, p)
        pop = list(seeds.values())
        if not pop:
            self.exhausted = True
            return []
        self.score(pop)
        pool: dict[str, Program] = {p.hash: p for p in pop if p.hash not in known}

        # 2. generations
        n_mutants = n_invalid = 0
        for _ in range(self.generations):
            children: dict[str, Program] = {}
            for _ in range(self.population_size):
                parent = self._pick(pop)
                child = None
                if self.rng.random() < self.mutate_prob:
                    child = self._mutant(parent)
                    n_mutants += 1
                    if child is None:
                        n_invalid += 1
                children.setdefault((child or parent).hash, child or parent)
            new = list(children.values())
            self.score(new)
            for p in new:
                if p.hash not in known:
                    pool.setdefault(p.hash, p)
            merged = {p.hash: p for p in pop}
            merged.update(children)
            pop = sorted(merged.values(), key=lambda p: -(p.score or 0.0))[: self.population_size]

        # 3. the batch: a place for each open sketch; the best predicted of the evolved pool (exploitation);
        #    the best predicted fresh samples (exploration the model screens); a few unscreened fresh ones
        ranked = sorted(pool.values(), key=lambda p: -(p.score or 0.0))
        n_random = int(round(n * self.eps_greedy))
        n_explore = int(round(n * self.explore_share))
        out: list[Program] = []
        chosen: set[str] = set()

        def take(p) -> None:
            out.append(p)
            chosen.add(p.hash)

        by_sketch: dict = {}
        for p in ranked:
            by_sketch.setdefault(sketch_key(p.design), []).append(p)
        if len(by_sketch) > 1:
            quota = self.sketch_quota if self.sketch_quota is not None else max(1, n // 16)
            open_ = self._open_sketches(by_sketch)
            for key, progs in by_sketch.items():
                if key in open_:
                    for p in progs[:quota]:
                        if len(out) < n - n_random - n_explore:
                            take(p)
        for p in ranked:
            if len(out) >= n - n_random - n_explore:
                break
            if p.hash not in chosen:
                take(p)
        for p in fresh:  # already sorted by score
            if len(out) >= n - n_random:
                break
            if p.hash not in chosen and p.hash not in known:
                take(p)
        spare = [p for p in fresh if p.hash not in chosen and p.hash not in known]
        self.rng.shuffle(spare)
        for p in spare:
            if len(out) >= n:
                break
            take(p)
        for p in ranked:  # fill up when the space ran short of fresh programs
            if len(out) >= n:
                break
            if p.hash not in chosen:
                take(p)
        self._carry = [p for p in ranked if p.hash not in chosen][: self.carry_over]
        self.last_stats = {"population": len(pop), "pool": len(pool), "mutants": n_mutants,
                           "invalid_mutants": n_invalid, "fresh": len(fresh)}
        if not out:
            self.exhausted = True
        return out
