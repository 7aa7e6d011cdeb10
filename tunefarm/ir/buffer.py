"""Buffers: named, typed, shaped memory regions (function parameters or allocations)."""
from __future__ import annotations

from .dtype import DType, check_dtype, nbytes
from .expr import BufferLoad, IntImm, PrimExpr, Var, as_expr

SCOPES = ('global', 'local', 'shared', 'shared.dyn')


class Buffer:
    """A multi-dimensional array in row-major layout.

    ``scope`` is ``"global"`` (parameters and ordinary allocations) or ``"local"`` (small per-thread scratch
    lowered to a stack allocation); ``'shared'`` / ``'shared.dyn'`` (a GPU block's memory in TVM) are read so that
    TVM programs load, and a CPU build places them as it places ``"global"`` allocations, as TVM's CPU build does. Identity matters: the same Buffer object is the same memory.
    """

    __slots__ = ("name", "shape", "dtype", "scope", "__weakref__")

    def __init__(self, name: str, shape, dtype: DType = "float32", scope: str = "global"):
        if scope not in SCOPES:
            raise ValueError(f"buffer {name!r}: unknown scope {scope!r}; use one of {SCOPES}")
        self.name = name
        self.shape = tuple(as_expr(s, "int32") if not isinstance(s, PrimExpr) else s for s in shape)
        self.dtype = check_dtype(dtype)
        self.scope = scope

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def const_shape(self) -> tuple[int, ...] | None:
        """The shape as ints, or None when a dimension is symbolic."""
        if all(isinstance(s, IntImm) for s in self.shape):
            return tuple(s.value for s in self.shape)
        return None

    def symbolic_vars(self) -> list[Var]:
        from .functor import collect_vars  # cycle: functor imports this module

        out: list[Var] = []
        for s in self.shape:
            for v in collect_vars(s):
                if v not in out:
                    out.append(v)
        return out

    @property
    def itemsize(self) -> int:
        return nbytes(self.dtype)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != self.ndim:
            raise IndexError(f"buffer {self.name} has {self.ndim} dimensions, indexed with {len(indices)}")
        return BufferLoad(self, tuple(as_expr(i, "int32") for i in indices))

    def vload(self, indices):
        return self[tuple(indices)]

    def with_scope(self, scope: str, name: str | None = None) -> "Buffer":
        return Buffer(name or self.name, self.shape, self.dtype, scope)

    def __repr__(self) -> str:
        from .printer import expr_to_str  # cycle: printer imports this module

        dims = ", ".join(expr_to_str(s) for s in self.shape)
        return f"Buffer({self.name}, ({dims}), {self.dtype!r}{'' if self.scope == 'global' else ', ' + repr(self.scope)})"
