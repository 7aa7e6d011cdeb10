"""``R.Tensor(shape, dtype)`` in graph scripts: parameter and result types, and what an annotation accepts.

String dimensions declare symbolic dims (``R.Tensor((1, "m"))``). Annotations that only check -- a result type,
an annotated binding -- also take the older printers' ``R.Tensor(None, "float32", ndim=2)`` (any shape of that
rank), and ``Tensor(...)`` without ``R.`` is read as ``R.Tensor`` wherever nothing else has that name.
"""
from __future__ import annotations

import ast

from ..ir.dtype import ALL_TYPES
from ..ir.expr import Var
from ..ir.graph_expr import TensorType
from .diagnostics import describe


class TensorTypeParsing:
    """Methods of the graph-script parser that read types; the parser provides ``err``, ``ns_name``,
    ``literal``, ``env``, ``values`` (bound tensors) and ``sym`` (symbolic dims by name)."""

    def is_tensor_ctor(self, func) -> bool:
        """``R.Tensor``, or the older printers' bare ``Tensor`` when nothing else has that name."""
        if isinstance(func, ast.Name) and func.id == "Tensor" and func.id not in self.values:
            return not self.env.lookup("Tensor")[0]
        return self.ns_name(func) == "R.Tensor"

    def tensor_type(self, node, declare: bool, annotation: bool = False):
        """``R.Tensor(shape, dtype)`` (``dtype=`` keyword accepted); string dims declare symbolic vars.

        With ``annotation`` (a return type or an annotated binding, which only check), older printers'
        ``R.Tensor(None, "float32", ndim=2)`` -- any shape of that rank -- is accepted too.
        """
        if not (isinstance(node, ast.Call) and self.is_tensor_ctor(node.func)):
            raise self.err(node, f"expected an R.Tensor(shape, dtype) type, got `{describe(node)}`", "type")
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        unknown = set(kw) - {"shape", "dtype", "ndim"}
        if unknown or len(args) > 2:
            raise self.err(node, f"R.Tensor takes (shape, dtype), got `{describe(node)}`", "type")
        shape_node = args[0] if args else kw.get("shape")
        dtype_node = args[1] if len(args) > 1 else kw.get("dtype")
        dtype = "float32" if dtype_node is None else self.literal(dtype_node)
        if dtype not in ALL_TYPES:
            raise self.err(dtype_node or node, f"unknown dtype {dtype!r}", "dtype")
        if shape_node is None or (isinstance(shape_node, ast.Constant) and shape_node.value is None):
            ndim = self.literal(kw["ndim"]) if "ndim" in kw else -1
            if not annotation or not isinstance(ndim, int) or isinstance(ndim, bool):
                raise self.err(node, "R.Tensor needs a shape (tunefarm has no tensors of unknown shape)", "type")
            return AnyShape(ndim, dtype)
        if "ndim" in kw:
            raise self.err(node, "R.Tensor takes ndim= only with a None shape", "type")
        return TensorType(self.shape(shape_node, declare), dtype)

    def shape(self, node, declare: bool) -> tuple:
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        dims = []
        for e in elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                if not e.value.isidentifier():
                    raise self.err(e, f"symbolic dimension names must be identifiers, got {e.value!r}", "dim")
                if e.value not in self.sym:
                    if not declare:
                        raise self.err(e, f"symbolic dimension {e.value!r} is not declared (declare it in a "
                                          "parameter type or with `n = T.int64()`)", "dim")
                    self.sym[e.value] = Var(e.value, "int64")
                dims.append(self.sym[e.value])
            elif isinstance(e, ast.Name) and e.id in self.sym:
                dims.append(self.sym[e.id])
            else:
                v = self.literal(e)
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise self.err(e, f"tensor dimensions are non-negative ints or symbolic names, got "
                                      f"`{describe(e)}`", "dim")
                dims.append(v)
        return tuple(dims)


def compatible(a: TensorType, b: TensorType) -> bool:
    """Same dtype and rank, equal where both dims are constants (symbolic dims of two functions differ)."""
    return a.dtype == b.dtype and a.ndim == b.ndim and all(
        x == y for x, y in zip(a.shape, b.shape) if isinstance(x, int) and isinstance(y, int))


class AnyShape:
    """``R.Tensor(None, dtype, ndim=k)`` in an annotation: any shape of rank ``k`` (``-1``: any rank)."""

    def __init__(self, ndim: int, dtype: str):
        self.ndim, self.dtype = ndim, dtype

    def __repr__(self) -> str:
        return f'R.Tensor(None, "{self.dtype}", ndim={self.ndim})'


def fits(got: TensorType, want) -> bool:
    """Whether a value of type ``got`` may be annotated ``want`` (same dtype, same dims)."""
    if isinstance(want, AnyShape):
        return got.dtype == want.dtype and want.ndim in (-1, got.ndim)
    if got.dtype != want.dtype or got.ndim != want.ndim:
        return False
    for a, b in zip(got.shape, want.shape):
        if isinstance(a, Var) or isinstance(b, Var):
            if a is not b:
                return False
        elif a != b:
            return False
    return True


__all__ = ["AnyShape", "TensorTypeParsing", "compatible", "fits"]
