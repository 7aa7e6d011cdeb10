"""The search strategies as the driver runs them: population, dedup, cost-model scores and the next pick.

``SearchStrategy`` is what the tuning job asks of the search of one task; ``create(kind, ...)`` makes
``"evolutionary"`` (``EvolutionarySearch``, the default) or ``"random"`` (``RandomSearch``, the course's
``random_search``).

MetaSchedule's ``EvolutionarySearch`` works in rounds: sample, evolve a population for a few generations, send a
batch, wait for all of it. Here nothing waits. Workers produce candidate programs (``generate.py``) in answer to
*requests* this object writes, and the driver picks one candidate at a time whenever a worker is free to
measure. The algorithm is the same steady-state evolution, continuous instead of generational:

- the **pool** holds every unmeasured candidate the workers sent back, scored by the newest cost model (stale
  scores are recomputed in one batched prediction before a pick); it keeps the best ``POOL_SIZE`` by score
  (more on a big farm: ``WORKER_POOL`` per worker, see ``pick``);
- the **population** is the ``POPULATION`` fittest programs of the pool and the measured ones. Fitness is the
  measurement for a measured program (``log(best / latency)``, the scale the regression model predicts) and the
  prediction otherwise (the model can rank a measured near-best program below strangers it overrates);
- a **request** asks for fresh samples of the space (exploration the model screens), mutants of parents drawn
  from the population by tournament (exploitation of the model), and small steps around the fastest measured
  programs (local search where the measurements, not only the model, say it is good). Each pick earns the
  task ``effort`` candidates of search (about 4.5 per measured trial, what the round-based search spent), so
  the search works as hard per trial as before however many workers there are;
- a **pick**, per measured trial: with probability ``local_share`` the best-predicted local step, ``explore_share``
  the best-predicted fresh sample, ``eps_greedy`` an unscreened fresh sample, else the best-predicted candidate
  of all (exploitation). A cost model trained on a few unlucky samples of a sketch (write cache or not, packing,
  register tile, rfactor) can write the whole sketch off, so one exploiting pick in ``SKETCH_SHARE`` goes to the
  least-measured *open* sketch: one with fewer than ``SKETCH_MIN_SAMPLES`` successful measurements, or whose best
  is within ``SKETCH_KEEP_RATIO`` of the best of all.

Until the cost model is trained (too few measurements), the evolutionary search is a random search: requests
are fresh samples only and picks are random. ``RandomSearch`` stays that way (its pool is still trimmed by the
cost model's scores once there is a model).

Dedup: a program hash is *known* once it is measured (by any job: the set is seeded from the database), in
flight, or in the pool; it is never picked twice. A task whose search keeps returning only known programs is
``exhausted`` (its space is used up: it ends without error); one whose space never produced a valid program
in ``MIN_ATTEMPTS`` attempts gets an ``error`` naming the most common reasons.
"""
from __future__ import annotations

import abc
import collections
import dataclasses
import math
import random

import numpy as np

from .generate import decode_features

POOL_SIZE = 512            # unmeasured candidates kept per task, best scored first ...
WORKER_POOL = 64           # ... and at least this many per worker that holds some
TOP_MEASURED = 64          # fastest measured programs kept as parents
POPULATION = 64            # the fittest programs mutants are drawn from
LOCAL_PARENTS = 8          # the fastest measured programs local steps start from
SKETCH_SHARE = 8           # one exploiting pick in this many goes to an under-explored sketch
SKETCH_MIN_SAMPLES = 8
SKETCH_KEEP_RATIO = 1.25
MIN_ATTEMPTS = 64          # invalid candidates before a space that never produced a valid one is an error
LOCAL_CHOICE = 8           # a worker picks among its own candidates once it holds this many (see ``pick``)
EMPTY_REPLIES = 4          # replies in a row with nothing new before an idle task counts as exhausted
RANDOM_EFFORT = 1.25       # candidates of search per measured trial while picks are random


@dataclasses.dataclass
class EvolutionConfig:
    """The shares of the evolutionary search's picks and requests (see module doc)."""

    eps_greedy: float = 0.05
    explore_share: float = 0.4
    local_share: float = 0.3
    fresh_per_pick: float = 2.0
    mutants_per_pick: float = 2.0
    local_per_pick: float = 0.5

    @property
    def effort(self) -> float:
        """Candidates of search per measured trial once the model is trained."""
        return self.fresh_per_pick + self.mutants_per_pick + self.local_per_pick


class Candidate:
    """A candidate program as the driver knows it: plain data from the worker that built it (on the worker it
    is a ``program.Program``, the scheduled function itself)."""

    __slots__ = ("hash", "trace", "features", "sketch", "origin", "worker", "score", "version")

    def __init__(self, hash_: str, trace: str, features: np.ndarray, sketch: str, origin: str, worker: str = ""):
        self.hash = hash_
        self.trace = trace            # the full trace's JSON text (what the farm replays and the database stores)
        self.features = features      # float32 feature row
        self.sketch = sketch
        self.origin = origin          # fresh | mutant | local | design
        self.worker = worker          # the worker that holds its scheduled program
        self.score = 0.0
        self.version = -1             # the cost model version that scored it

    @classmethod
    def from_reply(cls, row: list, worker: str) -> "Candidate":
        h, trace, feats, sketch, origin = row
        return cls(h, trace, decode_features(feats), sketch, origin, worker)


class SearchStrategy(abc.ABC):
    """What the tuning job asks of the search of one task.

    ``request(n)`` writes a search request for about ``n`` candidates (``generate.generate`` answers it on a
    worker); ``receive(reply, worker)`` takes the candidates a reply brought; ``pick(worker)`` chooses the next
    candidate to measure; ``measured_result(entry, latency)`` reports its measurement; ``exhausted(...)`` says
    the space is used up; ``error`` says why the task cannot go on (None while it can).

    The job reads ``pool`` (unmeasured candidates by hash), ``credit`` (candidates of search the task may still
    ask for) and ``error``; it changes the strategy's state only through its methods: ``mark_known`` (the dedup
    set ``known``: program hashes never to pick, measured, in flight or pooled, seeded from the database),
    ``take_credit``, ``count_invalid`` (candidates the job sampled itself) and ``fail``.
    """

    error: str | None
    known: set[str]
    pool: dict[str, Candidate]
    credit: float

    @abc.abstractmethod
    def request(self, n: int) -> dict:
        """A search request for about ``n`` candidates."""

    @abc.abstractmethod
    def receive(self, reply: dict, worker: str = "") -> int:
        """Take a search reply; returns how many new candidates it brought."""

    @abc.abstractmethod
    def pick(self, worker: str | None = None) -> Candidate | None:
        """The next candidate to measure (on ``worker``), or None when there is none."""

    @abc.abstractmethod
    def measured_result(self, e: Candidate, latency: float | None) -> None:
        """A picked candidate's measurement (latency in seconds, None when it failed)."""

    @abc.abstractmethod
    def exhausted(self, requests_in_flight: int) -> bool:
        """Nothing left to pick and the space keeps answering with known programs only."""

    def mark_known(self, hashes) -> None:
        """Programs never to pick: measured (by this job, an earlier one or a concurrent one) or held elsewhere."""
        self.known.update(hashes)

    def take_credit(self, n: int) -> None:
        """``n`` candidates of search were asked for."""
        self.credit -= n

    @abc.abstractmethod
    def count_invalid(self, reason: str) -> None:
        """A candidate the job sampled itself was invalid, for ``reason``."""

    def fail(self, error: str) -> None:
        """The task cannot go on; the first error is the one kept."""
        if self.error is None:
            self.error = error


class RandomSearch(SearchStrategy):
    """Fresh samples and random picks (the course's ``random_search``), and what every strategy here keeps:
    the pool of scored candidates, the dedup set, the fastest measured programs and the counters."""

    def __init__(self, name: str, key: str, model, seed: int = 0):
        self.name, self.key, self.model = name, key, model
        self.rng = random.Random(seed)
        self.known: set[str] = set()
        self.pool: dict[str, Candidate] = {}
        self.best: list[tuple[float, Candidate]] = []     # fastest measured, (latency s, entry)
        self.measured: dict[str, float] = {}          # program hash -> latency (s) of successful programs
        self.sketches: dict[str, list] = {}           # sketch -> [successful measurements, best latency]
        self.credit = 0.0                             # candidates of search this task may still ask for
        self.n_valid = self.n_invalid = 0
        self.reasons: collections.Counter = collections.Counter()
        self.empty_replies = 0
        self.error: str | None = None
        self.sources: collections.Counter = collections.Counter()  # how picks were chosen

    # -- what the search needs from the workers ------------------------------------------------------------
    @property
    def guided(self) -> bool:
        """Whether the cost model chooses (never, for a random search)."""
        return False

    def effort(self) -> float:
        """Candidates of search each pick earns the task."""
        return RANDOM_EFFORT

    def request(self, n: int) -> dict:
        """A search request for about ``n`` fresh samples (see ``generate.generate``)."""
        return {"fresh": n, "seed": self.rng.randrange(1 << 62)}

    def receive(self, reply: dict, worker: str = "") -> int:
        """Take a search reply into the pool; returns how many new candidates it brought."""
        if reply.get("error"):
            self.error = reply["error"]
            return 0
        self.n_valid += reply.get("valid", 0)
        self.n_invalid += reply.get("invalid", 0)
        self.reasons.update(reply.get("reasons", {}))
        fresh = []
        for row in reply.get("programs", ()):
            if row[0] in self.known:
                continue
            e = Candidate.from_reply(row, worker)
            self.known.add(e.hash)
            self.pool[e.hash] = e
            fresh.append(e)
        self.empty_replies = 0 if fresh else self.empty_replies + 1
        if self.n_valid == 0 and self.n_invalid >= MIN_ATTEMPTS and self.error is None:
            self.error = (f"task {self.name!r}: the space produced no valid schedule in {self.n_invalid} attempts; "
                          f"most common reasons: {self.invalid_summary()}")
        self._score(fresh)
        self._trim()
        return len(fresh)

    def count_invalid(self, reason: str) -> None:
        self.n_invalid += 1
        self.reasons[reason] += 1

    def invalid_summary(self, n: int = 3) -> str:
        if not self.reasons:
            return "no reason recorded"
        return "; ".join(f"{r} (x{c})" for r, c in self.reasons.most_common(n))

    def exhausted(self, requests_in_flight: int) -> bool:
        """Nothing left to pick and the space keeps answering with known programs only."""
        return not self.pool and requests_in_flight == 0 and self.empty_replies >= EMPTY_REPLIES

    # -- measurement ---------------------------------------------------------------------------------------
    def pick(self, worker: str | None = None) -> Candidate | None:
        """The next candidate to measure (removed from the pool), or None when the pool is empty.

        ``worker``: the worker that will measure it. It chooses among the candidates it produced itself once it
        holds ``LOCAL_CHOICE`` of them, so it measures a program it already has instead of replaying one from
        another worker. That keeps each worker's choice as selective as a one-worker job's: every worker's
        share of the pool grows by ``effort`` candidates per trial it measures, from parents drawn from the
        whole population.
        """
        if not self.pool:
            return None
        self.credit += self.effort()
        cands = [e for e in self.pool.values() if e.worker == worker] if worker else []
        if len(cands) < LOCAL_CHOICE:
            cands = list(self.pool.values())
        e, source = self._choose(cands)
        del self.pool[e.hash]
        self.sources[source] += 1
        return e

    def _choose(self, cands: list[Candidate]) -> tuple[Candidate, str]:
        """One of ``cands`` and how it was chosen."""
        return self.rng.choice(cands), "random"

    def measured_result(self, e: Candidate, latency: float | None) -> None:
        """A picked candidate's measurement (latency in seconds, None when it failed)."""
        self.known.add(e.hash)
        st = self.sketches.setdefault(e.sketch, [0, math.inf])
        if latency is None:
            return
        self.measured[e.hash] = latency
        st[0] += 1
        st[1] = min(st[1], latency)
        if len(self.best) < TOP_MEASURED or latency < self.best[-1][0]:
            self.best.append((latency, e))
            self.best.sort(key=lambda p: p[0])
            del self.best[TOP_MEASURED:]

    # -- scores ----------------------------------------------------------------------------------------------
    def _score(self, entries: list[Candidate]) -> None:
        if not entries or not self.model.is_trained:
            return
        scores = self.model.predict(np.stack([e.features for e in entries]))
        for e, s in zip(entries, scores):
            e.score, e.version = float(s), self.model.version

    def _trim(self) -> None:
        """Keep the best-scored ``POOL_SIZE`` candidates, and ``WORKER_POOL`` per worker on a big farm."""
        if len(self.pool) <= POOL_SIZE:  # (the cap is never below it: no need to count the workers)
            return
        cap = max(POOL_SIZE, WORKER_POOL * len({e.worker for e in self.pool.values()}))
        if len(self.pool) > cap:
            keep = sorted(self.pool.values(), key=lambda e: -e.score)[:cap]
            dropped = self.pool.keys() - {e.hash for e in keep}
            self.known -= dropped  # not measured, not in flight: may come back
            self.pool = {e.hash: e for e in keep}


class EvolutionarySearch(RandomSearch):
    """The steady-state evolution of the module doc; a random search until the cost model is trained.

    ``config`` holds the shares of its picks and requests.
    """

    def __init__(self, name: str, key: str, model, seed: int = 0):
        super().__init__(name, key, model, seed)
        self.config = EvolutionConfig()

    @property
    def guided(self) -> bool:
        return self.model.is_trained

    def effort(self) -> float:
        return self.config.effort if self.guided else RANDOM_EFFORT

    def request(self, n: int) -> dict:
        """Fresh samples, mutants of the population and local steps around the fastest measured programs."""
        if not self.guided:
            return super().request(n)
        seed = self.rng.randrange(1 << 62)
        c = self.config
        n_local = int(round(n * c.local_per_pick / c.effort)) if self.best else 0
        n_mut = int(round(n * c.mutants_per_pick / c.effort))
        n_fresh = max(1, n - n_local - n_mut)
        req = {"fresh": n_fresh, "seed": seed}
        pop = self.population()
        if pop and n_mut:
            parents = collections.Counter(self._tournament(pop).hash for _ in range(n_mut))
            by_hash = {e.hash: e for _, e in pop}
            req["mutate"] = [[by_hash[h].trace, k] for h, k in parents.items()]
        if n_local:
            tops = [e for _, e in self.best[:LOCAL_PARENTS]]
            req["local"] = [[tops[i % len(tops)].trace, 1] for i in range(n_local)]
        return req

    def _choose(self, cands: list[Candidate]) -> tuple[Candidate, str]:
        if not self.guided:
            return super()._choose(cands)
        self._score([e for e in cands if e.version != self.model.version])  # a newer model: rescore first
        c = self.config
        u = self.rng.random()
        if u < c.eps_greedy:
            fresh = [e for e in cands if e.origin == "fresh"]
            if fresh:
                return self.rng.choice(fresh), "random"
        elif u < c.eps_greedy + c.explore_share:
            got = _best(cands, lambda e: e.origin == "fresh")
            if got is not None:
                return got, "explore"
        elif u < c.eps_greedy + c.explore_share + c.local_share:
            got = _best(cands, lambda e: e.origin == "local")
            if got is not None:
                return got, "local"
        if self.rng.randrange(SKETCH_SHARE) == 0:
            sketch = self._open_sketch(cands)
            if sketch is not None:
                return _best(cands, lambda e: e.sketch == sketch), "sketch"
        return _best(cands, None), "exploit"

    def _open_sketch(self, cands: list[Candidate]) -> str | None:
        """The least-measured open sketch among ``cands`` other than the best program's (see module doc)."""
        in_pool = {e.sketch for e in cands}
        if len(in_pool) < 2:
            return None
        best_sketch = self.best[0][1].sketch if self.best else None
        best_lat = min((st[1] for st in self.sketches.values()), default=math.inf)
        open_ = [s for s in in_pool if s != best_sketch and (
            self.sketches.get(s, (0, math.inf))[0] < SKETCH_MIN_SAMPLES
            or self.sketches[s][1] <= SKETCH_KEEP_RATIO * best_lat)]
        return min(open_, key=lambda s: self.sketches.get(s, (0,))[0]) if open_ else None

    # -- population -----------------------------------------------------------------------------------------
    def fitness(self, e: Candidate) -> float:
        lat = self.measured.get(e.hash)
        if lat is not None and self.best and self.model.predicts_log_throughput:
            return math.log(self.best[0][0] / lat)
        return e.score

    def population(self) -> list[tuple[float, Candidate]]:
        """The fittest measured and unmeasured programs, fittest first."""
        everyone = [(self.fitness(e), e) for _, e in self.best] + [(e.score, e) for e in self.pool.values()]
        everyone.sort(key=lambda p: -p[0])
        return everyone[:POPULATION]

    def _tournament(self, pop: list) -> Candidate:
        a, b = self.rng.choice(pop), self.rng.choice(pop)
        return a[1] if a[0] >= b[0] else b[1]


def _best(entries: list[Candidate], keep) -> Candidate | None:
    best = None
    for e in entries:
        if (keep is None or keep(e)) and (best is None or e.score > best.score):
            best = e
    return best


KINDS = {"evolutionary": EvolutionarySearch, "random": RandomSearch}


def create(kind: str, name: str, key: str, model, seed: int = 0) -> SearchStrategy:
    """The search of task ``name`` (workload ``key``) by strategy ``kind``: ``"evolutionary"`` or ``"random"``;
    ``model``: the job's ``CostModel``."""
    if kind not in KINDS:
        raise ValueError(f"unknown search strategy {kind!r}; use 'evolutionary' or 'random'")
    return KINDS[kind](name, key, model, seed)
