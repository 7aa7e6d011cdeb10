"""BindParams: replace function parameters by constant arrays (the model's weights).

As in Relax, binding also fixes the symbolic dimensions the arrays determine: ``w0: R.Tensor(("n", "m"))``
bound to a (128, 784) array makes ``n = 128`` and ``m = 784`` everywhere in the function, so
``x: R.Tensor((1, "m"))`` becomes ``R.Tensor((1, 784))`` and every kernel gets static shapes.
"""
from __future__ import annotations

import numpy as np

from ...ir.expr import Var
from ...ir.graph_expr import Call, Constant, GraphVar, TensorType
from ...ir.graph_function import Binding, Function, map_args, map_blocks
from ...ir.module import IRModule


def rewrite_args(fn: Function, mapping: dict) -> Function:
    """A copy of ``fn`` where every use of a var in ``mapping`` (by identity) is replaced."""

    def sub(a):
        return mapping.get(a, a) if isinstance(a, GraphVar) else a

    blocks = map_blocks(fn, lambda b: Binding(b.var, map_args(b.value, sub)))
    return fn.replace(blocks=blocks, ret=sub(fn.ret))


def _subst_type(t: TensorType, dims: dict) -> TensorType:
    if not any(isinstance(d, Var) and d in dims for d in t.shape):
        return t
    return TensorType(tuple(dims.get(d, d) if isinstance(d, Var) else d for d in t.shape), t.dtype)


def substitute_dims(fn: Function, dims: dict) -> Function:
    """``fn`` with symbolic dims replaced (``Var -> int``) in every type; vars are re-created as needed."""
    if not dims:
        return fn
    vmap: dict = {}

    def new_var(v: GraphVar) -> GraphVar:
        t = _subst_type(v.type, dims)
        nv = v if t is v.type else GraphVar(v.name, t)
        vmap[v] = nv
        return nv

    def sub(a):
        return vmap.get(a, a) if isinstance(a, GraphVar) else a

    def rebind(b: Binding) -> Binding:
        v = b.value
        if isinstance(v, Call):
            attrs = dict(v.attrs)
            if "shape" in attrs:
                attrs["shape"] = tuple(dims.get(d, d) if isinstance(d, Var) else d for d in attrs["shape"])
            v = map_args(v, sub, attrs, _subst_type(v.type, dims))
        else:
            v = sub(v)
        return Binding(new_var(b.var), v)

    params = [new_var(p) for p in fn.params]
    blocks = map_blocks(fn, rebind, sub)
    return fn.replace(params=tuple(params), blocks=blocks, ret=sub(fn.ret))


class BindParams:
    """``BindParams(func_name, {param_name: array})(mod)``: named params become constants."""

    def __init__(self, func_name: str, params: dict):
        if not isinstance(params, dict):
            raise TypeError(f"BindParams takes a dict of name -> array, got {type(params).__name__}")
        self.func_name = func_name
        self.params = {}
        for k, v in params.items():
            arr = np.asarray(v.numpy() if hasattr(v, "numpy") and not isinstance(v, np.ndarray) else v)
            if arr.dtype == object:
                raise TypeError(f"BindParams: parameter {k!r} is not a numeric array")
            self.params[k] = arr

    def __call__(self, mod: IRModule) -> IRModule:
        fn = mod[self.func_name]
        if not isinstance(fn, Function):
            raise TypeError(f"BindParams: {self.func_name!r} is not a graph function")
        by_name = {p.name: p for p in fn.params}
        unknown = sorted(set(self.params) - set(by_name))
        if unknown:
            raise KeyError(f"BindParams: {self.func_name} has no parameters {unknown}; it has {sorted(by_name)}")
        mapping = {}
        dims: dict = {}
        for name, arr in self.params.items():
            p = by_name[name]
            if p.type.ndim != arr.ndim or str(arr.dtype) != p.dtype:
                raise ValueError(f"BindParams: {name} is {p.type!r}, the array has shape {arr.shape} and dtype "
                                 f"{arr.dtype}")
            for d, s in zip(p.type.shape, arr.shape):
                if isinstance(d, Var):
                    if dims.setdefault(d, int(s)) != s:
                        raise ValueError(f"BindParams: dimension {d.name} would be both {dims[d]} and {s} "
                                         f"(from {name} of shape {arr.shape})")
                elif d != s:
                    raise ValueError(f"BindParams: {name} is {p.type!r}, the array has shape {arr.shape}")
            mapping[p] = Constant(arr, name)
        new = rewrite_args(fn, mapping)
        new = new.replace(params=tuple(p for p in fn.params if p not in mapping))
        new = substitute_dims(new, dims)
        return mod.with_function(self.func_name, new)
