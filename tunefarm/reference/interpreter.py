"""The reference executor: run any PrimFunc on numpy arrays, independently of code generation.

It is the test oracle for schedules: a scheduled program must give the same numbers as the original one
under ``interpret``, and an illegal schedule that slipped through shows up as an ``IndexError`` naming the
buffer (or the block whose iteration variable left its domain). The IR is compiled once into nested
closures (see ``stmt_compiler``) and cached per function, so repeated calls only pay for the execution.

Calling convention is destination passing, like compiled functions: inputs then outputs, all preallocated
numpy arrays; symbolic dimensions are read from the array shapes.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ..ir import expr as E
from ..ir.function import PrimFunc
from ..ir.functor import collect_vars
from ..ir.module import as_prim_func
from .expr_compiler import ExprCompiler
from .slots import Slots
from .stmt_compiler import StmtCompiler


class ReferenceProgram:
    """A PrimFunc compiled for the reference executor; call it with numpy arrays (inputs, then outputs)."""

    def __init__(self, func: PrimFunc):
        if not isinstance(func, PrimFunc):
            raise TypeError(f"expected a PrimFunc, got {type(func).__name__}")
        self.func = func
        slots = Slots()
        self._param_slots = [slots.open_buffer(p) for p in func.params]
        for v in func.symbolic_vars():
            slots.bind_var(v)
        self._shape_plan = self._plan_shapes(func, slots)
        self._body = StmtCompiler(slots).compile(func.body)
        self._nslots = slots.size

    @staticmethod
    def _plan_shapes(func: PrimFunc, slots: Slots):
        """Per parameter and dimension: ("const", n) | ("var", slot, name) | ("expr", closure)."""
        exprs = ExprCompiler(slots)
        defined: set = set()
        plan = []
        for p in func.params:
            dims = []
            for s in p.shape:
                if isinstance(s, E.IntImm):
                    dims.append(("const", s.value))
                elif isinstance(s, E.Var):
                    dims.append(("var", slots.var_slot(s), s.name))
                    defined.add(s)
                else:
                    dims.append(("expr", s))
            plan.append(dims)
        for p, dims in zip(func.params, plan):
            for n, d in enumerate(dims):
                if d[0] == "expr":
                    missing = [v.name for v in collect_vars(d[1]) if v not in defined]
                    if missing:
                        raise ValueError(f"parameter {p.name!r} dimension {n}: symbolic variables {missing} do "
                                         "not appear alone in any parameter shape, so they cannot be read "
                                         "from the arrays")
                    dims[n] = ("expr", exprs.compile(d[1]), d[1])
        return plan

    def _bind_args(self, env: list, arrays) -> None:
        params = self.func.params
        if len(arrays) != len(params):
            names = ", ".join(p.name for p in params)
            raise TypeError(f"function {self.func.name!r} takes {len(params)} arrays ({names}), "
                            f"got {len(arrays)}")
        for p, a, bs in zip(params, arrays, self._param_slots):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"parameter {p.name!r}: expected a numpy array, got {type(a).__name__}")
            if a.dtype != np.dtype(p.dtype):
                raise TypeError(f"parameter {p.name!r}: expected dtype {p.dtype}, got {a.dtype}")
            if a.ndim != p.ndim:
                raise ValueError(f"parameter {p.name!r}: expected {p.ndim} dimensions, got {a.ndim} "
                                 f"(shape {a.shape})")
            env[bs] = a
        bound: dict = {}
        for p, a, dims in zip(params, arrays, self._shape_plan):
            for n, d in enumerate(dims):
                size = a.shape[n]
                if d[0] == "const":
                    if size != d[1]:
                        raise ValueError(f"parameter {p.name!r}: dimension {n} must be {d[1]}, got {size} "
                                         f"(shape {a.shape})")
                elif d[0] == "var":
                    slot, name = d[1], d[2]
                    if slot in bound and bound[slot][0] != size:
                        raise ValueError(f"parameter {p.name!r}: dimension {n} is {name} = {bound[slot][0]} "
                                         f"(from parameter {bound[slot][1]!r}) but the array has {size}")
                    bound[slot] = (size, p.name)
                    env[slot] = size
        for p, a, dims in zip(params, arrays, self._shape_plan):
            for n, d in enumerate(dims):
                if d[0] == "expr":
                    want = int(d[1](env))
                    if a.shape[n] != want:
                        raise ValueError(f"parameter {p.name!r}: dimension {n} must be {d[2]!r} = {want}, "
                                         f"got {a.shape[n]}")

    def __call__(self, *arrays) -> None:
        env = [None] * self._nslots
        self._bind_args(env, arrays)
        with np.errstate(all="ignore"):
            self._body(env)


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()  # farm workers may interpret from several threads


def compile_reference(func) -> ReferenceProgram:
    """The compiled reference program of ``func`` (cached per function object)."""
    func = as_prim_func(func, "interpret")
    with _CACHE_LOCK:
        hit = _CACHE.get(id(func))
        if hit is not None and hit.func is func:
            _CACHE.move_to_end(id(func))
            return hit
    prog = ReferenceProgram(func)
    with _CACHE_LOCK:
        _CACHE[id(func)] = prog
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return prog


def interpret(func, *arrays) -> None:
    """Run ``func`` on numpy ``arrays`` (inputs then outputs, destination passing), writing the outputs."""
    compile_reference(func)(*arrays)
