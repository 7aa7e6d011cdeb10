"""``add_unit_loop``: a loop of extent 1 directly above a block or a loop.

Tensorization and blockization need a loop to hang a block's outer part on; a block with no loop above it
(a zero-dimensional computation, or the only statement of a function) has none. The new loop changes nothing
the program computes, so it needs no check beyond the target not being the root block.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import PrimFunc
from ..error import ScheduleError
from ..tree import find_block, find_loop, replace_path


def add_unit_loop(func: PrimFunc, block: str | None = None, loop: E.Var | None = None) -> tuple[PrimFunc, E.Var]:
    """``func`` with ``for u in range(1)`` wrapped around the block named ``block`` or the loop over ``loop``;
    returns the new loop's variable."""
    prim = "add_unit_loop"
    if block is not None:
        path = find_block(func, block, prim)
        if len(path) == 1:
            raise ScheduleError(prim, f"block {block!r} is the function's root block; no loop can be added above it")
    else:
        path = find_loop(func, loop, prim)
    target = path[-1]
    dtype = target.loop_var.dtype if isinstance(target, S.For) else "int32"
    var = E.Var("u", dtype)
    return replace_path(func, path, S.For(var, 0, 1, "serial", target)), var
