"""Evolutionary search guided by the cost model (MetaSchedule's ``EvolutionarySearch``, sized for Python).

Each round:
1. ``fresh_factor * n`` fresh samples of the space are scored by the cost model; the population starts from
   the fastest programs measured so far (this job and, via warm start, earlier ones in the database), the
   best still-unmeasured programs of the previous round, and the best-scored fresh samples. Fresh samples a
   round leaves unmeasured are still unbiased draws of the space, so up to half of the next round's are
   those (re-scored by the retrained model), the rest newly drawn: sampling and postprocessing a program
   was the largest part of the driver's CPU per trial;
2. a few generations: parents are drawn by *fitness* (tournament), mutated with probability ``mutate_prob``
   (a mutant edits one decision and is replayed; if it no longer fits, the parent survives), and the next
   population keeps the fittest unique programs (by program hash). Fitness is the measurement for a measured
   program (``log(best / latency)``, the scale the regression model predicts) and the prediction otherwise:
   the model can rank a measured near-best program below strangers it overrates, and then the search stops
   breeding from what it knows is good;
3. local exploitation: ``local_tries`` mutants of the ``local_parents`` fastest measured programs, scored;
4. the batch, never-measured programs only (the dedup includes every program hash the database already
   holds for this workload, so a resumed job never re-measures one): a ``local_share`` of the best-predicted
   neighbours of the fastest measured programs (the region the measurements, not only the model, say is
   good), up to ``sketch_quota`` places for sketches still under-explored (below), the best predicted of the
   evolved pool (exploitation), an ``explore_share`` of the best-predicted *fresh* samples (exploration the
   model screens: mutation alone settles in flat regions where many neighbours predict alike), and an
   ``eps_greedy`` share of unscreened fresh samples.

Spaces with several sketches (write cache or not, packing, rfactor) need one more kind of exploration: a
cost model trained on a few unlucky samples of a sketch can write the whole sketch off, and the search then
never measures it again. A sketch is *open* until it has ``sketch_min_samples`` successful measurements, and
stays open while its best is within ``sketch_keep_ratio`` of the best of all; each round the least-measured
open sketches other than the best program's get one place each for their best-predicted program, at most
``sketch_quota`` places (default n/8; one place per open sketch per round took 3-5 of 16 places on matmul).

Until the cost model is trained (too few measurements) the batch is random fresh samples. ``last_stats``
tells what the last round did, including ``sources``: program hash -> which part of the batch chose it.
"""
from __future__ import annotations

import math
import random

from .mutators import default_mutators, local_mutators, mutate
from .program import Program, sketch_key
from .strategy import SearchStrategy


class EvolutionarySearch(SearchStrategy):
    name = "evolutionary"

    def __init__(self, task, cost_model, features=None, population_size: int = 64, generations: int = 2,
                 mutate_prob: float = 0.85, eps_greedy: float = 0.05, init_measured: int = 16, carry_over: int = 32,
                 fresh_per_round: int | None = None, fresh_factor: int = 2, explore_share: float = 0.4,
                 mutators=None, seed: int = 0, max_attempts: int = 512,
                 sketch_quota: int | None = None, sketch_min_samples: int = 8, sketch_keep_ratio: float = 1.25,
                 local_share: float = 0.3, local_parents: int = 8, local_tries: int | None = None,
                 local_gentle: bool = True):
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
        self._spare_fresh: list[Program] = []  # unmeasured fresh samples of the last round
        self.last_stats: dict = {}
        self.sketch_quota = sketch_quota
        self.sketch_min_samples = sketch_min_samples
        self.sketch_keep_ratio = sketch_keep_ratio
        self._sketches: dict = {}  # sketch key -> [successful measurements, best latency]
        self.local_share = local_share
        self.local_parents = local_parents
        self.local_tries = local_tries
        self.local_mutators = local_mutators() if local_gentle else self.mutators
        self._measured: dict = {}  # program hash -> measured latency (s) of successful programs

    def notify(self, programs, latencies) -> None:
        super().notify(programs, latencies)
        for p, lat in zip(programs, latencies):
            if lat is not None:
                self._measured[p.hash] = lat
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
    def _mutant(self, parent: Program, mutators=None) -> Program | None:
        edit = mutate(parent.design, self.rng, mutators or self.mutators, self.task.func)
        if edit is None:
            return None
        index, decision = edit
        try:
            design = parent.design.with_decision(index, decision)
        except ValueError:
            return None
        return self.task.from_design(design)

    def _fitness(self, p: Program) -> float:
        """How good ``p`` is believed to be: its measurement when it has one, else the model's prediction.

        The regression model predicts ``log(best latency / latency)``, so a measured program gets exactly that
        from its own measurement: parents are then chosen by what is known, not by what the model thinks of
        programs it has already seen (it can rank a measured near-best program below overrated strangers).
        """
        lat = self._measured.get(p.hash)
        if lat is not None and self.task.best and getattr(self.cost_model, "predicts_log_throughput", False):
            return math.log(self.task.best[0][0] / lat)
        return p.score or 0.0

    def _pick(self, pop: list[Program]) -> Program:
        a, b = self.rng.choice(pop), self.rng.choice(pop)
        return a if self._fitness(a) >= self._fitness(b) else b

    def _neighbours(self, known: set) -> list[Program]:
        """Unmeasured mutants of the fastest measured programs, best predicted first (local exploitation)."""
        parents = [p for _, p in self.task.best[: self.local_parents]]
        if not parents:
            return []
        tries = self.local_tries if self.local_tries is not None else max(len(parents), self.population_size // 2)
        out: dict[str, Program] = {}
        for k in range(tries):
            child = self._mutant(parents[k % len(parents)], self.local_mutators)
            if child is not None and child.hash not in known:
                out.setdefault(child.hash, child)
        progs = list(out.values())
        self.score(progs)
        progs.sort(key=lambda p: -(p.score or 0.0))
        return progs

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
        reused = [p for p in self._spare_fresh if p.hash not in known and p.hash not in seeds][: n_fresh // 2]
        fresh = reused + self.fresh(n_fresh - len(reused), exclude=set(seeds) | {p.hash for p in reused},
                                    attempts=max(4 * n_fresh, 64))
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
            pop = sorted(merged.values(), key=lambda p: -self._fitness(p))[: self.population_size]
        local = self._neighbours(known) if self.local_share > 0 else []
        for p in local:
            pool.setdefault(p.hash, p)

        # 3. the batch: a place for each open sketch; the best predicted of the evolved pool (exploitation);
        #    the best predicted fresh samples (exploration the model screens); a few unscreened fresh ones
        ranked = sorted(pool.values(), key=lambda p: -(p.score or 0.0))
        n_random = int(round(n * self.eps_greedy))
        n_explore = int(round(n * self.explore_share))
        n_local = int(round(n * self.local_share))
        out: list[Program] = []
        chosen: set[str] = set()

        sources: dict = {}

        def take(p, source: str) -> None:
            out.append(p)
            chosen.add(p.hash)
            sources[p.hash] = source

        for p in local:
            if len(out) >= min(n_local, n - n_random - n_explore):
                break
            if p.hash not in chosen:
                take(p, "local")
        by_sketch: dict = {}
        for p in ranked:
            by_sketch.setdefault(sketch_key(p.design), []).append(p)
        if len(by_sketch) > 1:
            # the least-measured open sketches first, one place each, at most ``sketch_quota`` places in all;
            # the sketch of the best program needs none (exploitation already works there)
            quota = self.sketch_quota if self.sketch_quota is not None else max(1, n // 8)
            best_key = sketch_key(self.task.best[0][1].design) if self.task.best else None
            open_ = sorted((k for k in self._open_sketches(by_sketch) if k != best_key),
                           key=lambda k: self._sketches.get(k, (0,))[0])
            for key in open_[:quota]:
                p = by_sketch[key][0]
                if len(out) < n - n_random - n_explore and p.hash not in chosen:
                    take(p, "sketch")
        for p in ranked:
            if len(out) >= n - n_random - n_explore:
                break
            if p.hash not in chosen:
                take(p, "exploit")
        for p in fresh:  # already sorted by score
            if len(out) >= n - n_random:
                break
            if p.hash not in chosen and p.hash not in known:
                take(p, "explore")
        spare = [p for p in fresh if p.hash not in chosen and p.hash not in known]
        self.rng.shuffle(spare)
        for p in spare:
            if len(out) >= n:
                break
            take(p, "random")
        for p in ranked:  # fill up when the space ran short of fresh programs
            if len(out) >= n:
                break
            if p.hash not in chosen:
                take(p, "fill")
        self._carry = [p for p in ranked if p.hash not in chosen][: self.carry_over]
        self._spare_fresh = [p for p in fresh if p.hash not in chosen]
        self.rng.shuffle(self._spare_fresh)
        self.last_stats = {"population": len(pop), "pool": len(pool), "mutants": n_mutants,
                           "invalid_mutants": n_invalid, "fresh": len(fresh), "fresh_reused": len(reused),
                           "sources": sources}
        if not out:
            self.exhausted = True
        return out
