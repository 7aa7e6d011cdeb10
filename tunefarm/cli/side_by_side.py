"""Timing several implementations of one computation side by side, so that their ratios reproduce.

Three rules make a printed speed-up hold up when the job runs again:

- **Same threads.** numpy's BLAS and torch are held to the compiled model's thread count (``threadpoolctl``,
  ``torch.set_num_threads``): a baseline free to use every core is not what the compiled model competes with,
  and whether it gets them depends on what else runs.
- **Interleaved rounds, one process.** Every round times each contender once (a block of calls sized to
  ``min_time``), in a rotating order; load that comes and goes hits every contender alike.
- **Spread, not one number.** Each contender's per-call time is summarised by its median over rounds with the
  10th-90th percentile range, and each ratio is taken *per round* (both sides timed moments apart) and
  summarised the same way. A rerun's median ratio falls inside the printed range unless the machine changed.
"""
from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits


@dataclasses.dataclass(frozen=True)
class Spread:
    """Median and 10th / 90th percentiles of a sample."""

    median: float
    p10: float
    p90: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> "Spread":
        a = np.asarray(samples, dtype=float)
        p10, median, p90 = np.percentile(a, [10, 50, 90])
        return cls(float(median), float(p10), float(p90))

    def text(self, fmt: str = "{:.2f}", suffix: str = "") -> str:
        """``median [p10-p90]``, e.g. ``1.93x [1.81-2.02]``."""
        return f"{fmt.format(self.median)}{suffix} [{fmt.format(self.p10)}-{fmt.format(self.p90)}]"


@contextlib.contextmanager
def pinned_threads(threads: int):
    """Hold numpy's BLAS (and torch, when imported) to ``threads`` threads inside the block."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(limits=threads, user_api="blas"):
        if torch is not None:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(before)


def calls_per_block(fn: Callable, args: tuple, min_time: float) -> int:
    """How many back-to-back calls of ``fn(*args)`` last at least ``min_time`` seconds (a power of two)."""
    fn(*args)  # warm-up: first-call costs (page faults, lazy initialisation) are not per-call costs
    n = 1
    while n < 1 << 20:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        if time.perf_counter() - t0 >= min_time:
            break
        n *= 2
    return n


def time_side_by_side(contenders: dict[str, tuple[Callable, tuple]], rounds: int = 15, min_time: float = 0.004,
                      threads: int = 1) -> dict[str, list[float]]:
    """Per-call microseconds of every contender, one sample per round; all timed in the same rounds.

    ``contenders``: ``name -> (fn, args)``. Round ``r`` runs the contenders starting at index ``r mod k``.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    with pinned_threads(threads):
        blocks = {name: calls_per_block(*contenders[name], min_time) for name in names}
        for r in range(rounds):
            start = r % len(names)
            for name in names[start:] + names[:start]:
                fn, args = contenders[name]
                n = blocks[name]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn(*args)
                samples[name].append((time.perf_counter() - t0) / n * 1e6)
    return samples


def ratio_spread(samples: dict[str, list[float]], numerator: str, denominator: str) -> Spread:
    """``numerator / denominator`` taken round by round (how many times faster ``denominator`` is)."""
    a, b = np.asarray(samples[numerator]), np.asarray(samples[denominator])
    return Spread.of(a / b)


def median_call_us(fn, *args, rounds: int = 9, min_time: float = 0.02) -> float:
    """Median per-call time of ``fn(*args)`` in microseconds (one contender of ``time_side_by_side``)."""
    return Spread.of(time_side_by_side({"fn": (fn, args)}, rounds, min_time)["fn"]).median
