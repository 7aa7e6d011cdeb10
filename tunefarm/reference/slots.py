"""The environment layout of a compiled reference program.

Every variable and every buffer the program touches gets one index ("slot") in a flat Python list that is
created per call. Compiled closures capture slot numbers, so reading ``i`` at run time is ``env[k]`` rather
than a dictionary lookup or a tree walk. The compiler also tracks which variables and buffers are in scope,
so a program that uses an unbound variable or an undeclared buffer is rejected before it runs.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.arith import const_bound, simplify
from ..ir.buffer import Buffer
from ..ir.expr import Var


def _same(a, b) -> bool:
    """Whether two integer expressions are provably equal (same node, or a zero difference)."""
    if a is b:
        return True
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    d = simplify(E.sub(a, b))
    return isinstance(d, E.IntImm) and d.value == 0


class Slots:
    def __init__(self):
        self.index: dict = {}
        self._next = 0
        self.bound_vars: dict = {}  # Var -> nesting count (a Var may be rebound in disjoint subtrees)
        self.live_buffers: dict = {}
        self.context: list[str] = []  # block names, innermost last (for error messages)
        self.bounds: dict = {}  # Var -> inclusive (lo, hi) ints where statically known (proves accesses safe)
        self.ranges: dict = {}  # Var -> (min, extent) expressions: symbolic ranges such as [0, n)

    @property
    def size(self) -> int:
        return self._next

    def slot(self, obj) -> int:
        k = self.index.get(obj)
        if k is None:
            k = self.index[obj] = self._next
            self._next += 1
        return k

    # --- scope tracking ----------------------------------------------------------------------------
    def bind_var(self, var: Var) -> int:
        _enter(self.bound_vars, var)
        return self.slot(var)

    def unbind_var(self, var: Var) -> None:
        _leave(self.bound_vars, var)

    def alias_var(self, var: Var, target: Var):
        """Make ``var`` share ``target``'s slot (a block iteration variable bound to a loop variable as is,
        which therefore needs no copy). Returns the token ``unalias_var`` needs."""
        saved = self.index.get(var)
        self.index[var] = self.index[target]
        _enter(self.bound_vars, var)
        return saved

    def unalias_var(self, var: Var, saved) -> None:
        self.unbind_var(var)
        if saved is None:
            del self.index[var]
        else:
            self.index[var] = saved

    def var_slot(self, var: Var) -> int:
        if var not in self.bound_vars:
            raise ValueError(f"variable {var.name!r} is used{self.where()} but not bound by any enclosing loop, "
                             "block or function parameter shape")
        return self.index[var]

    def open_buffer(self, buf: Buffer) -> int:
        _enter(self.live_buffers, buf)
        return self.slot(buf)

    def close_buffer(self, buf: Buffer) -> None:
        _leave(self.live_buffers, buf)

    def buffer_slot(self, buf: Buffer) -> int:
        if buf not in self.live_buffers:
            raise ValueError(f"buffer {buf.name!r} is accessed{self.where()} but is neither a parameter nor "
                             "allocated by an enclosing block or Allocate")
        return self.index[buf]

    def with_bounds(self, var: Var, bound, rng=None):
        """Record what is statically known of ``var``: inclusive int ``bound`` and/or a symbolic ``rng``
        ``(min, extent)``; None means unknown. Returns the previous facts for ``restore_bounds``."""
        old = (self.bounds.get(var), self.ranges.get(var))
        for table, value in ((self.bounds, bound), (self.ranges, rng)):
            if value is None:
                table.pop(var, None)
            else:
                table[var] = value
        return old

    def restore_bounds(self, var: Var, old) -> None:
        self.with_bounds(var, old[0], old[1])

    def in_symbolic_range(self, e, lo, extent) -> bool:
        """Whether ``e`` is a variable known to range over exactly ``[lo, lo + extent)``."""
        rng = self.ranges.get(e) if isinstance(e, Var) else None
        return rng is not None and _same(rng[0], lo) and _same(rng[1], extent)

    def provably_within(self, e, lo: int, hi: int) -> tuple[int, int] | None:
        """Static bounds of ``e`` when they prove ``lo <= e <= hi``, else None."""
        b = const_bound(e, self.bounds)
        if b is not None and lo <= b[0] and b[1] <= hi:
            return b
        return None

    def where(self) -> str:
        return f" in block {self.context[-1]!r}" if self.context else ""


def _enter(counts: dict, key) -> None:
    """One more scope holds ``key`` (a variable or buffer may be bound again inside its own scope)."""
    counts[key] = counts.get(key, 0) + 1


def _leave(counts: dict, key) -> None:
    n = counts[key] - 1
    if n:
        counts[key] = n
    else:
        del counts[key]
