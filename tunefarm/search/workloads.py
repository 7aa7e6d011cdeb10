"""Workloads by name (``matmul-128``, ``dense-relu-784-128``, ``conv2d-1x64x28x28-64x3x3``, ...) or from a file.

Built-in names (all float32):
- ``matmul-N`` or ``matmul-MxNxK``: ``C = A @ B`` with block ``C`` (the course's 128^3 ``MyModule``);
- ``dense-relu-IN-OUT`` (batch 1) or ``dense-relu-IN-OUT-bB``: ``relu(x @ w.T + b)``, the MLP layer;
- ``conv2d-NxCxHxW-FxKHxKW[-sS][-pP]``: NCHW convolution (padding ``P``, default ``KH // 2``; stride ``S``);
- ``add-N`` / ``relu-N``: elementwise on an N x N matrix.

A workload file ``wl.py:name`` names a PrimFunc (``@T.prim_func``), an IRModule, or a function of no
arguments returning one of those or a list of te tensors (``te.create_prim_func`` is applied). The file is
user code the user chose to run: it is imported with importlib.
"""
from __future__ import annotations

import re

from .. import te
from ..ir.function import PrimFunc
from ..ir.module import IRModule
from ..ir.module import as_prim_func as ir_as_prim_func
from .errors import SearchError
from .user_code import UserCodeError, load_attribute


class WorkloadError(ValueError):
    """An unknown workload name, a file that cannot be loaded, or an object that is not a workload."""


def _matmul(m: int, n: int, k: int) -> PrimFunc:
    A = te.placeholder((m, k), name="A", dtype="float32")
    B = te.placeholder((k, n), name="B", dtype="float32")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def _dense_relu(n_in: int, n_out: int, batch: int) -> PrimFunc:
    x = te.placeholder((batch, n_in), name="X", dtype="float32")
    w = te.placeholder((n_out, n_in), name="W", dtype="float32")
    b = te.placeholder((n_out,), name="B", dtype="float32")
    return te.create_prim_func([x, w, b, te.ops.dense_bias_relu(x, w, b)])


def _conv2d(n, c, h, w, f, kh, kw, stride, pad) -> PrimFunc:
    data = te.placeholder((n, c, h, w), name="data", dtype="float32")
    weight = te.placeholder((f, c, kh, kw), name="weight", dtype="float32")
    out = te.ops.conv2d(data, weight, stride=stride, padding=pad)
    return te.create_prim_func([data, weight, out])


def _elementwise(kind: str, n: int) -> PrimFunc:
    A = te.placeholder((n, n), name="A", dtype="float32")
    if kind == "add":
        B = te.placeholder((n, n), name="B", dtype="float32")
        return te.create_prim_func([A, B, te.ops.add(A, B)])
    return te.create_prim_func([A, te.ops.relu(A)])


_PATTERNS = [
    (re.compile(r"^matmul-(\d+)$"), lambda g: _matmul(int(g[0]), int(g[0]), int(g[0]))),
    (re.compile(r"^matmul-(\d+)x(\d+)x(\d+)$"), lambda g: _matmul(int(g[0]), int(g[1]), int(g[2]))),
    (re.compile(r"^dense-relu-(\d+)-(\d+)(?:-b(\d+))?$"),
     lambda g: _dense_relu(int(g[0]), int(g[1]), int(g[2] or 1))),
    (re.compile(r"^conv2d-(\d+)x(\d+)x(\d+)x(\d+)-(\d+)x(\d+)x(\d+)(?:-s(\d+))?(?:-p(\d+))?$"),
     lambda g: _conv2d(*(int(x) for x in g[:7]), int(g[7] or 1), int(g[8]) if g[8] is not None else int(g[5]) // 2)),
    (re.compile(r"^(add|relu)-(\d+)$"), lambda g: _elementwise(g[0], int(g[1]))),
]

EXAMPLES = ("matmul-128", "matmul-512", "matmul-64x256x128", "dense-relu-784-128", "conv2d-1x64x28x28-64x3x3",
            "add-1024", "relu-1024")


def builtin_workload(name: str) -> PrimFunc:
    """The PrimFunc of a built-in workload name (see module doc)."""
    for pat, make in _PATTERNS:
        m = pat.match(name)
        if m:
            return make(m.groups())
    raise WorkloadError(f"unknown workload {name!r}; built-in names look like {', '.join(EXAMPLES)}, "
                        "or give 'file.py:name'")


def as_prim_func(func, what: str = "workload") -> PrimFunc:
    """A PrimFunc from a PrimFunc or an IRModule holding one (``main`` preferred)."""
    return ir_as_prim_func(func, what, SearchError)


def as_workload(func, what: str = "workload") -> PrimFunc:
    """The PrimFunc to schedule and build, named ``main`` whatever it was called: TVM tunes a PrimFunc as
    ``IRModule({"main": f})``, so a space's ``sch.get_block("C", "main")`` and a build's ``mod["main"]`` find it."""
    return as_prim_func(func, what).with_name("main")


def _as_workload(obj, what: str) -> PrimFunc:
    if isinstance(obj, PrimFunc):
        return obj
    if isinstance(obj, IRModule):
        return as_prim_func(obj, what)
    if isinstance(obj, (list, tuple)) and obj:
        if all(isinstance(t, te.Tensor) for t in obj):
            return te.create_prim_func(list(obj))
    raise WorkloadError(f"{what} is a {type(obj).__name__}, not a PrimFunc, an IRModule or a list of te tensors")


def load_workload(spec) -> tuple[str, PrimFunc]:
    """``(name, PrimFunc)`` for a built-in name, ``"file.py:name"``, or a PrimFunc / IRModule given directly."""
    if isinstance(spec, (PrimFunc, IRModule)):
        f = _as_workload(spec, "workload")
        return f.attrs.get("global_symbol") or f.name or "main", f
    if not isinstance(spec, str):
        raise WorkloadError(f"a workload is a name, 'file.py:name' or a PrimFunc, got {type(spec).__name__}")
    if ".py:" in spec:
        path, _, attr = spec.rpartition(":")
        try:
            obj = load_attribute(path, attr, "workload")
        except UserCodeError as e:
            raise WorkloadError(str(e)) from None
        if callable(obj) and not isinstance(obj, (PrimFunc, IRModule)):
            obj = obj()
        return attr, _as_workload(obj, f"{spec}")
    return spec, builtin_workload(spec)
