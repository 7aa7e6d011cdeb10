"""Random variables: the handles a schedule hands out for blocks, loops and sampled integers.

A random variable (RV) is an opaque token; what it stands for lives in the owning ``Schedule``'s symbol
table. That indirection is what lets a trace be replayed on a fresh function (each instruction's outputs
are re-bound to new IR), lets ``Schedule.copy`` share the IR and only copy the small table, and lets a
schedule tell that an RV from another schedule is not one of its own. Identity is the variable.
"""
from __future__ import annotations


class RandomVariable:
    """Base of the three kinds; ``prefix`` is the letter used when a trace names it (``b0``, ``l1``, ``v2``)."""

    __slots__ = ()
    prefix = "x"
    kind = "random variable"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"


class BlockRV(RandomVariable):
    """Stands for a block (by its unique name, in one function of the module)."""

    __slots__ = ()
    prefix = "b"
    kind = "block"


class LoopRV(RandomVariable):
    """Stands for a loop (by its loop ``Var``), or for a compute-location mark (``"root"`` / ``"inline"``)."""

    __slots__ = ()
    prefix = "l"
    kind = "loop"


class ExprRV(RandomVariable):
    """Stands for a sampled integer (a tile factor, a categorical choice)."""

    __slots__ = ()
    prefix = "v"
    kind = "expr"


RV_TYPES = {"block": BlockRV, "loop": LoopRV, "expr": ExprRV}


class ComputeLocationMark(str):
    """What a LoopRV sampled by ``sample_compute_location`` resolves to when it is not a real loop.

    ``compute_at(block, mark)`` does nothing for ``ROOT`` and inlines the block for ``INLINE`` (as TVM).
    """

    __slots__ = ()


ROOT_MARK = ComputeLocationMark("root")
INLINE_MARK = ComputeLocationMark("inline")
