"""Hand-made schedules several search tests look at."""
from __future__ import annotations

from tunefarm.schedule import Schedule


def register_tiled(func, block: str = "C"):
    """``block`` tiled 4 x 16 under the reduction loop ``k`` (i0, j0, k, i1, j1): the matmul micro-kernel shape.

    Returns the schedule, the block and the five loops."""
    sch = Schedule(func)
    b = sch.get_block(block)
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 16])
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    return sch, b, (i0, j0, k, i1, j1)
