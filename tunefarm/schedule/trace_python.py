"""Replaying a trace from its Python text (``Trace.as_python()`` / ``print(sch.trace)``) without running it.

A TVM user keeps traces as the Python TVM prints; TVM replays them with ``exec``. Here the text is data: each
line is read with ``ast`` and must be ``[names =] sch.<method>(arguments)`` where the method is a registered
instruction kind's and the arguments are literals, lists, or names an earlier line bound. Anything else is a
``ValueError`` naming the line.
"""
from __future__ import annotations

import ast

from .instruction import INSTRUCTION_KINDS

_METHODS = frozenset(k.method for k in INSTRUCTION_KINDS.values())


def _value(node, env: dict, line: str):
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e, env, line) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Lambda):  # an index map: handed on as text, which the primitive reads as data
        return ast.unparse(node)
    raise ValueError(f"trace line {line!r}: {ast.unparse(node)!r} is not a literal or an earlier result")


def _targets(stmt, line: str) -> list[str] | None:
    if isinstance(stmt, ast.Expr):
        return None
    if len(stmt.targets) != 1:
        raise ValueError(f"trace line {line!r}: one assignment target expected")
    target = stmt.targets[0]
    elts = target.elts if isinstance(target, ast.Tuple) else [target]
    if not all(isinstance(e, ast.Name) for e in elts):
        raise ValueError(f"trace line {line!r}: results must be bound to plain names")
    return [e.id for e in elts] if isinstance(target, ast.Tuple) else [target.id]


def _call(stmt, line: str) -> ast.Call:
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    ok = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
        isinstance(call.func.value, ast.Name) and call.func.value.id == "sch" and call.func.attr in _METHODS
    if not ok:
        raise ValueError(f"trace line {line!r}: expected sch.<primitive>(...) with a known primitive")
    return call


def apply_python(lines, sch) -> None:
    """Run the ``sch.*`` lines of a Python trace on ``sch`` (a line ``def ...``, ``pass`` or a comment is skipped)."""
    env: dict = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("def ") or line == "pass":
            continue
        try:
            body = ast.parse(line).body
        except SyntaxError:
            raise ValueError(f"trace line {line!r} is not Python") from None
        if len(body) != 1 or not isinstance(body[0], (ast.Expr, ast.Assign)):
            raise ValueError(f"trace line {line!r}: one call per line expected")
        stmt = body[0]
        call = _call(stmt, line)
        args = [_value(a, env, line) for a in call.args]
        kwargs = {k.arg: _value(k.value, env, line) for k in call.keywords if k.arg is not None}
        if len(kwargs) != len(call.keywords):
            raise ValueError(f"trace line {line!r}: ** arguments are not allowed")
        result = getattr(sch, call.func.attr)(*args, **kwargs)
        names = _targets(stmt, line)
        if names is not None:
            outs = list(result) if isinstance(result, (list, tuple)) else [result]
            if len(outs) != len(names):
                raise ValueError(f"trace line {line!r}: {len(outs)} results for {len(names)} names")
            env.update(zip(names, outs))
