"""The script parser's entry points: script functions (what the decorators call), ``ir_module`` classes and
``from_source``.

Functions are dispatched on their decorator through ``FUNCTION_PARSERS`` (key ``"tir.prim_func"``; the graph
front end registers ``"relax.function"``), so new function kinds plug in without touching this file:

    register_function_parser("relax.function", handler)   # handler(ParseContext, ast.FunctionDef, kwargs)
    register_namespace("R", R, tvm_name="relax")          # lets from_source / imports resolve ``R``

A decorator object is recognised by its ``_script_key`` attribute; namespaces by ``_script_namespace``.
Unknown decorators are an error naming the decorator and line.
"""
from __future__ import annotations

import ast
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Callable

import tunefarm

from ..ir.module import IRModule
from .diagnostics import ParseError, Source, describe
from .namespace import DeferredScriptFunction, ScriptNamespace
from .source import PythonEnv, env_of_function, is_module, is_script_object, plain_constant, source_of, _MISSING
from .tir_parser import PrimFuncParser


@dataclass
class ParseContext:
    """What a function parser gets: the source (for errors), outer names, and the module being built."""

    src: Source
    env: PythonEnv
    module_functions: dict = field(default_factory=dict)  # functions parsed so far in the same module
    module_names: tuple = ()  # every function name of the module (known before any body is parsed)


def _parse_prim_func(ctx: ParseContext, fdef: ast.FunctionDef, kwargs: dict):
    return PrimFuncParser(ctx.src, ctx.env).parse(fdef)


FUNCTION_PARSERS: dict[str, Callable] = {"tir.prim_func": _parse_prim_func}
_DECORATOR_KWARGS = {"tir.prim_func": {"private", "check_well_formed"}}

# names from_source knows without imports, and what `from tvm.script import <x> as <y>` maps to; filled by
# ``entry.py`` (T, I, ir_module, tvm) and ``relax_namespace.py`` (R), which hold the decorators
DEFAULT_ALIASES: dict = {}
_TVM_SCRIPT_NAMES: dict = {}


def register_function_parser(key: str, handler: Callable, kwargs: set | None = None) -> None:
    """Add a function kind: ``handler(ctx, fdef, kwargs) -> function`` for decorators whose key is ``key``."""
    FUNCTION_PARSERS[key] = handler
    _DECORATOR_KWARGS[key] = set(kwargs or ())


def register_namespace(alias: str, namespace, tvm_name: str | None = None) -> None:
    """Make ``alias`` (e.g. ``"R"``) known to ``from_source`` and ``from tvm.script import <tvm_name>``."""
    DEFAULT_ALIASES[alias] = namespace
    if tvm_name:
        _TVM_SCRIPT_NAMES[tvm_name] = namespace


# -----------------------------------------------------------------------------------------------------------
# decorators
# -----------------------------------------------------------------------------------------------------------
def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def resolve_decorator(src: Source, env: PythonEnv, dec) -> tuple[str, dict]:
    """``(key, kwargs)`` of a decorator expression such as ``T.prim_func`` or ``T.prim_func(private=True)``."""
    call = dec if isinstance(dec, ast.Call) else None
    target = call.func if call is not None else dec
    parts = _dotted(target)
    obj = None
    if parts is not None:
        found, obj = env.lookup(parts[0])
        if not found:
            obj = None
        for p in parts[1:]:
            if obj is None:
                break
            if isinstance(obj, ScriptNamespace) or (is_module(obj) and obj.__name__.startswith("tunefarm")):
                obj = getattr(obj, p, None)
            else:
                obj = None
    key = getattr(obj, "_script_key", None) if obj is not None else None
    if key is None:
        raise src.error(dec, f"unknown decorator `@{describe(dec)}` (script functions use @T.prim_func; "
                             f"known kinds: {', '.join(sorted(FUNCTION_PARSERS))})", "unknown-decorator")
    kwargs = {}
    if call is not None:
        if call.args:
            raise src.error(call, f"@{describe(target)} takes keyword arguments only", "decorator-args")
        allowed = _DECORATOR_KWARGS.get(key, set())
        for k in call.keywords:
            if k.arg not in allowed:
                raise src.error(call, f"@{describe(target)}: unsupported argument `{k.arg}`", "decorator-args")
            if not isinstance(k.value, ast.Constant):
                raise src.error(k.value, "decorator arguments must be literals", "decorator-args")
            kwargs[k.arg] = k.value.value
    return key, kwargs


def _function_key(src: Source, env: PythonEnv, fdef: ast.FunctionDef) -> tuple[str, dict]:
    keys = [resolve_decorator(src, env, d) for d in fdef.decorator_list]
    if not keys:
        raise src.error(fdef, f"function `{fdef.name}` has no script decorator (@T.prim_func)", "no-decorator")
    if len(keys) > 1:
        raise src.error(fdef, f"function `{fdef.name}` has more than one decorator", "decorators")
    key, kwargs = keys[0]
    if key not in FUNCTION_PARSERS:
        raise src.error(fdef.decorator_list[0], f"@{describe(fdef.decorator_list[0])} does not define a function "
                                                f"(known kinds: {', '.join(sorted(FUNCTION_PARSERS))})",
                        "unknown-decorator")
    return key, kwargs


def parse_function_def(ctx: ParseContext, fdef: ast.FunctionDef, key: str | None = None, kwargs=None):
    if key is None:
        key, kwargs = _function_key(ctx.src, ctx.env, fdef)
    try:
        return FUNCTION_PARSERS[key](ctx, fdef, kwargs or {})
    except RecursionError:  # the parsers recurse over the syntax tree: a huge expression ends here
        raise ctx.src.error(fdef, f"function `{fdef.name}` is nested too deeply to parse (an expression of "
                                  "hundreds of terms? split it into several statements)", "too-deep") from None


def _find_def(src: Source, tree: ast.Module, kinds, what: str):
    for node in tree.body:
        if isinstance(node, kinds):
            return node
    raise ParseError(f"no {what} definition found in the source", src.filename, construct="no-definition")


def parse_python_function(func, key: str, caller_locals=(), kwargs=None):
    """What ``@T.prim_func`` calls: read the function's source and parse it with its outer names."""
    src = source_of(func, "function")
    tree = src.parse()
    fdef = _find_def(src, tree, (ast.FunctionDef, ast.AsyncFunctionDef), "function")
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise src.error(fdef, "async functions cannot be script functions", "async")
    ctx = ParseContext(src, env_of_function(func, caller_locals))
    return parse_function_def(ctx, fdef, key, kwargs)


# -----------------------------------------------------------------------------------------------------------
# modules
# -----------------------------------------------------------------------------------------------------------
def _module_attrs(src: Source, env: PythonEnv, node: ast.Expr) -> dict:
    parser = PrimFuncParser(src, env)
    call = node.value
    if len(call.args) != 1 or call.keywords:
        raise src.error(call, "I.module_attrs takes one dict", "module_attrs")
    attrs = parser.literal(call.args[0])
    if not isinstance(attrs, dict):
        raise src.error(call, "I.module_attrs takes a dict", "module_attrs")
    return attrs


def _is_module_attrs(env: PythonEnv, node) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    parts = _dotted(node.value.func)
    if not parts or len(parts) != 2 or parts[1] != "module_attrs":
        return False
    found, obj = env.lookup(parts[0])
    return found and isinstance(obj, ScriptNamespace) and obj._script_namespace == "ir"


def parse_class_def(src: Source, env: PythonEnv, cdef: ast.ClassDef, function_envs: dict | None = None) -> IRModule:
    """An ``@ir_module`` class: each method is dispatched on its decorator."""
    if cdef.bases or cdef.keywords:
        raise src.error(cdef, "an ir_module class cannot have base classes", "class-bases")
    defs = [n for n in cdef.body if isinstance(n, ast.FunctionDef)]
    ctx_names = tuple(d.name for d in defs)
    functions: dict = {}
    attrs: dict = {}
    for node in cdef.body:
        if isinstance(node, ast.FunctionDef):
            if node.name in functions:
                raise src.error(node, f"function `{node.name}` defined twice in module {cdef.name}", "duplicate")
            fenv = (function_envs or {}).get(node.name, env)
            ctx = ParseContext(src, fenv, functions, ctx_names)
            functions[node.name] = parse_function_def(ctx, node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # docstring
        elif isinstance(node, ast.Pass):
            continue
        elif _is_module_attrs(env, node):
            attrs.update(_module_attrs(src, env, node))
        else:
            raise src.error(node, f"unsupported statement in ir_module class {cdef.name}: `{describe(node)}` "
                                  "(only decorated functions and I.module_attrs)", "class-body")
    return _finalize(IRModule(functions, attrs))


def _finalize(mod: IRModule) -> IRModule:
    """Give functions that refer to their module a chance to resolve those references."""
    changed = {}
    for name, f in mod.functions.items():
        hook = getattr(f, "_finalize_in_module", None)
        if hook is not None:
            changed[name] = hook(mod)
    if changed:
        mod = IRModule({k: changed.get(k, v) for k, v in mod.functions.items()}, mod.attrs)
    return mod


def parse_python_class(cls, caller_locals=(), line: int | None = None) -> IRModule:
    """What ``@ir_module`` calls: parse the class source (the definition at ``line``, where the decorator was
    applied, when given); methods keep their own closure variables."""
    src = source_of(cls, "class", line)
    tree = src.parse()
    cdef = _find_def(src, tree, ast.ClassDef, "class")

    module_globals = getattr(sys.modules.get(cls.__module__), "__dict__", {})
    env = PythonEnv(list(caller_locals) + [module_globals])
    function_envs = {}
    for name, value in cls.__dict__.items():
        func = getattr(value, "__script_source_function__", None)
        if func is None and callable(value) and hasattr(value, "__code__"):
            func = value
        if func is not None:
            function_envs[name] = env_of_function(func, caller_locals)
    return parse_class_def(src, env, cdef, function_envs)


# -----------------------------------------------------------------------------------------------------------
# text
# -----------------------------------------------------------------------------------------------------------
def _import_aliases(src: Source, node) -> dict:
    out = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            root = a.name.split(".")[0]
            if a.name not in ("tunefarm", "tvm", "tunefarm.script", "tvm.script") or (
                    a.asname and a.name not in ("tvm", "tunefarm")):
                raise src.error(node, f"from_source only accepts imports of the script namespaces, not "
                                      f"`{describe(node)}`", "import")
            if root == "tvm":
                out[a.asname or "tvm"] = DEFAULT_ALIASES["tvm"]
            else:
                out[a.asname or "tunefarm"] = tunefarm
        return out
    mod = node.module or ""
    for a in node.names:
        name = a.asname or a.name
        if mod == "tvm.script":
            value = _TVM_SCRIPT_NAMES.get(a.name)
        elif mod == "tunefarm.script" and node.level == 0:
            # the package this parser belongs to, imported already: nothing is imported (and run) here
            value = getattr(sys.modules["tunefarm.script"], a.name, None)
            if value is not None and not is_script_object(value):
                value = None
        else:
            value = None
        if value is None:
            raise src.error(node, f"from_source only accepts imports of the script namespaces, not "
                                  f"`{describe(node)}`", "import")
        out[name] = value
    return out


def _is_metadata(node) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "metadata")


def from_source(text: str, name: str | None = None, filename: str = "<script>", constants: dict | None = None):
    """Parse script text (one ``@T.prim_func`` or ``@ir_module`` class, e.g. a printed program) without
    executing anything. ``name`` picks one definition when the text has several; ``constants`` supplies
    outer Python names (plain data only)."""
    if not isinstance(text, str):
        raise TypeError(f"from_source expects a string, got {type(text).__name__}")
    src = Source(textwrap.dedent(text), filename)
    tree = src.parse()
    scope = {"tunefarm": tunefarm, **DEFAULT_ALIASES}
    for k, v in (constants or {}).items():
        if plain_constant(v) is _MISSING:
            raise TypeError(f"constant {k!r} must be plain data (int, float, bool, str, tuples), got "
                            f"{type(v).__name__}")
        scope[k] = v
    defs = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scope.update(_import_aliases(src, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        elif _is_metadata(node):  # ``script(show_meta=True)``'s bound arrays: plain literals, never executed
            try:
                scope["metadata"] = ast.literal_eval(node.value)
            except ValueError:
                raise src.error(node, "the metadata section must be plain literals", "metadata") from None
        else:
            raise src.error(node, f"unsupported top-level statement `{describe(node)}` (from_source reads "
                                  "script definitions only)", "top-level")
    if not defs:
        raise ParseError("no @T.prim_func function or @ir_module class in the source", filename,
                         construct="no-definition")
    if name is not None:
        defs = [d for d in defs if d.name == name]
        if not defs:
            raise ParseError(f"no definition named {name!r} in the source", filename, construct="no-definition")
    elif len(defs) > 1:
        raise ParseError(f"the source defines {len(defs)} objects ({', '.join(d.name for d in defs)}); pass "
                         "name= to pick one", filename, construct="several-definitions")
    env = PythonEnv([scope])
    node = defs[0]
    if isinstance(node, ast.ClassDef):
        keys = [resolve_decorator(src, env, d)[0] for d in node.decorator_list]
        if keys != ["ir.ir_module"]:
            raise src.error(node, f"class `{node.name}` must be decorated with @ir_module (or @I.ir_module)",
                            "class-decorator")
        return parse_class_def(src, env, node)
    ctx = ParseContext(src, env)
    return parse_function_def(ctx, node)


__all__ = ["ParseContext", "register_function_parser", "register_namespace", "from_source",
           "parse_python_function", "parse_python_class", "parse_function_def", "resolve_decorator",
           "DeferredScriptFunction"]
