"""Whether a destination-passing call fits the PrimFunc it calls: arity, ranks, dtypes and dimensions.

A graph ``call_tir(f, args, out)`` passes tensors of known types to ``f``'s buffers. Checking one against the
other binds the callee's symbolic dims to the caller's; the script parser checks every call so, passes that
specialize shapes read the binding, and composing kernels into one PrimFunc uses it to rewrite the bodies.
"""
from __future__ import annotations

from . import expr as E
from .function import PrimFunc
from .graph_expr import TensorType


class SignatureError(ValueError):
    """A call does not fit its callee (arity, shape or dtype mismatch)."""


def _dim_expr(d, dtype: str = "int64"):
    return E.const(d, dtype) if isinstance(d, int) else d


def _same_dim(a, b) -> bool:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    return a is b


def bind_dims(callee: PrimFunc, arg_types: list[TensorType], where: str) -> dict:
    """Map the callee's symbolic dims to the caller's dims by matching parameter shapes (one type per parameter)."""
    vmap: dict = {}
    if len(arg_types) != len(callee.params):
        raise SignatureError(f"{where}: {callee.name} takes {len(callee.params)} buffers, got {len(arg_types)}")
    for p, t in zip(callee.params, arg_types):
        if len(p.shape) != len(t.shape):
            raise SignatureError(f"{where}: {callee.name} parameter {p.name} has {len(p.shape)} dims, "
                                 f"argument has {len(t.shape)}")
        if p.dtype != t.dtype:
            raise SignatureError(f"{where}: {callee.name} parameter {p.name} is {p.dtype}, argument is {t.dtype}")
        for pd, ad in zip(p.shape, t.shape):
            if isinstance(pd, E.Var):
                prev = vmap.get(pd)
                new = _dim_expr(ad, pd.dtype)
                if prev is not None and not _same_dim(prev, new):
                    raise SignatureError(f"{where}: dim {pd.name} of {callee.name} bound to two sizes")
                vmap[pd] = new
            elif isinstance(pd, E.IntImm) and isinstance(ad, int) and pd.value != ad:
                raise SignatureError(f"{where}: {callee.name} parameter {p.name} expects size {pd.value}, got {ad}")
            elif isinstance(pd, E.IntImm) and not isinstance(ad, int):
                raise SignatureError(f"{where}: {callee.name} parameter {p.name} expects size {pd.value}, got the "
                                     f"symbolic dim {getattr(ad, 'name', ad)}")
    return vmap


def check_signature(callee: PrimFunc, arg_types: list[TensorType], out_type: TensorType, where: str) -> dict:
    """Check a destination-passing call ``callee(*args, out)``; returns the callee's dims bound to the caller's.

    Raises ``SignatureError`` naming the call for a wrong number of arguments, a dtype or rank mismatch, a
    size that differs from a constant dimension, or a symbolic dimension bound to two different sizes.
    """
    if len(arg_types) + 1 != len(callee.params):
        raise SignatureError(f"{where}: {callee.name} takes {len(callee.params)} buffers ({len(callee.params) - 1} "
                             f"inputs and the output), the call passes {len(arg_types)} inputs")
    return bind_dims(callee, list(arg_types) + [out_type], where)


__all__ = ["SignatureError", "bind_dims", "check_signature"]
