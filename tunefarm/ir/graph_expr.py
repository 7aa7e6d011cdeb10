"""Graph-level IR (the Relax subset the course uses): tensors flowing between kernel calls.

A graph ``Function`` is a list of dataflow blocks; each binding assigns the result of one ``Call`` to a
``GraphVar``. Calls are ``call_tir`` (a PrimFunc of the same module, destination passing),
``call_dps_packed`` (a registered Python function or a PrimFunc by name) or a high-level op (``dense``,
``relu``, ...) that ``Legalize`` turns into ``call_tir``. Shapes may hold symbolic dims (``ir.Var``).
"""
from __future__ import annotations

import numpy as np

from .dtype import check_dtype
from .expr import IntImm, PrimExpr, Var, const

Dim = int | Var


class TensorType:
    """``R.Tensor(shape, dtype)``: the static type of a graph value (dims are ints or symbolic Vars)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype: str = "float32"):
        dims = []
        for d in shape:
            if isinstance(d, IntImm):
                d = d.value
            if isinstance(d, (np.integer,)):
                d = int(d)
            if isinstance(d, bool) or not isinstance(d, (int, Var)):
                raise TypeError(f"tensor dims must be ints or symbolic vars, got {d!r}")
            if isinstance(d, int) and d < 0:
                raise ValueError(f"tensor dims must be >= 0, got {d}")
            dims.append(d)
        self.shape = tuple(dims)
        self.dtype = check_dtype(str(dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorType) and self.dtype == other.dtype and len(self.shape) == len(other.shape) \
            and all(a is b if isinstance(a, Var) else a == b for a, b in zip(self.shape, other.shape))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        dims = ", ".join(str(d) if isinstance(d, int) else d.name for d in self.shape)
        return f'R.Tensor(({dims}{"," if len(self.shape) == 1 else ""}), "{self.dtype}")'


class GraphExpr:
    """A graph value; every kind has a ``type`` (its ``TensorType``)."""

    __slots__ = ()

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype


TensorStructInfo = TensorType  # the course's name (``relax.TensorStructInfo(shape, dtype)``)


class GraphVar(GraphExpr):
    """A named graph value (function parameter or binding result). Identity is the variable.

    ``GraphVar("x", TensorType((1, 784), "float32"))`` is the course's
    ``relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))``.
    """

    __slots__ = ("name", "type")

    def __init__(self, name: str, ttype: TensorType):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"graph variable names must be identifiers, got {name!r}")
        if not isinstance(ttype, TensorType):
            raise TypeError(f"graph variable {name!r} needs a TensorType (R.Tensor), got {type(ttype).__name__}")
        self.name = name
        self.type = ttype

    @property
    def struct_info(self) -> TensorType:
        return self.type

    def __repr__(self) -> str:
        return f"{self.name}: {self.type!r}"


class DataflowVar(GraphVar):
    """A variable bound inside a dataflow block and visible only there (the course's ``relax.DataflowVar``:
    ``isinstance`` of ``GraphVar`` / ``relax.Var`` holds). An output of the block is a plain ``GraphVar``."""

    __slots__ = ()


class Constant(GraphExpr):
    """A bound array (parameters after ``BindParams``)."""

    __slots__ = ("data", "type", "name")

    def __init__(self, data: np.ndarray, name: str | None = None):
        data = np.asarray(data)
        self.data = data if data.flags.c_contiguous else np.ascontiguousarray(data)  # keeps 0-d arrays 0-d
        self.type = TensorType(self.data.shape, str(self.data.dtype))
        self.name = name

    def __repr__(self) -> str:
        return f"Constant({self.name or ''}{list(self.data.shape)}, {self.data.dtype})"


class Call(GraphExpr):
    """``op(args, **attrs) -> type``. ``op`` is ``call_tir``, ``call_dps_packed``, ``call_func`` (a graph
    function of the module, as ``FuseOps`` groups are called) or a high-level op name.

    ``call_tir``/``call_dps_packed``/``call_func`` keep the callee's name in ``attrs["func"]``.
    """

    __slots__ = ("op", "args", "attrs", "type")

    def __init__(self, op: str, args, attrs: dict | None, ttype: TensorType):
        self.op = op
        self.args = tuple(args)
        for a in self.args:
            if not isinstance(a, GraphExpr):
                raise TypeError(f"{op}: arguments must be graph values, got {type(a).__name__}")
        self.attrs = dict(attrs or {})
        self.type = ttype

    def __repr__(self) -> str:
        return f"Call({self.op}, {self.attrs.get('func', '')})"


def shape_expr_to_ir(d: Dim) -> PrimExpr:
    return const(d, "int64") if isinstance(d, int) else d
