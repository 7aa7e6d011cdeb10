"""Statements of the tensor IR: stores, loops, blocks and their realizations.

The shape follows TensorIR: a ``Block`` is a unit of computation with iteration variables (spatial ``S`` or
reduction ``R``), read/write regions and an optional ``init``; a ``BlockRealize`` binds those variables to
expressions of the surrounding loop variables and may carry a predicate. A PrimFunc's body is the realize of
a block named ``root`` whose ``alloc_buffers`` hold the intermediates.

Nodes are immutable by convention; ``replace(**changes)`` returns a modified copy, which is how schedule
primitives rebuild the path from the root to what they change.
"""
from __future__ import annotations

from .buffer import Buffer
from .expr import IntImm, PrimExpr, Var, as_expr, const

FOR_KINDS = ("serial", "parallel", "vectorized", "unrolled")
ITER_TYPES = ("S", "R")


class Node:
    """Common base: ``_fields`` lists the child attributes traversed by visitors (in order)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _attrs: tuple[str, ...] = ()

    def replace(self, **changes):
        cls = type(self)
        new = cls.__new__(cls)
        for name in cls.__slots__:
            object.__setattr__(new, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"{cls.__name__} has no fields {sorted(changes)}")
        return new

    def same_as(self, other) -> bool:
        """TVM's reference equality: the very same node (IR is immutable, so an unchanged part stays the same
        object across schedule steps)."""
        return self is other

    def __repr__(self) -> str:
        from .printer import stmt_to_str  # cycle: printer imports this module

        return stmt_to_str(self)


class Range(Node):
    """``[min, min + extent)``."""

    __slots__ = ("min", "extent")
    _fields = ("min", "extent")

    def __init__(self, min, extent):
        self.min = as_expr(min, "int32")
        self.extent = as_expr(extent, self.min.dtype)

    @staticmethod
    def from_extent(extent) -> "Range":
        extent = as_expr(extent, "int32")
        return Range(const(0, extent.dtype), extent)


class IterVar(Node):
    """A block iteration variable with its domain and kind (``S`` spatial, ``R`` reduce)."""

    __slots__ = ("var", "dom", "iter_type")
    _fields = ("var", "dom")

    def __init__(self, var: Var, dom: Range, iter_type: str):
        if iter_type not in ITER_TYPES:
            raise ValueError(f"iteration type must be 'S' or 'R', got {iter_type!r}")
        self.var = var
        self.dom = dom
        self.iter_type = iter_type


class BufferRegion(Node):
    """A rectangular region of a buffer, one Range per dimension."""

    __slots__ = ("buffer", "region")
    _fields = ("region",)

    def __init__(self, buffer: Buffer, region):
        self.buffer = buffer
        self.region = tuple(region)

    @staticmethod
    def full(buffer: Buffer) -> "BufferRegion":
        return BufferRegion(buffer, tuple(Range.from_extent(s) for s in buffer.shape))

    @staticmethod
    def point(buffer: Buffer, indices) -> "BufferRegion":
        return BufferRegion(buffer, tuple(Range(i, const(1, i.dtype)) for i in indices))


class Stmt(Node):
    __slots__ = ()


class BufferStore(Stmt):
    __slots__ = ("buffer", "value", "indices")
    _fields = ("value", "indices")

    def __init__(self, buffer: Buffer, value: PrimExpr, indices):
        self.buffer = buffer
        self.value = value
        self.indices = tuple(indices)


class Evaluate(Stmt):
    """An expression evaluated for nothing but its effect (kept for completeness; rarely used)."""

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: PrimExpr):
        self.value = value


class SeqStmt(Stmt):
    __slots__ = ("seq",)
    _fields = ("seq",)

    def __init__(self, seq):
        self.seq = tuple(seq)


class IfThenElse(Stmt):
    __slots__ = ("condition", "then_case", "else_case")
    _fields = ("condition", "then_case", "else_case")

    def __init__(self, condition: PrimExpr, then_case: Stmt, else_case: Stmt | None = None):
        self.condition = condition
        self.then_case = then_case
        self.else_case = else_case


class For(Stmt):
    """``for loop_var in range(min, min + extent)`` of a kind (serial/parallel/vectorized/unrolled).

    ``annotations`` is a plain dict of str -> int/float/str (e.g. ``pragma_auto_unroll_max_step``).
    """

    __slots__ = ("loop_var", "min", "extent", "kind", "body", "annotations")
    _fields = ("loop_var", "min", "extent", "body")

    def __init__(self, loop_var: Var, min, extent, kind: str, body: Stmt, annotations: dict | None = None):
        if kind not in FOR_KINDS:
            raise ValueError(f"loop kind must be one of {FOR_KINDS}, got {kind!r}")
        self.loop_var = loop_var
        self.min = as_expr(min, loop_var.dtype)
        self.extent = as_expr(extent, loop_var.dtype)
        self.kind = kind
        self.body = body
        self.annotations = dict(annotations or {})

    def const_extent(self) -> int | None:
        return self.extent.value if isinstance(self.extent, IntImm) else None


class Block(Stmt):
    """A unit of computation: iteration domain, accessed regions, optional init, body and allocations."""

    __slots__ = ("name", "iter_vars", "reads", "writes", "body", "init", "alloc_buffers", "annotations")
    _fields = ("iter_vars", "reads", "writes", "init", "body")

    def __init__(self, name: str, iter_vars=(), reads=(), writes=(), body: Stmt | None = None,
                 init: Stmt | None = None, alloc_buffers=(), annotations: dict | None = None):
        self.name = name
        self.iter_vars = tuple(iter_vars)
        self.reads = tuple(reads)
        self.writes = tuple(writes)
        self.body = body if body is not None else SeqStmt(())
        self.init = init
        self.alloc_buffers = tuple(alloc_buffers)
        self.annotations = dict(annotations or {})

    @property
    def is_reduction(self) -> bool:
        return any(iv.iter_type == "R" for iv in self.iter_vars)

    @property
    def name_hint(self) -> str:
        """TVM's name of the block's name."""
        return self.name


class BlockRealize(Stmt):
    """Binds a block's iteration variables to values (``iter_values``) under ``predicate``."""

    __slots__ = ("iter_values", "predicate", "block")
    _fields = ("iter_values", "predicate", "block")

    def __init__(self, iter_values, predicate, block: Block):
        self.iter_values = tuple(iter_values)
        self.predicate = as_expr(predicate, "bool") if not isinstance(predicate, PrimExpr) else predicate
        self.block = block
        if len(self.iter_values) != len(block.iter_vars):
            raise ValueError(f"block {block.name!r}: {len(block.iter_vars)} iteration variables but "
                             f"{len(self.iter_values)} bindings")


class Allocate(Stmt):
    """A buffer that lives for ``body`` (lowered form only: block allocations become these)."""

    __slots__ = ("buffer", "body")
    _fields = ("body",)

    def __init__(self, buffer: Buffer, body: Stmt):
        self.buffer = buffer
        self.body = body


def seq(*stmts) -> Stmt:
    """Flatten nested sequences; a sequence of one statement is that statement."""
    flat: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif isinstance(s, (list, tuple)):
            for x in s:
                if isinstance(x, SeqStmt):
                    flat.extend(x.seq)
                elif x is not None:
                    flat.append(x)
        else:
            flat.append(s)
    return flat[0] if len(flat) == 1 else SeqStmt(flat)


TRUE = IntImm(1, "bool")
