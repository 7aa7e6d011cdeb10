"""BlockBuilder: build graph functions step by step, as the course does with ``relax.BlockBuilder``.

``emit_te(te_fn, *args)`` turns a tensor-expression function into a PrimFunc of the module being built and
emits a ``call_tir`` to it, so a model can be written with the same op library the tuner understands.
"""
from __future__ import annotations

import contextlib
import itertools

import numpy as np

from ..ir.function import PrimFunc
from ..ir.graph_expr import Call, Constant, DataflowVar, GraphExpr, GraphVar, TensorType
from ..ir.graph_function import Binding, DataflowBlock, Function
from ..ir.module import IRModule
from ..ir.structural import structural_equal


def unique_name(existing, base: str) -> str:
    if base not in existing:
        return base
    for k in itertools.count(1):
        name = f"{base}{k}"
        if name not in existing:
            return name
    raise AssertionError("unreachable")


def te_placeholders(args):
    """te placeholders typed like the graph values ``args`` (symbolic dims carried over)."""
    from .. import te  # on use: see the package docstring

    out = []
    for i, a in enumerate(args):
        if not isinstance(a, GraphExpr):
            raise TypeError(f"emit_te argument {i} must be a graph value, got {type(a).__name__}")
        name = getattr(a, "name", None) or f"arg{i}"
        out.append(te.placeholder(a.type.shape, a.type.dtype, name=name))
    return out


def prim_func_from_te(te_fn, args, kwargs, name: str) -> tuple[PrimFunc, TensorType]:
    """Trace ``te_fn`` on placeholders typed like ``args`` and build the PrimFunc ``(*inputs, output)``."""
    from .. import te  # on use: see the package docstring

    holders = te_placeholders(args)
    out = te_fn(*holders, **kwargs)
    if isinstance(out, (list, tuple)):
        raise TypeError(f"{name}: te functions with several outputs are not supported")
    if not isinstance(out, te.Tensor):
        raise TypeError(f"{name}: a te function must return a te.Tensor, got {type(out).__name__}")
    if any(out is h for h in holders):
        raise TypeError(f"{name}: the te function returned one of its inputs; it must compute a new tensor")
    func = te.create_prim_func([*holders, out]).with_name(name)
    try:
        out_type = TensorType(out.shape, out.dtype)
    except TypeError:
        raise TypeError(f"{name}: the result shape {out.shape} has a dimension that is neither a constant nor a "
                        "symbolic variable of the inputs") from None
    return func, out_type


class BlockBuilder:
    """Builds an IRModule of graph functions and the PrimFuncs they call (``relax.BlockBuilder``).

    ``with bb.function("main", [x]):`` opens a function (parameters may instead be given to
    ``emit_func_output(out, params=[...])``); ``with bb.dataflow():`` a dataflow block; ``emit`` binds a
    call to a fresh variable; ``emit_te`` turns a tensor-expression function into a PrimFunc of the module
    and binds a ``call_tir`` to it; ``emit_output`` marks a value visible after its block;
    ``emit_func_output`` ends the function; ``get()`` returns the module.
    """

    def __init__(self, mod: IRModule | None = None):
        self._funcs: dict = dict(mod.functions) if mod is not None else {}
        self._fn_name: str | None = None
        self._params: list[GraphVar] | None = None
        self._attrs: dict = {}
        self._blocks: list[DataflowBlock] = []
        self._bindings: list[Binding] | None = None
        self._loose: list[Binding] = []
        self._outputs: list[GraphVar] = []
        self._names: set = set()
        self._ret: GraphExpr | None = None

    # ---------------------------------------------------------------- scopes
    @contextlib.contextmanager
    def function(self, name: str, params=None, attrs: dict | None = None):
        if self._fn_name is not None:
            raise RuntimeError("BlockBuilder.function scopes cannot nest")
        if params is not None:
            params = self._check_params(params)
        self._fn_name, self._params, self._attrs = name, params, dict(attrs or {})
        self._blocks, self._ret, self._loose = [], None, []
        self._names = {p.name for p in params or ()}
        try:
            yield self
            if self._ret is None:
                raise RuntimeError(f"function {name!r} ended without emit_func_output")
            if self._params is None:
                raise RuntimeError(f"function {name!r} has no parameter list: pass params to function() or "
                                   "to emit_func_output()")
            self._flush_loose()
            self._funcs[name] = Function(name, self._params, self._blocks, self._ret, self._attrs)
        finally:
            self._fn_name = None

    @staticmethod
    def _check_params(params) -> list[GraphVar]:
        params = list(params)
        for p in params:
            if not isinstance(p, GraphVar):
                raise TypeError(f"function parameters must be graph vars (tunefarm.graph.var / Var), got "
                                f"{type(p).__name__}")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("the same var appears twice in the parameter list")
        return params

    @contextlib.contextmanager
    def dataflow(self):
        if self._fn_name is None:
            raise RuntimeError("dataflow() must be inside function()")
        if self._bindings is not None:
            raise RuntimeError("dataflow() scopes cannot nest")
        self._flush_loose()
        self._bindings, self._outputs = [], []
        try:
            yield self
            self._blocks.append(DataflowBlock(self._bindings, self._outputs))
        finally:
            self._bindings = None

    def _flush_loose(self) -> None:
        if self._loose:
            self._blocks.append(DataflowBlock(self._loose, [b.var for b in self._loose]))
            self._loose = []

    # ---------------------------------------------------------------- emission
    def _fresh(self, prefix: str) -> str:
        """``lv``, ``lv1``, ``lv2``, ... as Relax names them (names already used in the function are skipped)."""
        name = unique_name(self._names, prefix)
        self._names.add(name)
        return name

    def emit(self, value: GraphExpr, name_hint: str = "lv") -> GraphVar:
        """Bind ``value`` (a call, a constant or another var) to a fresh variable and return it."""
        if self._fn_name is None:
            raise RuntimeError("emit() must be inside function()")
        if not isinstance(value, GraphExpr):
            raise TypeError(f"emit() takes a graph value (a call built with tunefarm.graph.ops), got "
                            f"{type(value).__name__}")
        return self._bind(value, name_hint, DataflowVar if self._bindings is not None else GraphVar)

    def _bind(self, value: GraphExpr, name_hint: str, var_class: type) -> GraphVar:
        var = var_class(self._fresh(name_hint), value.type)
        (self._bindings if self._bindings is not None else self._loose).append(Binding(var, value))
        return var

    def add_func(self, func: PrimFunc, name: str) -> str:
        """Add a PrimFunc under a unique name (an identical one already present is reused)."""
        if not isinstance(func, PrimFunc):
            raise TypeError(f"add_func takes a PrimFunc, got {type(func).__name__}")
        for existing_name, existing in self._funcs.items():
            if isinstance(existing, PrimFunc) and structural_equal(existing, func):
                return existing_name
        name = unique_name(self._funcs, name)
        self._funcs[name] = func.with_name(name)
        return name

    def call_te(self, te_fn, *args, primfunc_name_hint: str | None = None, **kwargs) -> Call:
        """The ``call_tir`` that ``emit_te`` would bind (the PrimFunc is added to the module)."""
        if not callable(te_fn):
            raise TypeError(f"emit_te needs a tensor-expression function, got {type(te_fn).__name__}")
        name = primfunc_name_hint or getattr(te_fn, "__name__", "te_func")
        if not name.isidentifier() or name == "<lambda>":
            name = "te_func"
        func, out_type = prim_func_from_te(te_fn, args, kwargs, name)
        gname = self.add_func(func, name)
        return Call("call_tir", args, {"func": gname}, out_type)

    def emit_te(self, te_fn, *args, primfunc_name_hint: str | None = None, **kwargs) -> GraphVar:
        return self.emit(self.call_te(te_fn, *args, primfunc_name_hint=primfunc_name_hint, **kwargs))

    def emit_output(self, var: GraphExpr) -> GraphVar:
        """Mark ``var`` as an output of the current dataflow block (visible after it)."""
        if self._bindings is None:
            raise RuntimeError("emit_output() must be inside dataflow()")
        if isinstance(var, GraphVar) and any(b.var is var for b in self._bindings):
            gv = var
            if type(gv) is DataflowVar:
                gv.__class__ = GraphVar  # visible after the block from now on: a plain var, as in Relax
        else:
            if not isinstance(var, GraphExpr):
                raise TypeError(f"emit_output() takes a graph value, got {type(var).__name__}")
            gv = self._bind(var, "gv", GraphVar)
        if all(o is not gv for o in self._outputs):
            self._outputs.append(gv)
        return gv

    def emit_func_output(self, output, params=None) -> None:
        """End the function: ``output`` is its result; ``params`` its parameter list when not given before."""
        if self._fn_name is None:
            raise RuntimeError("emit_func_output() must be inside function()")
        if self._bindings is not None:
            raise RuntimeError("emit_func_output() must come after the dataflow() block, not inside it")
        if self._ret is not None:
            raise RuntimeError("emit_func_output() may be called once per function")
        if isinstance(output, (list, tuple)):
            raise TypeError("functions with several outputs are not supported; return one tensor")
        if not isinstance(output, GraphExpr):
            raise TypeError(f"the function output must be a graph value, got {type(output).__name__}")
        if params is not None:
            if self._params is not None:
                raise RuntimeError("parameters were already given to function()")
            self._params = self._check_params(params)
        self._ret = output

    def get(self) -> IRModule:
        if self._fn_name is not None:
            raise RuntimeError("get() must be called after the function() scope ends")
        return IRModule(self._funcs)


def var(name: str, shape, dtype: str = "float32") -> GraphVar:
    """A graph function parameter (``relax.Var(name, R.Tensor(shape, dtype))``)."""
    return GraphVar(name, TensorType(shape, dtype))


def const(data, struct_info=None, name: str | None = None) -> Constant:
    """A constant tensor (``relax.const(array, R.Tensor(...))``); the optional type is checked."""
    arr = np.asarray(data)
    if isinstance(struct_info, str):
        arr = arr.astype(struct_info)
    elif isinstance(struct_info, TensorType):
        arr = arr.astype(struct_info.dtype)
        if tuple(arr.shape) != tuple(struct_info.shape):
            raise ValueError(f"const: array of shape {arr.shape} does not match {struct_info!r}")
    elif struct_info is not None:
        raise TypeError(f"const: struct_info must be an R.Tensor type or a dtype, got {type(struct_info).__name__}")
    return Constant(arr, name)
