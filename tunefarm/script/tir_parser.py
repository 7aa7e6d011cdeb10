"""``@T.prim_func`` bodies: syntax tree -> ``PrimFunc``.

The accepted subset is the course's TVMScript (see ``tunefarm.script`` for the list). Anything else raises
``ParseError`` at the offending line: a construct is either understood exactly or rejected, never guessed.
Scoping follows the script's meaning: loop variables live in their loop, block iteration variables and
allocations in their block; intermediate buffers allocated outside any block belong to the root block.
"""
from __future__ import annotations

import ast

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import SCOPES, Buffer
from ..ir.dtype import ALL_TYPES, INT_TYPES
from ..ir.function import PrimFunc, wrap_root
from ..ir.functor import collect_vars, post_order_visit
from .diagnostics import Source, describe
from .expr_parser import _BINOPS, ExprParser, is_py_number, literal_for
from .namespace import ScriptNamespace, TIRNamespace
from .tir_blocks import BlockFrame, BlockParsing, ExplicitRoot, range_from_bounds
from .source import PythonEnv, is_module, is_script_object, plain_constant, _MISSING

_LOOP_KINDS = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorized", "unroll": "unrolled",
               "unrolled": "unrolled"}
_STMT_KINDS = {
    "While": "while loop", "FunctionDef": "nested function", "AsyncFunctionDef": "nested function",
    "ClassDef": "class definition", "Try": "try statement", "TryStar": "try statement", "Raise": "raise",
    "Import": "import", "ImportFrom": "import", "Global": "global statement", "Nonlocal": "nonlocal statement",
    "Delete": "del statement", "Assert": "assert", "Break": "break", "Continue": "continue",
    "AnnAssign": "annotated assignment", "Match": "match statement", "AsyncFor": "async for",
    "AsyncWith": "async with",
}


class _Handle:
    """A ``T.handle`` parameter waiting for its ``T.match_buffer``."""

    def __init__(self, name: str, node):
        self.name = name
        self.node = node
        self.buffer: Buffer | None = None


class PrimFuncParser(BlockParsing, ExprParser):
    """Parses one ``ast.FunctionDef`` decorated with ``@T.prim_func``."""

    def __init__(self, src: Source, env: PythonEnv):
        self.src = src
        self.env = env
        self.scopes: list[dict] = [{}]
        self.blocks: list[BlockFrame] = []
        self.root_allocs: list[Buffer] = []
        self.loop_ranges: dict = {}
        self.attrs: dict | None = None
        self.scalar_nodes: dict = {}  # scalar parameter Var -> its ast.arg (for errors)
        self.let_reads: dict = {}  # a name bound to an expression that reads buffers -> those buffers

    # ------------------------------------------------------------------ names
    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return True, scope[name]
        found, value = self.env.lookup(name)
        if not found:
            return False, None
        if is_script_object(value) or is_module(value):
            return True, value
        const = plain_constant(value)
        if const is _MISSING:
            return True, _Opaque(name, value)
        return True, const

    def bind(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    def t_name(self, node) -> str | None:
        """``"grid"`` for ``T.grid`` (``"axis.remap"`` for ``T.axis.remap``), None if not a ``T.`` name."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts:
            return None
        found, obj = self.lookup(node.id)
        if not found:
            return None
        parts.reverse()
        i = 0
        while not isinstance(obj, TIRNamespace) and i < len(parts):
            if isinstance(obj, ScriptNamespace) or (is_module(obj) and obj.__name__.startswith("tunefarm")):
                obj = getattr(obj, parts[i], None)
                i += 1
            else:
                return None
        if isinstance(obj, TIRNamespace) and i < len(parts):
            return ".".join(parts[i:])
        return None

    def _e_Name(self, node):
        value = super()._e_Name(node)
        if isinstance(value, _Opaque):
            raise self.src.error(node, f"`{node.id}` refers to a Python {type(value.value).__name__}; scripts "
                                       "may only use ints, floats, bools, strings and tuples of them from "
                                       "Python scope", "python-object")
        if isinstance(value, _Handle):
            raise self.src.error(node, f"handle `{node.id}` must be bound with T.match_buffer before use",
                                 "handle")
        return value

    # ------------------------------------------------------------------ function
    def parse(self, fdef: ast.FunctionDef, name: str | None = None) -> PrimFunc:
        args = fdef.args
        for bad, what in ((args.posonlyargs, "positional-only parameters"), (args.kwonlyargs,
                          "keyword-only parameters"), (args.defaults, "default values"),
                          (args.kw_defaults and [d for d in args.kw_defaults if d], "default values")):
            if bad:
                raise self.src.error(fdef, f"{what} are not supported in a prim_func", "signature")
        if args.vararg or args.kwarg:
            raise self.src.error(fdef, "*args / **kwargs are not supported in a prim_func", "signature")
        if fdef.returns is not None and not (isinstance(fdef.returns, ast.Constant) and fdef.returns.value is None):
            raise self.src.error(fdef.returns, "a prim_func returns nothing (annotate `-> None` or leave it out)",
                                 "return-annotation")
        params: list = []
        for a in args.args:
            params.append(self.param(a))
        body = self.stmts(fdef.body, "func")
        for p in params:
            if isinstance(p, _Handle) and p.buffer is None:
                raise self.src.error(p.node, f"parameter `{p.name}` (T.handle) is never bound with T.match_buffer",
                                     "unmatched-handle")
        params = self.without_scalar_dims(params)
        buffers = [p.buffer if isinstance(p, _Handle) else p for p in params]
        root = None
        if len(body) == 1 and isinstance(body[0], ExplicitRoot):
            root = body[0].realize
            if self.root_allocs:
                blk = root.block
                root = root.replace(block=blk.replace(alloc_buffers=tuple(self.root_allocs) + blk.alloc_buffers))
        else:
            stmts = [s.realize if isinstance(s, ExplicitRoot) else s for s in body]
            root = wrap_root(S.seq(*stmts) if stmts else S.SeqStmt(()), self.root_allocs)
        return PrimFunc(buffers, root, self.attrs or {}, name or fdef.name)

    def without_scalar_dims(self, params: list) -> list:
        """Scalar parameters (``n: T.int32``) that size a buffer parameter become its symbolic dimension (read
        from the array's shape at run time, as ``n = T.int32()`` would be); any other scalar is refused."""
        shapes = [s for p in params if not isinstance(p, E.Var)
                  for s in (p.buffer.shape if isinstance(p, _Handle) else p.shape)]
        dims = {id(v) for s in shapes for v in collect_vars(s)}
        for p in params:
            if isinstance(p, E.Var) and id(p) not in dims:
                raise self.src.error(self.scalar_nodes[p], f"scalar parameter `{p.name}` does not size a buffer "
                                                           "parameter; tunefarm functions take buffers only", "param")
        return [p for p in params if not isinstance(p, E.Var)]

    def param(self, a: ast.arg):
        ann = a.annotation
        if ann is None:
            raise self.src.error(a, f"parameter `{a.arg}` needs a T.Buffer(...) or T.handle annotation", "param")
        tname = self.t_name(ann)
        if tname in INT_TYPES and tname != "bool":
            var = E.Var(a.arg, tname)
            self.scalar_nodes[var] = a
            self.bind(a.arg, var)
            return var
        if tname == "handle":
            h = _Handle(a.arg, a)
            self.bind(a.arg, h)
            return h
        if isinstance(ann, ast.Call) and self.t_name(ann.func) == "Buffer":
            buf = self.buffer_from_call(a.arg, ann, allow=("shape", "dtype", "scope"))
        elif isinstance(ann, ast.Subscript) and self.t_name(ann.value) == "Buffer":
            buf = self.buffer_from_subscript(a.arg, ann)
        else:
            raise self.src.error(ann, f"parameter `{a.arg}`: unsupported annotation `{describe(ann)}` (use "
                                      "T.Buffer(shape, dtype) or T.handle)", "param")
        self.bind(a.arg, buf)
        return buf

    # ------------------------------------------------------------------ buffers
    def shape(self, node) -> tuple:
        v = self.expr(node)
        items = v if isinstance(v, (tuple, list)) else (v,)
        out = []
        for x in items:
            if isinstance(x, bool) or not (isinstance(x, int) or isinstance(x, E.PrimExpr)):
                raise self.src.error(node, f"buffer shape entries must be integers or integer expressions, got "
                                           f"`{describe(node)}`", "shape")
            if isinstance(x, int):
                x = E.IntImm(x, "int32")
            elif not (x.dtype.startswith("int") or x.dtype.startswith("uint")):
                raise self.src.error(node, f"buffer shape entry of dtype {x.dtype}", "shape")
            out.append(x)
        return tuple(out)

    def make_buffer(self, name: str, shape, dtype: str, scope: str, node) -> Buffer:
        if scope not in SCOPES:
            raise self.src.error(node, f"unknown buffer scope {scope!r}; tunefarm knows {SCOPES}", "scope")
        return Buffer(name, shape, dtype, scope)

    def buffer_from_call(self, name: str, call: ast.Call, allow: tuple, skip_first: bool = False) -> Buffer:
        """``T.Buffer(shape, dtype, scope=...)`` / ``T.alloc_buffer(...)`` / ``T.match_buffer(h, ...)``."""
        args = list(call.args[1:] if skip_first else call.args)
        kw = {}
        for k in call.keywords:
            if k.arg is None or k.arg not in allow:
                raise self.src.error(k.value if k.arg else call, f"unsupported argument `{k.arg}` "
                                     f"(supported: {', '.join(allow)})", f"kwarg-{k.arg}")
            kw[k.arg] = k.value
        positional = [a for a in allow if a != "scope"] if "scope" in allow else list(allow)
        if len(args) > len(positional):
            raise self.src.error(call, f"too many positional arguments (expected {', '.join(positional)})",
                                 "arguments")
        for pname, node in zip(positional, args):
            if pname in kw:
                raise self.src.error(call, f"argument `{pname}` given twice", "arguments")
            kw[pname] = node
        if "shape" not in kw:
            raise self.src.error(call, "missing buffer shape", "shape")
        shape = self.shape(kw["shape"])
        dtype = self.dtype_arg(kw["dtype"]) if "dtype" in kw else "float32"
        scope = self.expr(kw["scope"]) if "scope" in kw else "global"
        if not isinstance(scope, str):
            raise self.src.error(kw["scope"], "scope must be a string", "scope")
        return self.make_buffer(name, shape, dtype, scope, call)

    def buffer_from_subscript(self, name: str, node: ast.Subscript) -> Buffer:
        sl = node.slice
        dtype = "float32"
        if isinstance(sl, ast.Tuple) and sl.elts and isinstance(self.expr(sl.elts[-1]), str):
            dtype = self.dtype_arg(sl.elts[-1])
            rest = sl.elts[:-1]
            if len(rest) == 1:
                shape = self.shape(rest[0])
            else:
                shape = self.shape(ast.Tuple(elts=rest, ctx=ast.Load(), lineno=sl.lineno, col_offset=sl.col_offset))
        else:
            shape = self.shape(sl)
        return self.make_buffer(name, shape, dtype, "global", node)

    # ------------------------------------------------------------------ statements
    def stmts(self, nodes, ctx: str) -> list:
        out = []
        for i, node in enumerate(nodes):
            s = self.stmt(node, ctx, i == len(nodes) - 1)
            if s is not None:
                out.append(s)
        return out

    def scoped_body(self, nodes, ctx: str) -> S.Stmt:
        self.scopes.append({})
        try:
            body = self.stmts(nodes, ctx)
        finally:
            self.scopes.pop()
        return S.seq(*body) if body else S.SeqStmt(())

    def stmt(self, node, ctx: str, is_last: bool):
        kind = type(node).__name__
        if kind == "Expr":
            return self.expr_stmt(node, ctx)
        if kind == "Assign":
            return self.assign(node, ctx)
        if kind == "AnnAssign":
            return self.let(node)
        if kind == "AugAssign":
            return self.aug_assign(node)
        if kind == "For":
            return self.for_(node)
        if kind == "With":
            return self.with_(node, ctx)
        if kind == "If":
            return self.if_(node)
        if kind == "Pass":
            return None
        if kind == "Return":
            if node.value is None and ctx == "func" and is_last:
                return None
            raise self.src.error(node, "a prim_func cannot return a value (outputs are written to buffer "
                                       "parameters)", "return")
        what = _STMT_KINDS.get(kind, kind)
        raise self.src.error(node, f"unsupported syntax: {what} is not part of the TensorIR script subset",
                             what)

    def expr_stmt(self, node: ast.Expr, ctx: str):
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # docstring
        if isinstance(value, ast.Call):
            name = self.t_name(value.func)
            handler = _DIRECTIVES.get(name)
            if handler is not None:
                return handler(self, value, ctx)
        raise self.src.error(node, f"expression statement `{describe(value)}` has no effect (statements are "
                                   "stores, loops, blocks, ifs and T.* directives)", "expression-statement")

    def one_arg(self, call, name):
        if call.keywords or len(call.args) != 1:
            raise self.src.error(call, f"T.{name} takes exactly one argument", name)
        return call.args[0]

    def _d_func_attr(self, call, ctx):
        if ctx != "func":
            raise self.src.error(call, "T.func_attr must appear at the top level of the function", "func_attr")
        attrs = self.literal(self.one_arg(call, "func_attr"))
        if not isinstance(attrs, dict):
            raise self.src.error(call, "T.func_attr takes a dict", "func_attr")
        self.attrs = {**(self.attrs or {}), **attrs}
        return None

    def _d_evaluate(self, call, ctx):
        return S.Evaluate(self.prim_expr(self.one_arg(call, "evaluate")))

    def literal(self, node):
        """Attribute values: Python literals, dicts and lists; T.bool(...) becomes a Python bool."""
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    raise self.src.error(node, "dict unpacking is not supported in attributes", "dict")
                key = self.literal(k)
                if not isinstance(key, str):
                    raise self.src.error(k, "attribute keys must be strings", "attr-key")
                out[key] = self.literal(v)
            return out
        if isinstance(node, ast.List):
            return [self.literal(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.literal(e) for e in node.elts)
        if isinstance(node, ast.Call) and self.t_name(node.func) == "bool":
            v = self.expr(node)
            return bool(v.value) if isinstance(v, E.IntImm) else v
        v = self.expr(node)
        if isinstance(v, Buffer):
            raise self.src.error(node, "a buffer cannot be an attribute value", "attr-value")
        return v

    # ------------------------------------------------------------------ assignments
    def assign(self, node: ast.Assign, ctx: str):
        if len(node.targets) != 1:
            raise self.src.error(node, "chained assignment is not supported", "chained-assignment")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self.store(target, self.prim(node.value), node)
        if isinstance(target, ast.Name):
            return self.assign_name(target.id, node.value, ctx, node)
        if isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            value = node.value
            if isinstance(value, ast.Call) and self.t_name(value.func) == "axis.remap":
                return self.axis_remap([t.id for t in target.elts], value, ctx)
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self.assign_name(t.id, v, ctx, node)
                return None
        raise self.src.error(node, f"unsupported assignment target `{describe(target)}`", "assignment")

    def assign_name(self, name: str, value: ast.AST, ctx: str, node):
        tname = self.t_name(value.func) if isinstance(value, ast.Call) else None
        if tname == "match_buffer":
            return self.match_buffer(name, value, ctx)
        if tname == "alloc_buffer":
            buf = self.buffer_from_call(name, value, allow=("shape", "dtype", "scope"))
            (self.blocks[-1].allocs if self.blocks else self.root_allocs).append(buf)
            self.bind(name, buf)
            return None
        if tname in ALL_TYPES and not value.args and not value.keywords:
            if ctx != "func":
                raise self.src.error(value, "symbolic variables (`n = T.int64()`) must be declared at the top "
                                            "level of the function", "symbolic-var")
            self.bind(name, E.Var(name, tname))
            return None
        if tname == "axis.remap":
            return self.axis_remap([name], value, ctx)
        if tname in ("axis.spatial", "axis.reduce", "axis.S", "axis.R"):
            return self.axis(name, value, tname.split(".")[1], ctx)
        if tname is not None and tname.startswith("axis."):
            raise self.src.error(value, f"T.{tname} is not supported (use T.axis.spatial / reduce / remap)",
                                 tname)
        v = self.expr(value)
        if isinstance(v, (Buffer, _Handle)):
            raise self.src.error(node, "aliasing a buffer under another name is not supported", "alias")
        self.bind_let(name, v)
        return None

    def let(self, node: ast.AnnAssign):
        """``v: T.float32 = expr`` (TVM's let): bound like ``v = expr`` once its dtype is checked."""
        dtype = self.t_name(node.annotation)
        if not isinstance(node.target, ast.Name) or node.value is None or dtype not in ALL_TYPES:
            raise self.src.error(node, "an annotated assignment must be `name: T.<dtype> = value`", "let")
        v = self.prim(node.value)
        v = literal_for(v, dtype) if is_py_number(v) else v
        if v.dtype != dtype:
            raise self.src.error(node, f"`{node.target.id}: T.{dtype}` is bound to a {v.dtype} value", "let")
        self.bind_let(node.target.id, v)

    def bind_let(self, name: str, v) -> None:
        """The IR has no let-statements: a name stands for its expression, substituted where it is used. A value
        that reads a buffer is only valid until that buffer is written (``store`` marks it stale)."""
        if isinstance(v, E.PrimExpr) and _has_load(v):
            self.let_reads[name] = _loaded_buffers(v)
        else:
            self.let_reads.pop(name, None)
        self.bind(name, v)

    def stale_lets(self, buf: Buffer) -> None:
        for name, bufs in list(self.let_reads.items()):
            if buf in bufs:
                del self.let_reads[name]
                self.bind(name, _StaleLet(f"`{name}` reads {buf.name}, which is written after `{name}` is bound; "
                                          "the IR has no let-statements, so the read cannot be kept before the "
                                          "write (use the value before writing the buffer)"))

    def match_buffer(self, name: str, call: ast.Call, ctx: str):
        if ctx != "func":
            raise self.src.error(call, "T.match_buffer is only supported at the top level of the function",
                                 "match_buffer")
        if not call.args:
            raise self.src.error(call, "T.match_buffer needs a handle parameter", "match_buffer")
        h = call.args[0]
        found, handle = self.lookup(h.id) if isinstance(h, ast.Name) else (False, None)
        if not isinstance(handle, _Handle):
            raise self.src.error(h, f"T.match_buffer expects a T.handle parameter, got `{describe(h)}`",
                                 "match_buffer")
        if handle.buffer is not None:
            raise self.src.error(call, f"handle `{handle.name}` is matched twice", "match_buffer")
        handle.buffer = self.buffer_from_call(name, call, allow=("shape", "dtype", "scope"), skip_first=True)
        if handle.buffer.scope != "global":
            raise self.src.error(call, "parameter buffers live in global scope", "scope")
        self.bind(name, handle.buffer)
        return None

    def store(self, target: ast.Subscript, value, node):
        buf = self.expr(target.value)
        if not isinstance(buf, Buffer):
            raise self.src.error(target, f"cannot store into `{describe(target.value)}` (not a buffer)", "store")
        indices = self.buffer_indices(buf, target)
        if is_py_number(value):
            if isinstance(value, float) and not buf.dtype.startswith("float"):
                raise self.src.error(node, f"float value stored into {buf.dtype} buffer {buf.name}", "store-dtype")
            value = literal_for(value, buf.dtype)
        elif value.dtype != buf.dtype:
            raise self.src.error(node, f"value of dtype {value.dtype} stored into buffer {buf.name} of dtype "
                                       f"{buf.dtype} (convert with T.Cast)", "store-dtype")
        self.stale_lets(buf)
        return S.BufferStore(buf, value, indices)

    def aug_assign(self, node: ast.AugAssign):
        if not isinstance(node.target, ast.Subscript):
            raise self.src.error(node, "augmented assignment is only supported on buffer elements", "augassign")
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.src.error(node, f"unsupported operator in `{describe(node)}`", "augassign")
        load = self.expr(node.target)
        return self.store(node.target, self.binary(op, load, self.prim(node.value), node), node)

    # ------------------------------------------------------------------ loops
    def for_(self, node: ast.For):
        if node.orelse:
            raise self.src.error(node, "for-else is not supported", "for-else")
        it = node.iter
        if not isinstance(it, ast.Call):
            raise self.src.error(it, f"unsupported loop iterator `{describe(it)}` (use range, T.grid, T.serial, "
                                     "T.parallel, T.vectorized or T.unroll)", "loop-iterator")
        tname = self.t_name(it.func)
        is_range = isinstance(it.func, ast.Name) and it.func.id == "range" and not self.lookup("range")[0]
        targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        for t in targets:
            if not isinstance(t, ast.Name):
                raise self.src.error(t, f"loop target must be a name, got `{describe(t)}`", "loop-target")
        if tname == "grid":
            if it.keywords:
                raise self.src.error(it, "T.grid takes extents only", "grid")
            if len(it.args) != len(targets):
                raise self.src.error(node, f"T.grid has {len(it.args)} extents but {len(targets)} loop variables",
                                     "grid")
            specs = [(t.id, E.IntImm(0, ext.dtype), ext, "serial", {}, ext.dtype)
                     for t, ext in zip(targets, (self.index(a) for a in it.args))]
        elif is_range or tname in _LOOP_KINDS:
            if len(targets) != 1:
                raise self.src.error(node.target, "this loop binds a single variable", "loop-target")
            kind = "serial" if is_range else _LOOP_KINDS[tname]
            specs = [self.loop_spec(targets[0].id, it, kind, allow_kw=not is_range)]
        else:
            raise self.src.error(it, f"unsupported loop iterator `{describe(it)}` (use range, T.grid, T.serial, "
                                     "T.parallel, T.vectorized or T.unroll)", "loop-iterator")
        self.scopes.append({})
        loop_vars = []
        try:
            for name, lmin, lext, kind, ann, dtype in specs:
                v = E.Var(name, dtype)
                loop_vars.append(v)
                self.loop_ranges[v] = (lmin, lext)
                self.bind(name, v)
            body = self.stmts(node.body, "inner")
        finally:
            self.scopes.pop()
        out = S.seq(*body) if body else S.SeqStmt(())
        for v, (name, lmin, lext, kind, ann, dtype) in reversed(list(zip(loop_vars, specs))):
            out = S.For(v, lmin, lext, kind, out, ann)
        return out

    def loop_spec(self, name: str, call: ast.Call, kind: str, allow_kw: bool):
        kw = {}
        for k in call.keywords:
            if not allow_kw or k.arg not in ("annotations", "dtype"):
                raise self.src.error(k.value if k.arg else call, f"unsupported loop argument `{k.arg}`",
                                     f"loop-kwarg-{k.arg}")
            kw[k.arg] = k.value
        args = call.args
        if len(args) == 3:
            step = self.expr(args[2])
            if step != 1:
                raise self.src.error(args[2], "loop steps other than 1 are not supported", "loop-step")
            args = args[:2]
        if len(args) == 1:
            lext = self.index(args[0])
            lmin = None
        elif len(args) == 2:
            lmin, lext = range_from_bounds(self.index(args[0]), self.index(args[1]))
        else:
            raise self.src.error(call, "a loop takes (extent) or (start, stop)", "loop-args")
        dtype = self.dtype_arg(kw["dtype"]) if "dtype" in kw else lext.dtype
        if lmin is None:
            lmin = E.IntImm(0, dtype)
        ann = {}
        if "annotations" in kw:
            ann = self.literal(kw["annotations"])
            if not isinstance(ann, dict):
                raise self.src.error(kw["annotations"], "annotations must be a dict", "annotations")
        return (name, lmin, lext, kind, ann, dtype)

    # ------------------------------------------------------------------ if
    def if_(self, node: ast.If):
        cond = self.prim(node.test)
        then = self.scoped_body(node.body, "inner")
        other = self.scoped_body(node.orelse, "inner") if node.orelse else None
        if is_py_number(cond):
            return then if cond else other
        if cond.dtype != "bool":
            raise self.src.error(node.test, f"an if condition must be a boolean expression, got {cond.dtype}",
                                 "if-condition")
        return S.IfThenElse(cond, then, other)


class _Opaque:
    """An outer Python value the script may not use (reported only if the script actually uses it)."""

    def __init__(self, name, value):
        self.name = name
        self.value = value


class _StaleLet:
    """What a let-bound name becomes once a buffer its value reads is written: any use is an error."""

    def __init__(self, reason: str):
        self.stale_reason = reason


def _loaded_buffers(e) -> set:
    found = set()
    post_order_visit(e, lambda n: found.add(n.buffer) if isinstance(n, E.BufferLoad) else None)
    return found


def _has_load(e) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(1) if isinstance(n, E.BufferLoad) else None)
    return bool(found)


_DIRECTIVES = {
    "func_attr": PrimFuncParser._d_func_attr,
    "reads": PrimFuncParser._d_regions,
    "writes": PrimFuncParser._d_regions,
    "where": PrimFuncParser._d_where,
    "block_attr": PrimFuncParser._d_block_attr,
    "evaluate": PrimFuncParser._d_evaluate,
}
