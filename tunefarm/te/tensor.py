"""Tensors of the tensor-expression language and the operations that produce them.

A ``Tensor`` is either a ``placeholder`` (a function input) or the output of a ``ComputeOp`` (one element
formula over an index space). Indexing a tensor, ``A[i, k]`` or ``A(i, k)``, builds an ordinary IR
``BufferLoad`` on a buffer private to that tensor; ``create_prim_func`` later swaps those buffers for the
function's own parameters and allocations, so one tensor can appear in many functions independently.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.stmt import Range


class Axis(E.Var):
    """An index variable of a compute (``iter_type`` "S") or a reduction axis ("R"), carrying its domain.

    It is a ``Var`` so it can be used directly in index expressions (``A[i, k]``), as in TVM.
    """

    __slots__ = ("dom", "iter_type")

    def __init__(self, name: str, dom: Range, iter_type: str):
        super().__init__(name, "int64" if "int64" in (dom.min.dtype, dom.extent.dtype) else "int32")
        self.dom = dom
        self.iter_type = iter_type

    @property
    def var(self) -> "Axis":  # TVM spelling: ``k.var``
        return self


class TensorBuffer(Buffer):
    """The buffer a tensor's loads refer to before ``create_prim_func``; knows its tensor."""

    __slots__ = ("tensor",)


class PlaceholderOp:
    def __init__(self, name: str):
        self.name = name
        self.input_tensors: list = []

    def __repr__(self) -> str:
        return f"PlaceholderOp({self.name})"


class ComputeOp:
    """``output[axis] = body`` (``body`` may be a top-level ``Reduce`` over ``reduce_axis``)."""

    def __init__(self, name: str, axis, body, reduce_axis, input_tensors, tag: str = "", attrs=None):
        self.name = name
        self.axis = tuple(axis)
        self.body = body
        self.reduce_axis = tuple(reduce_axis)
        self.input_tensors = list(input_tensors)
        self.tag = tag
        self.attrs = dict(attrs or {})

    def __repr__(self) -> str:
        return f"ComputeOp({self.name})"


def normalize_shape(shape) -> tuple:
    """Shape entries as Python ints (constants) or integer PrimExprs (symbolic dimensions)."""
    if isinstance(shape, (int, E.PrimExpr)):
        shape = (shape,)
    out = []
    for s in shape:
        if isinstance(s, E.IntImm):
            s = s.value
        if isinstance(s, bool) or not isinstance(s, (int, E.PrimExpr)):
            raise TypeError(f"shape entries must be ints or integer expressions, got {s!r}")
        if isinstance(s, int):
            if s < 0:
                raise ValueError(f"negative dimension {s} in shape {tuple(shape)}")
        elif not s.dtype.startswith("int"):
            raise TypeError(f"symbolic dimension {s!r} must have an integer dtype, not {s.dtype}")
        out.append(s)
    return tuple(out)


def dim_expr(s) -> E.PrimExpr:
    return E.const(s, "int32") if isinstance(s, int) else s


def index_expr(i, dtype: str) -> E.PrimExpr:
    if isinstance(i, E.PrimExpr):
        if i.dtype.startswith("float") or i.dtype == "bool":
            raise TypeError(f"tensor index must be an integer expression, got {i!r} of dtype {i.dtype}")
        return i
    if isinstance(i, int) and not isinstance(i, bool):
        return E.const(i, dtype)
    raise TypeError(f"tensor index must be an int or an integer expression, got {i!r}")


def _elementwise():
    """The broadcasting operators of ``te.ops.elementwise``, which build tensors of this module."""
    from .ops import elementwise  # cycle: te.ops.elementwise imports this module

    return elementwise


class Tensor:
    """A named, typed, shaped value of a tensor-expression program. Identity is the tensor."""

    __slots__ = ("op", "shape", "dtype", "name", "buffer", "__weakref__")

    def __init__(self, shape, dtype: str, op, name: str):
        self.shape = normalize_shape(shape)
        self.dtype = dtype
        self.op = op
        self.name = name
        buf = TensorBuffer(name, [dim_expr(s) for s in self.shape], dtype)
        buf.tensor = self
        self.buffer = buf

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> E.BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != self.ndim:
            raise IndexError(f"tensor {self.name!r} has {self.ndim} dimensions, indexed with {len(indices)}")
        idx = tuple(index_expr(i, dim_expr(s).dtype) for i, s in zip(indices, self.shape))
        return E.BufferLoad(self.buffer, idx)

    def __call__(self, *indices) -> E.BufferLoad:
        return self[tuple(indices)]

    # elementwise arithmetic between tensors dispatches to the broadcasting operator library, as in TVM
    def __add__(self, other):
        return _elementwise().add(self, other)

    def __radd__(self, other):
        return _elementwise().add(other, self)

    def __sub__(self, other):
        return _elementwise().subtract(self, other)

    def __rsub__(self, other):
        return _elementwise().subtract(other, self)

    def __mul__(self, other):
        return _elementwise().multiply(self, other)

    def __rmul__(self, other):
        return _elementwise().multiply(other, self)

    def __truediv__(self, other):
        return _elementwise().divide(self, other)

    __hash__ = object.__hash__

    def __eq__(self, other):  # identity, like IR nodes (tensors key dictionaries)
        return self is other

    def __repr__(self) -> str:
        dims = ", ".join(str(s) if isinstance(s, int) else repr(s) for s in self.shape)
        return f"Tensor(name={self.name!r}, shape=({dims}), dtype={self.dtype!r})"
