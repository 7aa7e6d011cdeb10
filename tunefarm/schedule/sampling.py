"""The random choices of sampling instructions, and the checks that a given decision still fits.

All randomness comes from the ``random.Random`` the schedule passes in, so a seed fixes every choice and
a trace's decisions replay the same program in any process. Each ``check_*`` returns an error text (the
caller turns it into a ScheduleError naming the instruction) or None.
"""
from __future__ import annotations

import math
import random
from functools import lru_cache

from ..ir.function import PrimFunc
from .primitives import query
from .tree import find_block, find_loop, loops_above


# ----------------------------------------------------------------------------------------------------------
# perfect tiles
# ----------------------------------------------------------------------------------------------------------
def _prime_factors(n: int) -> tuple[tuple[int, int], ...]:
    out = []
    p = 2
    while p * p <= n:
        if n % p == 0:
            e = 0
            while n % p == 0:
                n //= p
                e += 1
            out.append((p, e))
        p += 1 if p == 2 else 2
    if n > 1:
        out.append((n, 1))
    return tuple(out)


def _count_tilings(primes, n: int) -> int:
    """Ordered factorizations into ``n`` factors of the number whose prime exponents are ``primes``."""
    if n == 0:
        return 1 if all(e == 0 for _, e in primes) else 0
    return math.prod(math.comb(e + n - 1, n - 1) for _, e in primes)


@lru_cache(maxsize=1024)
def _innermost_weights(extent: int, n: int, limit: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Innermost factor candidates (divisors <= limit) and how many tilings each completes."""
    primes = _prime_factors(extent)
    divisors = [1]
    for p, e in primes:
        divisors = [d * p ** k for d in divisors for k in range(e + 1)]
    divisors = sorted(d for d in divisors if not limit or d <= limit)
    cands, weights = [], []
    for d in divisors:
        rest = tuple((p, e - _valuation(d, p)) for p, e in primes)
        w = _count_tilings(rest, n - 1)
        if w:
            cands.append(d)
            weights.append(w)
    return tuple(cands), tuple(weights)


def _valuation(d: int, p: int) -> int:
    k = 0
    while d % p == 0:
        d //= p
        k += 1
    return k


def _random_composition(rng: random.Random, total: int, parts: int) -> list[int]:
    """A uniformly random way to write ``total`` as an ordered sum of ``parts`` non-negative ints."""
    if parts == 1:
        return [total]
    bars = sorted(rng.sample(range(total + parts - 1), parts - 1))
    out, prev = [], -1
    for b in bars:
        out.append(b - prev - 1)
        prev = b
    out.append(total + parts - 1 - prev - 1)
    return out


def _limit(max_innermost_factor) -> int:
    return max_innermost_factor if max_innermost_factor is not None and max_innermost_factor > 0 else 0


def sample_perfect_tile(rng: random.Random, extent: int, n: int, max_innermost_factor: int | None) -> list[int] | None:
    """A uniformly random tiling ``[f0, ..., f(n-1)]`` with product ``extent`` and ``f(n-1) <= limit``.

    Uniform over all such tilings (a limit < 1 or None means no limit): the innermost factor is drawn with
    weight equal to the number of tilings it completes, then each prime's exponent is spread uniformly over
    the outer factors. None when no tiling qualifies (one factor larger than the limit).
    """
    limit = _limit(max_innermost_factor)
    cands, weights = _innermost_weights(extent, n, limit)
    if not cands:
        return None  # only possible for n == 1 and extent > limit
    r = rng.randrange(sum(weights))
    for inner, w in zip(cands, weights):
        if r < w:
            break
        r -= w
    factors = [1] * (n - 1)
    if n > 1:
        for p, e in _prime_factors(extent // inner):
            for i, k in enumerate(_random_composition(rng, e, n - 1)):
                factors[i] *= p ** k
    return factors + [inner]


def check_perfect_tile(decision, extent: int, n: int, max_innermost_factor: int | None) -> str | None:
    if not isinstance(decision, (list, tuple)) or len(decision) != n or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in decision):
        return f"decision {decision!r} is not a list of {n} positive integers"
    if math.prod(decision) != extent:
        return f"decision {list(decision)} multiplies to {math.prod(decision)}, not to the loop extent {extent}"
    limit = _limit(max_innermost_factor)
    if limit and decision[-1] > limit:
        return f"decision {list(decision)} has innermost factor {decision[-1]} > max_innermost_factor {limit}"
    return None


def check_perfect_tile_args(n, max_innermost_factor) -> str | None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        return f"n must be a positive integer, got {n!r}"
    if max_innermost_factor is not None and (isinstance(max_innermost_factor, bool)
                                             or not isinstance(max_innermost_factor, int)):
        return f"max_innermost_factor must be an integer, got {max_innermost_factor!r}"
    return None


# ----------------------------------------------------------------------------------------------------------
# categorical
# ----------------------------------------------------------------------------------------------------------
def check_categorical_args(candidates, probs) -> str | None:
    if not isinstance(candidates, (list, tuple)) or not candidates:
        return "candidates must be a non-empty list of integers"
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in candidates):
        return f"candidates must be integers, got {list(candidates)!r}"
    if not isinstance(probs, (list, tuple)) or len(probs) != len(candidates):
        return f"probs must be a list with one probability per candidate ({len(candidates)})"
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and p >= 0
               for p in probs) or sum(probs) <= 0:
        return f"probs must be non-negative finite numbers with a positive sum, got {list(probs)!r}"
    return None


def sample_categorical(rng: random.Random, probs) -> int:
    """An index drawn with probability proportional to ``probs``."""
    total = float(sum(probs))
    r = rng.random() * total
    acc = 0.0
    last = 0
    for i, p in enumerate(probs):
        if p <= 0:
            continue
        last = i
        acc += p
        if r < acc:
            return i
    return last


def check_categorical(decision, n_candidates: int) -> str | None:
    if isinstance(decision, bool) or not isinstance(decision, int) or not 0 <= decision < n_candidates:
        return f"decision {decision!r} is not an index into the {n_candidates} candidates"
    return None


# ----------------------------------------------------------------------------------------------------------
# compute location
# ----------------------------------------------------------------------------------------------------------
def _data_parallel_prefix(func: PrimFunc, loops) -> int:
    """How many of ``loops`` (outermost first) precede the first loop bound into a reduction variable."""
    for i, v in enumerate(loops):
        if query.reduction_binding_under(find_loop(func, v)[-1]) is not None:
            return i
    return len(loops)


def compute_location_loops(func: PrimFunc, block: str) -> list:
    """The loops a block may be computed at, before the legality check, as MetaSchedule collects them.

    These are the loops of the block's first consumer (outermost first) that enclose every consumer and
    lie above its first reduction-bound loop. A decision ``i >= 0`` of ``sample_compute_location`` is an
    index into this list; -1 means "root" (leave the block where it is) and -2 "inline".
    """
    find_block(func, block, "sample_compute_location")
    consumers = query.get_consumers(func, block)
    if not consumers:
        return []
    first = [lp.loop_var for lp in loops_above(find_block(func, consumers[0]))]
    n = len(first)
    for other in consumers[1:]:
        theirs = [lp.loop_var for lp in loops_above(find_block(func, other))]
        k = 0
        while k < min(n, len(theirs)) and theirs[k] is first[k]:
            k += 1
        n = k
    n = min(n, _data_parallel_prefix(func, first[:n]))
    return first[:n]
