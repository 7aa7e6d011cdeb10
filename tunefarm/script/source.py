"""Where a script comes from: its source text, and the outer Python names it may refer to.

Scripts may use Python values defined around them (``n = 128`` then ``T.Buffer((n, n), "float32")``). The
parser resolves such names from the function's closure cells, the locals of the scope that applied the
decorator, and the function's globals. Only plain data is accepted (ints, floats, bools, strings, tuples and
lists of them) plus the script namespaces themselves: nothing is ever called or executed.
"""
from __future__ import annotations

import inspect
import textwrap
import types

from .diagnostics import ParseError, Source
from .namespace import ScriptNamespace

_MISSING = object()


def is_script_object(value) -> bool:
    """Namespaces (``T``, ``I``) and decorators (``T.prim_func``, ``ir_module``) the parser dispatches on."""
    return isinstance(value, ScriptNamespace) or hasattr(value, "_script_key")


def plain_constant(value):
    """``value`` if it is plain data a script may use, else ``_MISSING``. Never calls user code."""
    t = type(value)
    if t in (int, float, bool, str):
        return value
    if t in (tuple, list):
        items = [plain_constant(v) for v in value]
        if any(v is _MISSING for v in items):
            return _MISSING
        return tuple(items) if t is tuple else items
    mod = t.__module__
    if mod == "numpy" and t.__name__ in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                          "uint64", "float16", "float32", "float64", "bool_"):
        return value.item()
    return _MISSING


class PythonEnv:
    """Outer Python scopes of a script, innermost first."""

    def __init__(self, scopes=()):
        self.scopes = [s for s in scopes if s is not None]

    def lookup(self, name: str):
        """``(found, value)``; ``value`` is plain data, a script object or a module."""
        for scope in self.scopes:
            if name in scope:
                return True, scope[name]
        return False, None

    def with_scope(self, scope: dict) -> "PythonEnv":
        return PythonEnv([scope] + self.scopes)


def env_of_function(func, caller_locals=()) -> PythonEnv:
    """Closure variables, decorator-site locals, then globals of a Python function."""
    scopes = []
    try:
        scopes.append(dict(inspect.getclosurevars(func).nonlocals))
    except (TypeError, ValueError):  # builtins or odd callables: no closure to read
        pass
    scopes.extend(caller_locals)
    scopes.append(getattr(func, "__globals__", {}))
    return PythonEnv(scopes)


def _class_at(obj, line: int):
    """``(lines, start)`` of the class ``obj`` whose definition (or first decorator) is at ``line``.

    Python (before 3.13) does not record where a class was defined, and ``inspect`` returns the *first*
    class of that name in the file; a file that defines ``class Module`` twice (two printed modules pasted
    one after the other) would silently get the first one parsed for both. The decorator knows the line it
    was applied at, which picks the right one.
    """
    import ast

    all_lines, _ = inspect.findsource(obj)
    tree = ast.parse("".join(all_lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == obj.__name__:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if line in (first, node.lineno) or any(d.lineno == line for d in node.decorator_list):
                return all_lines[first - 1:node.end_lineno], first
    return None


def source_of(obj, what: str, line: int | None = None) -> Source:
    """The dedented source of a function or class, remembering its place in the file. For a class, ``line``
    (where its decorator was applied) picks the right definition when several classes share its name."""
    try:
        found = _class_at(obj, line) if line is not None and inspect.isclass(obj) else None
        lines, start = found if found is not None else inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (OSError, TypeError, SyntaxError) as e:
        name = getattr(obj, "__qualname__", repr(obj))
        raise ParseError(f"cannot read the source of {what} {name} ({e}); parse text with "
                         "tunefarm.script.from_source instead", construct="no-source") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    first_dedented = next((ln for ln in dedented.splitlines() if ln.strip()), "")
    col_offset = len(first) - len(first_dedented)
    return Source(dedented, filename, start - 1, col_offset)


def is_module(value) -> bool:
    return isinstance(value, types.ModuleType)
