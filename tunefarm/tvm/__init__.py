"""TVM's Python API over tunefarm: the MLC course's code runs with its imports changed.

=======================================================  ===============================================
course                                                   tunefarm
=======================================================  ===============================================
``import tvm``                                           ``from tunefarm import tvm``
``from tvm import relax, te, topi, tir``                 ``from tunefarm.tvm import relax, te, topi, tir``
``from tvm.script import tir as T`` (``relax as R``)     ``from tunefarm.tvm.script import tir as T`` ...
``from tvm import meta_schedule as ms``                  ``from tunefarm.tvm import meta_schedule as ms``
``from tvm.relax.frontend import nn``                    ``from tunefarm.tvm.relax.frontend import nn``
``from tvm.ir.module import IRModule``                   ``from tunefarm.tvm.ir.module import IRModule``
=======================================================  ===============================================

Everything here adapts names and call shapes onto tunefarm's own API (nothing is implemented twice):
``tvm.nd.array`` copies into a numpy array (``.numpy()`` does not copy), ``tvm.cpu()`` the one device, ``tvm.build``
``tunefarm.runtime.build``, ``tvm.compile`` / ``relax.build`` ``tunefarm.compile``, ``tvm.tir.Schedule`` tunefarm's
``Schedule``, ``ms.tune_tir`` ``tunefarm.tune``, ``tvm.register_func`` tunefarm's registry (functions get
NDArrays). Importing it loads neither the tuning stack (ray, xgboost) nor the farm.
"""
from __future__ import annotations

import functools

from .. import te
from ..graph.registry import register_func as _register
from ..ir.module import IRModule
from . import ir, meta_schedule, nd, relax, script, target, testing, tir, topi, transform
from .device import Device, cpu, device
from .driver import build, compile

TVMError = tir.ScheduleError
"""What TVM raises as ``TVMError`` for a schedule it refuses, tunefarm raises as ``ScheduleError``."""


def register_func(func_name, f=None, override: bool = False):
    """``@tvm.register_func("env.linear", override=True)``: a Python function models call with
    ``R.call_dps_packed``; it receives NDArrays (destination passing: the last one is the output)."""
    if callable(func_name) and f is None:  # bare decorator: registered under its own name
        return register_func(func_name.__name__, func_name, override)

    def do(fn):
        if not callable(fn):
            raise TypeError(f"register_func({func_name!r}) needs a callable, got {type(fn).__name__}")

        @functools.wraps(fn)
        def with_ndarrays(*arrays):
            return fn(*(a.view(nd.NDArray) for a in arrays))

        _register(func_name, with_ndarrays, override)
        return fn

    return do(f) if f is not None else do


__all__ = ["Device", "IRModule", "TVMError", "build", "compile", "cpu", "device", "ir", "meta_schedule", "nd", "register_func",
           "relax", "script", "target", "te", "testing", "tir", "topi", "transform"]
