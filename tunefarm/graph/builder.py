"""BlockBuilder: build graph functions step by step, as the course does with ``relax.BlockBuilder``.

``emit_te(te_fn, *args)`` turns a tensor-expression function into a PrimFunc of the module being built and
emits a ``call_tir`` to it, so a model can be written with the same op library the tuner understands.
"""
from __future__ import annotations

import contextlib
import itertools

from ..ir.function import PrimFunc
from ..ir.module import IRModule
from .expr import Call, Constant, GraphExpr, GraphVar, TensorType
from .function import Binding, DataflowBlock, Function


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
    from .. import te

    out = []
    for i, a in enumerate(args):
        if not isinstance(a, GraphExpr):
            raise TypeError(f"emit_te argument {i} must be a graph value, got {type(a).__name__}")
        name = getattr(a, "name", None) or f"arg{i}"
        out.append(te.placeholder(a.type.shape, a.type.dtype, name=name))
    return out


def prim_func_from_te(te_fn, args, kwargs, name: str) -> tuple[PrimFunc, TensorType]:
    """Trace ``te_fn`` on placeholders typed like ``args`` and build the PrimFunc ``(*inputs, output)``."""
    from .. import te

    holders = te_placeholders(args)
    out = te_fn(*holders, **kwargs)
    if isinstance(out, (list, tuple)):
        raise TypeError(f"{name}: te functions with several outputs are not supported")
    func = te.create_prim_func([*holders, out]).with_name(name)
    out_type = TensorType(tuple(d.value if hasattr(d, "value") and not hasattr(d, "name") else d
                                for d in out.shape), out.dtype)
    return func, out_type


class BlockBuilder:
    """Builds an IRModule of graph functions and the PrimFuncs they call."""

    def __init__(self, mod: IRModule | None = None):
        self._funcs: dict = dict(mod.functions) if mod is not None else {}
        self._fn_name: str | None = None
        self._params: list[GraphVar] = []
        self._blocks: list[DataflowBlock] = []
        self._bindings: list[Binding] | None = None
        self._outputs: list[GraphVar] = []
        self._counter = itertools.count()
        self._ret: GraphExpr | None = None

    # ---------------------------------------------------------------- scopes
    @contextlib.contextmanager
    def function(self, name: str, params, attrs: dict | None = None):
        if self._fn_name is not None:
            raise RuntimeError("BlockBuilder.function scopes cannot nest")
        self._fn_name, self._params, self._blocks, self._ret = name, list(params), [], None
        try:
            yield
            if self._ret is None:
                raise RuntimeError(f"function {name!r} ended without emit_func_output")
            self._funcs[name] = Function(name, self._params, self._blocks, self._ret, attrs)
        finally:
            self._fn_name = None

    @contextlib.contextmanager
    def dataflow(self):
        if self._fn_name is None:
            raise RuntimeError("dataflow() must be inside function()")
        self._bindings, self._outputs = [], []
        try:
            yield
            self._blocks.append(DataflowBlock(self._bindings, self._outputs))
        finally:
            self._bindings = None

    # ---------------------------------------------------------------- emission
    def _fresh(self, prefix: str = "lv") -> str:
        return f"{prefix}{next(self._counter)}"

    def emit(self, value: GraphExpr, name_hint: str = "lv") -> GraphVar:
        if self._bindings is None:
            raise RuntimeError("emit() must be inside dataflow()")
        var = GraphVar(self._fresh(name_hint), value.type)
        self._bindings.append(Binding(var, value))
        return var

    def add_func(self, func: PrimFunc, name: str) -> str:
        """Add a PrimFunc under a unique name (an identical one already present is reused)."""
        from ..ir.structural import structural_equal

        for existing_name, existing in self._funcs.items():
            if isinstance(existing, PrimFunc) and structural_equal(existing, func):
                return existing_name
        name = unique_name(self._funcs, name)
        self._funcs[name] = func.with_name(name)
        return name

    def call_te(self, te_fn, *args, primfunc_name_hint: str | None = None, **kwargs) -> Call:
        name = primfunc_name_hint or getattr(te_fn, "__name__", "te_func")
        func, out_type = prim_func_from_te(te_fn, args, kwargs, name)
        gname = self.add_func(func, name)
        return Call("call_tir", args, {"func": gname}, out_type)

    def emit_te(self, te_fn, *args, primfunc_name_hint: str | None = None, **kwargs) -> GraphVar:
        return self.emit(self.call_te(te_fn, *args, primfunc_name_hint=primfunc_name_hint, **kwargs))

    def emit_output(self, var: GraphVar) -> GraphVar:
        if self._bindings is None:
            raise RuntimeError("emit_output() must be inside dataflow()")
        if isinstance(var, GraphVar) and any(b.var is var for b in self._bindings):
            gv = var
        else:
            gv = self.emit(var, "gv")
        self._outputs.append(gv)
        return gv

    def emit_func_output(self, output) -> None:
        if self._fn_name is None:
            raise RuntimeError("emit_func_output() must be inside function()")
        if isinstance(output, (list, tuple)):
            raise TypeError("functions with several outputs are not supported; return one tensor")
        self._ret = output

    def get(self) -> IRModule:
        return IRModule(self._funcs)


def var(name: str, shape, dtype: str = "float32") -> GraphVar:
    """A graph function parameter (``relax.Var(name, R.Tensor(shape, dtype))``)."""
    return GraphVar(name, TensorType(shape, dtype))


def const(data, name: str | None = None) -> Constant:
    import numpy as np

    return Constant(np.asarray(data), name)
