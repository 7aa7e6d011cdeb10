"""numpy broadcasting for tensor expressions: the output shape and each operand's index map."""
from __future__ import annotations

from ...ir import expr as E
from ..tensor import Tensor


def same_dim(a, b) -> bool:
    """Whether two shape entries are known equal (equal ints, or the very same symbolic expression)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return a is b


def broadcast_shapes(*shapes) -> tuple:
    """numpy's broadcast result shape; symbolic dims broadcast against 1 or against themselves."""
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for d in range(ndim):
        dim = 1
        for s in padded:
            x = s[d]
            if isinstance(x, int) and x == 1:
                continue
            if isinstance(dim, int) and dim == 1:
                dim = x
            elif not same_dim(dim, x):
                shown = " and ".join(str(tuple(map(str, s))) for s in shapes)
                raise ValueError(f"shapes {shown} cannot be broadcast together (dimension {d}: {dim} vs {x})")
        out.append(dim)
    return tuple(out)


def broadcast_load(t, out_index) -> E.PrimExpr:
    """``t`` read at the output index ``out_index`` under broadcasting (scalars pass through)."""
    if not isinstance(t, Tensor):
        return t
    idx = out_index[len(out_index) - t.ndim:] if t.ndim else ()
    return t[tuple(0 if (isinstance(s, int) and s == 1) else i for s, i in zip(t.shape, idx))]
