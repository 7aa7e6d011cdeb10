"""Index maps (``lambda i, j: (j, i // 2, i % 2)``) as data.

``reindex_cache_read`` / ``reindex_cache_write`` take a user's function from block iteration variables to a
cache's indices. A trace must replay it without running user code, so the map is recorded as its text in
TVM's printed form and read back with ``ast``: only the lambda's parameters, integers, ``T.<int dtype>(k)``,
``+ - * // %`` and unary minus are allowed.
"""
from __future__ import annotations

import ast
import inspect

from ..ir import expr as E
from ..ir.dtype import INT_TYPES
from .error import ScheduleError

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}


def _param_names(fn, n: int, prim: str) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    if len(params) != n or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise ScheduleError(prim, f"the index map must take {n} positional arguments (one per block iteration "
                                  "variable)")
    return [p.name for p in params]


def index_map_text(index_map, block_vars: list[E.Var], prim: str) -> tuple[str, list[E.PrimExpr]]:
    """``(text, indices)``: the map as TVM prints it, and its result on ``block_vars``. ``index_map`` is a callable
    or such a text (a replayed trace)."""
    if isinstance(index_map, str):
        return index_map, parse_index_map(index_map, block_vars, prim)
    if not callable(index_map):
        raise ScheduleError(prim, f"the index map must be a function or its text, got {type(index_map).__name__}")
    names = _param_names(index_map, len(block_vars), prim)
    params = [E.Var(name, v.dtype) for name, v in zip(names, block_vars)]
    out = index_map(*params)
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if not out or not all(isinstance(e, (E.PrimExpr, int)) and not isinstance(e, bool) for e in out):
        raise ScheduleError(prim, "the index map must return integer index expressions")
    text = f"lambda {', '.join(names)}: ({', '.join(str(e) for e in out)}{',' if len(out) == 1 else ''})"
    return text, parse_index_map(text, block_vars, prim)


def parse_index_map(text: str, block_vars: list[E.Var], prim: str) -> list[E.PrimExpr]:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ScheduleError(prim, f"the index map {text!r} is not Python") from None
    if not isinstance(node, ast.Lambda) or node.args.vararg or node.args.kwarg or node.args.kwonlyargs \
            or node.args.defaults or len(node.args.args) != len(block_vars):
        raise ScheduleError(prim, f"the index map {text!r} must be a lambda of {len(block_vars)} arguments")
    env = {a.arg: v for a, v in zip(node.args.args, block_vars)}
    body = node.body.elts if isinstance(node.body, (ast.Tuple, ast.List)) else [node.body]
    out = [_expr(e, env, text, prim) for e in body]
    out = [E.const(e, "int32") if isinstance(e, int) else e for e in out]
    if not out or not all(e.dtype in INT_TYPES for e in out):
        raise ScheduleError(prim, f"the index map {text!r} must give integer indices")
    return out


def _expr(node, env: dict, text: str, prim: str):
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_expr(node.operand, env, text, prim)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _expr(node.left, env, text, prim), _expr(node.right, env, text, prim)
        if isinstance(b, int) and b == 0 and type(node.op) in (ast.FloorDiv, ast.Mod):
            raise ScheduleError(prim, f"the index map {text!r} divides by zero")
        return _apply(_OPS[type(node.op)], a, b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "T" and node.func.attr in INT_TYPES and len(node.args) == 1 \
            and not node.keywords and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, int):
        return E.const(node.args[0].value, node.func.attr)
    raise ScheduleError(prim, f"the index map {text!r} uses {ast.unparse(node)!r}: only its arguments, integers "
                              "and + - * // % are allowed")


def _apply(op: str, a, b):
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
            "%": lambda: a % b}[op]()
