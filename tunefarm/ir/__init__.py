"""The tensor IR: expressions, buffers, loops, blocks and PrimFuncs (see docs/ARCHITECTURE.md, layer ``ir``).

The graph IR the script parser, the printer and the graph passes share lives beside it, imported by module:
``graph_expr`` (graph vars, calls, constants), ``graph_function``, ``graph_ops`` (the ops' type rules),
``graph_printer`` and ``call_signature`` (a kernel call checked against its PrimFunc).
"""
from .buffer import Buffer
from .dtype import DType
from .expr import (Binary, BufferLoad, Call, Cast, FloatImm, IntImm, Not, PrimExpr, Select, Var, add, as_expr, call,
                   cast, const, div, floordiv, floormod, logical_and, logical_not, logical_or, max_, min_, mul,
                   select, sub)
from .function import PrimFunc, wrap_root
from .module import IRModule
from .stmt import (TRUE, Allocate, Block, BlockRealize, BufferRegion, BufferStore, Evaluate, For, IfThenElse,
                   IterVar, Range, SeqStmt, Stmt, seq)

__all__ = [n for n in dir() if not n.startswith("_")]
