"""``@R.function`` bodies: syntax tree -> graph ``Function`` (never executed).

The accepted subset is what the MLC course writes and what ``printer`` prints:

* parameters ``x: R.Tensor((1, "m"), "float32")``: a string dimension declares a symbolic dim, shared by
  every later use of the same name (``R.Tensor(("n", "m"), ...)``, ``R.Tensor((1, n), ...)``);
  ``m, n, k = T.int64(), T.int64(), T.int64()`` in the body names them (or declares new ones);
* ``with R.dataflow():`` blocks of bindings ending with ``R.output(a, ...)``; bindings outside a dataflow
  block; ``gv: R.Tensor(...) = lv`` (an alias whose type is checked); ``return v``;
* ``R.call_tir(f, (args,), out_sinfo=R.Tensor(...))`` with ``f`` a PrimFunc of the same module (bare name or
  ``cls.f`` after ``cls = Module``); ``R.call_dps_packed("name", (args,), R.Tensor(...))`` to a PrimFunc of
  the module by name or a registered Python function (``tunefarm.register_func``); the older
  ``R.call_tir(f, (args,), (1, 128), dtype="float32")`` spelling;
* high-level ops ``R.matmul``, ``R.add``, ``R.nn.relu``, ``R.nn.linear``, ``R.nn.conv2d``,
  ``R.nn.max_pool2d``, ``R.flatten``, ``R.reshape``, ``R.permute_dims``; ``R.const(value, dtype)``;
  ``R.func_attr({...})``;
* ``lv: R.Tensor(...) = f(args)`` (or ``cls.f(args)``): a call of another graph function of the module, as
  FuseOps' groups are called (the annotation gives the result type when ``f`` comes later in the module);
* ``metadata["relax.expr.Constant"][i]`` (bound constants, as ``BindParams`` prints them) when the constants
  are provided: ``from_source(text, metadata=...)`` here, a ``metadata`` dict in the Python scope, or the
  metadata section ``script(show_meta=True)`` prints; older printers' ``meta[relay.Constant][i]`` too;
* the older printers' types and op names (``relax_types``; ``relax.nn.dense`` through ``tunefarm.tvm``).

Anything else is a ``ParseError`` at the offending line. Calls to PrimFuncs and graph functions are checked
against their signatures once the whole module is known (``_finalize_in_module``).
"""
from __future__ import annotations

import ast
import contextlib
import contextvars

import numpy as np

from ..ir import graph_ops as ops
from ..ir.call_signature import SignatureError, check_signature
from ..ir.dtype import ALL_TYPES
from ..ir.expr import Var
from ..ir.function import PrimFunc
from ..ir.graph_expr import Call, Constant, GraphExpr, GraphVar, TensorType
from ..ir.graph_function import Binding, DataflowBlock, Function
from ..ir.metadata import decode_array
from .diagnostics import ParseError, describe
from .namespace import ScriptNamespace, TIRNamespace
from .parser import from_source as parse_source
from .relax_types import TensorTypeParsing, compatible, fits
from .source import _MISSING, is_module, plain_constant

_METADATA: contextvars.ContextVar = contextvars.ContextVar("tunefarm_graph_metadata", default=None)
METADATA_KEY = "relax.expr.Constant"

# R.<name> -> graph op, and the keyword names each op accepts (TVM's spellings included)
_OP_CALLS = {
    "matmul": ("matmul", ("out_dtype",)),
    "add": ("add", ()),
    "flatten": ("flatten", ()),
    "reshape": ("reshape", ("shape",)),
    "permute_dims": ("permute_dims", ("axes",)),
    "nn.relu": ("relu", ()),
    "nn.linear": ("dense", ("bias", "out_dtype")),
    "nn.dense": ("dense", ("out_dtype",)),
    "nn.conv2d": ("conv2d", ("strides", "padding")),
    "nn.max_pool2d": ("max_pool2d", ("pool_size", "strides", "padding")),
}
_TENSOR_ARGS = {"matmul": 2, "add": 2, "flatten": 1, "reshape": 1, "permute_dims": 1, "relu": 1, "dense": 3,
                "conv2d": 2, "max_pool2d": 1}


@contextlib.contextmanager
def provide_metadata(metadata):
    """Constants for ``metadata["relax.expr.Constant"][i]`` while parsing inside this ``with``."""
    token = _METADATA.set(metadata)
    try:
        yield
    finally:
        _METADATA.reset(token)


def from_source(text: str, name: str | None = None, metadata=None):
    """``tunefarm.script.from_source`` that can also resolve bound constants (``metadata``).

    ``metadata`` is ``{"relax.expr.Constant": [array, ...]}`` or just the list of arrays, in the order the
    printer numbered them (``Function.metadata()`` gives that dict).
    """
    with provide_metadata(metadata):
        return parse_source(text, name=name)


class ParsedFunction(Function):
    """A parsed graph function whose PrimFunc calls are checked when its module is complete."""

    def _finalize_in_module(self, mod) -> Function:
        check_calls(self, mod, self._where)
        return Function(self.name, self.params, self.blocks, self.ret, self.attrs)


def check_calls(fn: Function, mod, where=None) -> None:
    """Every ``call_tir`` names a PrimFunc of ``mod`` whose signature fits the arguments and result."""
    for b in fn.bindings():
        call = b.value
        if not isinstance(call, Call) or call.op not in ("call_tir", "call_dps_packed", "call_func"):
            continue
        name = call.attrs["func"]
        callee = mod.functions.get(name)
        node = (where or {}).get(id(call))
        if call.op == "call_func":
            if not isinstance(callee, Function) or len(callee.params) != len(call.args) \
                    or not all(compatible(a.type, p.type) for a, p in zip(call.args, callee.params)) \
                    or not compatible(callee.ret.type, call.type):
                msg = f"{fn.name}: {b.var.name} calls {name!r}, which is not a graph function of the module " \
                      "taking these arguments and returning this type"
                raise node(msg) if node else ValueError(msg)
            continue
        if call.op == "call_tir" and not isinstance(callee, PrimFunc):
            msg = (f"R.call_tir: {name!r} is not a PrimFunc of the module (it has "
                   f"{', '.join(sorted(mod.prim_funcs())) or 'none'}); use R.call_dps_packed for registered "
                   "Python functions")
            raise node(msg) if node else ValueError(msg)
        if isinstance(callee, PrimFunc):
            try:
                check_signature(callee, [a.type for a in call.args], call.type, f"{fn.name}: {b.var.name}")
            except SignatureError as e:
                raise node(str(e)) if node else e


def parse_relax_function(ctx, fdef: ast.FunctionDef, kwargs: dict) -> Function:
    """The ``"relax.function"`` handler registered with ``tunefarm.script.register_function_parser``."""
    return RelaxParser(ctx).parse(fdef)


class _ModuleRef:
    """``cls`` after ``cls = Module``: ``cls.f`` names the module's function ``f``."""


class RelaxParser(TensorTypeParsing):
    def __init__(self, ctx):
        self.src = ctx.src
        self.env = ctx.env
        self.module_names = tuple(ctx.module_names or ())
        self.module_functions = ctx.module_functions
        self.sym: dict[str, Var] = {}
        self.values: dict[str, object] = {}
        self.blocks: list[DataflowBlock] = []
        self.attrs: dict = {}
        self.where: dict = {}
        self._metadata_list = None

    # ------------------------------------------------------------------ errors and names
    def err(self, node, msg: str, construct: str = "relax") -> ParseError:
        return self.src.error(node, msg, construct)

    def ns_name(self, node) -> str | None:
        """``"R.call_tir"``, ``"R.nn.relu"``, ``"T.int64"`` for script namespace names, else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts or node.id in self.values:
            return None
        found, obj = self.env.lookup(node.id)
        if not found:
            return None
        parts.reverse()
        i = 0
        # a module may stand for a namespace too: ``tunefarm.tvm.relax`` is ``R`` for the older printers'
        # ``relax.nn.dense`` / ``relax.add``
        while i < len(parts) and not isinstance(obj, ScriptNamespace) \
                and getattr(obj, "_script_namespace", None) is None:
            if is_module(obj) and obj.__name__.startswith("tunefarm"):
                obj = getattr(obj, parts[i], None)
                i += 1
            else:
                return None
        if isinstance(obj, TIRNamespace):
            return "T." + ".".join(parts[i:])
        kind = getattr(obj, "_script_namespace", None)
        if kind == "relax":
            return "R." + ".".join(parts[i:])
        if kind == "relax.nn":
            return "R.nn." + ".".join(parts[i:])
        return None

    def literal(self, node):
        """Plain data: numbers, strings, None, tuples/lists/dicts of them, outer Python constants."""
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (int, float, str, bool))):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.literal(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    raise self.err(node, "dict unpacking is not supported", "dict")
                out[self.literal(k)] = self.literal(v)
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.literal(node.operand)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
        if isinstance(node, ast.Call):
            name = self.ns_name(node.func)
            if name is not None and name.startswith("T.") and name[2:] in ALL_TYPES and len(node.args) == 1:
                v = self.literal(node.args[0])
                if isinstance(v, (int, float)):
                    return v
        if isinstance(node, ast.Name) and node.id not in self.values and node.id not in self.sym:
            found, value = self.env.lookup(node.id)
            if found:
                v = plain_constant(value)
                if v is not _MISSING:
                    return v
        raise self.err(node, f"expected a literal value, got `{describe(node)}`", "literal")

    # ------------------------------------------------------------------ function
    def parse(self, fdef: ast.FunctionDef) -> Function:
        args = fdef.args
        if args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg or args.defaults:
            raise self.err(fdef, "graph functions take plain positional parameters only", "signature")
        params = []
        for a in args.args:
            if a.annotation is None:
                raise self.err(a, f"parameter `{a.arg}` needs an R.Tensor(shape, dtype) annotation", "param")
            if a.arg in self.values:
                raise self.err(a, f"parameter `{a.arg}` appears twice", "param")
            v = GraphVar(a.arg, self.tensor_type(a.annotation, declare=True))
            self.values[a.arg] = v
            params.append(v)
        ret = None
        loose: list[Binding] = []
        body = fdef.body
        for i, node in enumerate(body):
            if ret is not None:
                raise self.err(node, "statements after `return` are not allowed", "return")
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue  # docstring
            if isinstance(node, ast.Pass):
                continue
            if isinstance(node, ast.With):
                self._flush(loose)
                self.dataflow(node)
                continue
            if isinstance(node, ast.Return):
                if node.value is None:
                    raise self.err(node, "a graph function returns a value", "return")
                self._flush(loose)
                ret = self.value(node.value)
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and self.ns_name(node.value.func) == "R.func_attr":
                self.func_attr(node.value)
                continue
            if isinstance(node, ast.Assign) and self.declaration(node):
                continue
            b = self.binding(node)
            if b is None:
                raise self.err(node, f"unsupported statement `{describe(node)}` in a graph function", "statement")
            loose.append(b)
        if ret is None:
            raise self.err(fdef, f"graph function `{fdef.name}` must end with `return <value>`", "return")
        # read after the body: the annotation may use dims the body declares (``n = T.int64()``)
        ret_type = self.tensor_type(fdef.returns, declare=True, annotation=True) if fdef.returns is not None \
            else None
        if ret_type is not None and not fits(ret.type, ret_type):
            raise self.err(fdef.returns, f"`{fdef.name}` is annotated to return {ret_type!r} but returns "
                                         f"{ret.type!r}", "return-type")
        fn = ParsedFunction(fdef.name, params, self.blocks, ret, self.attrs)
        fn._where = self.where
        return fn

    def _flush(self, loose: list) -> None:
        if loose:
            self.blocks.append(DataflowBlock(list(loose), [b.var for b in loose]))
            loose.clear()

    def func_attr(self, call: ast.Call) -> None:
        if len(call.args) != 1 or call.keywords:
            raise self.err(call, "R.func_attr takes one dict", "func_attr")
        attrs = self.literal(call.args[0])
        if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
            raise self.err(call, "R.func_attr takes a dict with string keys", "func_attr")
        self.attrs.update(attrs)

    def declaration(self, node: ast.Assign) -> bool:
        """``m, n = T.int64(), T.int64()`` / ``n = T.int64()`` / ``cls = Module``; False if not one."""
        if len(node.targets) != 1:
            return False
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id not in self.values \
                and (target.id == "cls" or value.id == "Module"):
            self.values[target.id] = _ModuleRef()
            return True
        names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
        vals = [value] if isinstance(target, ast.Name) else list(getattr(value, "elts", []))
        if not names or len(names) != len(vals) or not all(isinstance(n, ast.Name) for n in names):
            return False
        if not all(isinstance(v, ast.Call) and not v.args and not v.keywords
                   and (self.ns_name(v.func) or "").startswith("T.") for v in vals):
            return False
        for n, v in zip(names, vals):
            dtype = self.ns_name(v.func)[2:]
            if dtype not in ("int32", "int64"):
                raise self.err(v, f"symbolic dimensions are T.int64() (or T.int32()), got T.{dtype}()", "dim")
            if n.id in self.values:
                raise self.err(n, f"`{n.id}` is already a tensor of this function", "dim")
            self.sym.setdefault(n.id, Var(n.id, "int64"))
        return True

    # ------------------------------------------------------------------ blocks and bindings
    def dataflow(self, node: ast.With) -> None:
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            raise self.err(node, "only `with R.dataflow():` blocks are allowed in a graph function", "with")
        ctx_expr = node.items[0].context_expr
        if not (isinstance(ctx_expr, ast.Call) and self.ns_name(ctx_expr.func) == "R.dataflow"
                and not ctx_expr.args and not ctx_expr.keywords):
            raise self.err(node, f"unsupported `with {describe(ctx_expr)}` (only `with R.dataflow():`)", "with")
        bindings: list[Binding] = []
        outputs: list[GraphVar] = []
        for i, stmt in enumerate(node.body):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and self.ns_name(stmt.value.func) == "R.output":
                if i != len(node.body) - 1:
                    raise self.err(stmt, "R.output must be the last statement of the dataflow block", "output")
                for a in stmt.value.args:
                    v = self.value(a)
                    if not isinstance(v, GraphVar) or all(b.var is not v for b in bindings):
                        raise self.err(a, f"R.output takes variables bound in this block, got `{describe(a)}`",
                                       "output")
                    outputs.append(v)
                continue
            if isinstance(stmt, ast.Pass):
                continue
            b = self.binding(stmt)
            if b is None:
                raise self.err(stmt, f"unsupported statement `{describe(stmt)}` in a dataflow block", "statement")
            bindings.append(b)
        self.blocks.append(DataflowBlock(bindings, outputs))

    def binding(self, node) -> Binding | None:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.err(node, "bind one value to one name (`lv = R.call_tir(...)`)", "binding")
            name, ann, value_node = node.targets[0].id, None, node.value
        elif isinstance(node, ast.AnnAssign):
            if not isinstance(node.target, ast.Name) or node.value is None:
                raise self.err(node, "annotated bindings look like `gv: R.Tensor(...) = lv`", "binding")
            name, ann, value_node = node.target.id, node.annotation, node.value
        else:
            return None
        if name in self.values or name in self.sym:
            raise self.err(node, f"`{name}` is bound twice (graph functions bind each name once)", "rebinding")
        want = self.tensor_type(ann, declare=False, annotation=True) if ann is not None else None
        if isinstance(value_node, ast.Call) and self.module_function(value_node.func) is not None:
            value = self.record(value_node, self.func_call(value_node, want))
        else:
            value = self.value(value_node)
        if ann is not None:
            if not fits(value.type, want):
                raise self.err(ann, f"`{name}` is annotated {want!r} but the value is {value.type!r}", "type")
        var = GraphVar(name, value.type)
        self.values[name] = var
        return Binding(var, value)

    # ------------------------------------------------------------------ values
    def value(self, node) -> GraphExpr:
        if isinstance(node, ast.Name):
            v = self.values.get(node.id)
            if isinstance(v, GraphExpr):
                return v
            if node.id in self.module_names:
                raise self.err(node, f"`{node.id}` is a function of the module, not a tensor", "value")
            raise self.err(node, f"undefined tensor `{node.id}`", "undefined-name")
        if isinstance(node, ast.Subscript):
            return self.metadata_constant(node)
        if isinstance(node, ast.Call):
            name = self.ns_name(node.func)
            if name is None:
                if self.module_function(node.func) is not None:
                    return self.record(node, self.func_call(node, None))
                raise self.err(node, f"call to unsupported function `{describe(node.func)}`", "call")
            if name == "R.call_tir":
                return self.record(node, self.call_tir(node))
            if name == "R.call_dps_packed":
                return self.record(node, self.call_dps_packed(node))
            if name == "R.const":
                return self.const(node)
            op = _OP_CALLS.get(name[2:])
            if op is not None:
                return self.op_call(node, name, *op)
            raise self.err(node, f"{name} is not supported in graph functions", "unknown-" + name)
        raise self.err(node, f"unsupported expression `{describe(node)}` (expected a tensor, a call or a constant)",
                       "value")

    def module_function(self, func) -> str | None:
        """The module function a call names (``f`` or ``cls.f``), or None."""
        if isinstance(func, ast.Name) and func.id not in self.values and func.id in self.module_names:
            return func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and isinstance(self.values.get(func.value.id), _ModuleRef) and func.attr in self.module_names:
            return func.attr
        return None

    def func_call(self, node: ast.Call, want) -> Call:
        """``f(args)``: a call of another graph function of the module (FuseOps' groups are called so).

        Its result type is the annotation of the binding, or the callee's when it is already parsed."""
        fname = self.module_function(node.func)
        if node.keywords:
            raise self.err(node, f"{fname}: graph functions take positional arguments only", "call")
        callee = (self.module_functions or {}).get(fname)
        if isinstance(want, TensorType):
            out = want
        elif isinstance(callee, Function):
            out = callee.ret.type
        else:
            raise self.err(node, f"the call of `{fname}` needs its result type: `lv: R.Tensor(shape, dtype) = "
                                 f"{fname}(...)`", "call")
        return Call("call_func", [self.value(a) for a in node.args], {"func": fname}, out)

    def record(self, node, call: Call) -> Call:
        src, n = self.src, node

        def make_error(msg: str) -> ParseError:
            return src.error(n, msg, "call-signature")

        self.where[id(call)] = make_error
        return call

    def metadata_constant(self, node: ast.Subscript) -> Constant:
        inner = node.value
        if not (isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name)
                and inner.value.id in ("metadata", "meta")):
            raise self.err(node, f"unsupported subscript `{describe(node)}`", "subscript")
        key = "relay.Constant" if describe(inner.slice) == "relay.Constant" else self.literal(inner.slice)
        idx = self.literal(node.slice)
        if key not in (METADATA_KEY, "relay.Constant") or not isinstance(idx, int):
            raise self.err(node, f"unsupported metadata reference `{describe(node)}`", "metadata")
        consts = self._constants(node)
        if not 0 <= idx < len(consts):
            raise self.err(node, f"metadata[{key!r}][{idx}] is out of range: {len(consts)} constants were "
                                 "provided", "metadata")
        c = consts[idx]
        if isinstance(c, Constant):
            return c
        try:
            return Constant(decode_array(c))
        except ValueError as e:
            raise self.err(node, f"metadata[{key!r}][{idx}]: {e}", "metadata") from None

    def _constants(self, node) -> list:
        if self._metadata_list is None:
            meta = _METADATA.get()
            if meta is None:
                found, value = self.env.lookup("metadata")
                meta = value if found and isinstance(value, (dict, list, tuple)) else None
            if meta is None:
                raise self.err(node, "this function uses bound constants (`metadata[\"relax.expr.Constant\"][i]`) "
                                     "that are not part of the script text; parse it with "
                                     "tunefarm.script.relax_parser.from_source(text, metadata=fn.metadata()) or "
                                     "bind the weights again with BindParams", "metadata")
            consts = meta.get(METADATA_KEY) if isinstance(meta, dict) else meta
            if not isinstance(consts, (list, tuple)):
                raise self.err(node, f"metadata must map {METADATA_KEY!r} to a list of arrays", "metadata")
            self._metadata_list = list(consts)
        return self._metadata_list

    def const(self, node: ast.Call) -> Constant:
        if not node.args or len(node.args) > 2 or any(k.arg != "dtype" for k in node.keywords):
            raise self.err(node, "R.const takes (value, dtype)", "const")
        value = self.literal(node.args[0])
        dtype_node = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords), None)
        dtype = self.literal(dtype_node) if dtype_node is not None else "float32"
        if dtype not in ALL_TYPES:
            raise self.err(node, f"R.const: unknown dtype {dtype!r}", "const")
        try:
            return Constant(np.asarray(value, dtype=dtype))
        except (TypeError, ValueError) as e:
            raise self.err(node, f"R.const: {e}", "const") from None

    def tensor_args(self, node) -> list[GraphExpr]:
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self.value(e) for e in node.elts]
        return [self.value(node)]

    def _out_type(self, node: ast.Call, name: str) -> TensorType:
        kw = {k.arg: k.value for k in node.keywords}
        if len(node.args) >= 3:
            third = node.args[2]
            if isinstance(third, ast.Call):
                return self.tensor_type(third, declare=False)
            if "dtype" in kw or isinstance(third, (ast.Tuple, ast.List)):  # old spelling: shape, dtype=
                dtype = self.literal(kw["dtype"]) if "dtype" in kw else "float32"
                return TensorType(self.shape(third, declare=False), dtype)
        if "out_sinfo" in kw:
            return self.tensor_type(kw["out_sinfo"], declare=False)
        raise self.err(node, f"{name} needs the result type: {name}(f, (args,), out_sinfo=R.Tensor(shape, dtype))",
                       "out_sinfo")

    def _check_call_form(self, node: ast.Call, name: str) -> None:
        if len(node.args) < 2 or len(node.args) > 3:
            raise self.err(node, f"{name} takes (func, (args,), out_sinfo)", name)
        allowed = {"out_sinfo", "dtype", "args"}
        for k in node.keywords:
            if k.arg not in allowed:
                raise self.err(node, f"{name}: unsupported argument `{k.arg}`", name)

    def call_tir(self, node: ast.Call) -> Call:
        self._check_call_form(node, "R.call_tir")
        f = node.args[0]
        if isinstance(f, ast.Constant) and isinstance(f.value, str):  # old spelling for extern functions
            return ops.call_dps_packed(f.value, self.tensor_args(node.args[1]), self._out_type(node, "R.call_tir"))
        fname = None
        if isinstance(f, ast.Name) and f.id not in self.values:
            fname = f.id
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and isinstance(self.values.get(f.value.id), _ModuleRef):
            fname = f.attr
        if fname is None:
            raise self.err(f, f"R.call_tir needs a PrimFunc of the module, got `{describe(f)}`", "call_tir")
        if fname not in self.module_names:
            where = (f"the module has {', '.join(self.module_names)}" if self.module_names
                     else "this function is not inside an @ir_module class")
            raise self.err(f, f"R.call_tir: no function `{fname}` in the module ({where})", "call_tir")
        return ops.call_tir(fname, self.tensor_args(node.args[1]), self._out_type(node, "R.call_tir"))

    def call_dps_packed(self, node: ast.Call) -> Call:
        self._check_call_form(node, "R.call_dps_packed")
        f = node.args[0]
        if not (isinstance(f, ast.Constant) and isinstance(f.value, str)):
            raise self.err(f, "R.call_dps_packed names its callee with a string (\"env.linear\" or the name of a "
                              "PrimFunc of the module)", "call_dps_packed")
        return ops.call_dps_packed(f.value, self.tensor_args(node.args[1]), self._out_type(node, "R.call_dps_packed"))

    def op_call(self, node: ast.Call, name: str, op: str, kwnames: tuple) -> Call:
        n_tensors = _TENSOR_ARGS[op]
        if len(node.args) > n_tensors + len(kwnames):
            raise self.err(node, f"{name}: too many arguments", name)
        tensors = [self.value(a) for a in node.args[:n_tensors]]
        extra = list(node.args[n_tensors:])
        attrs = {}
        for kname, anode in zip(kwnames, extra):
            attrs[kname] = anode
        for k in node.keywords:
            if k.arg not in kwnames:
                raise self.err(node, f"{name}: unsupported argument `{k.arg}` (supported: "
                                     f"{', '.join(kwnames) or 'none'})", name)
            if k.arg in attrs:
                raise self.err(node, f"{name}: argument `{k.arg}` given twice", name)
            attrs[k.arg] = k.value
        kwargs = {}
        for k, v in attrs.items():
            if op == "dense" and k == "bias":
                if not (isinstance(v, ast.Constant) and v.value is None):
                    tensors.append(self.value(v))
                continue
            if op == "reshape" and k == "shape":
                kwargs[k] = self.shape(v, declare=False)
                continue
            kwargs[k] = self.literal(v)
        if op == "dense":
            kwargs.pop("out_dtype", None)
        if op == "max_pool2d":  # TVM's defaults: a 1x1 window with stride 1 unless written out
            kwargs.setdefault("pool_size", 1)
            kwargs.setdefault("strides", 1)
        try:
            if op == "matmul":
                return ops.matmul(*tensors, **kwargs)
            return ops.make_call(op, *tensors, **kwargs)
        except (ops.ShapeError, TypeError, KeyError) as e:
            raise self.err(node, f"{name}: {e}", "op") from None


__all__ = ["ParsedFunction", "RelaxParser", "check_calls", "from_source", "parse_relax_function",
           "provide_metadata"]
