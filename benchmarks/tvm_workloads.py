"""tunefarm's benchmark workloads written in Apache TVM 0.27 (te / Relax), for ``tvm_side.py``.

Each definition repeats the math of ``tunefarm.search.workloads.builtin_workload(name)`` block for block, so
both systems tune the same program: ``C = A @ B`` (one reduction block); ``relu(x @ w.T + b)`` as three blocks
(``T_matmul_NT``, add, relu); NCHW/OIHW convolution with an explicit pad block (padding ``KH // 2`` unless
``-pP``, stride 1 unless ``-sS``). The names parse like tunefarm's. Imported only where TVM is installed:
this module imports tvm at the top.
"""
from __future__ import annotations

import re

import numpy as np
import tvm
from tvm import relax, te, topi


class TVMWorkloadError(ValueError):
    """A workload name this module cannot express in TVM."""


def _matmul(m: int, n: int, k: int):
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")

    def ref(a, b):
        return a @ b

    return [A, B, C], ref


def _dense_relu(n_in: int, n_out: int, batch: int):
    X = te.placeholder((batch, n_in), "float32", name="X")
    W = te.placeholder((n_out, n_in), "float32", name="W")
    Bias = te.placeholder((n_out,), "float32", name="B")
    r = te.reduce_axis((0, n_in), name="k")
    mm = te.compute((batch, n_out), lambda i, j: te.sum(X[i, r] * W[j, r], axis=r), name="T_matmul_NT")
    add = te.compute((batch, n_out), lambda i, j: mm[i, j] + Bias[j], name="T_add")
    out = te.compute((batch, n_out), lambda i, j: te.max(add[i, j], tvm.tirx.const(0, "float32")), name="relu")

    def ref(x, w, b):
        return np.maximum(x @ w.T + b, 0)

    return [X, W, Bias, out], ref


def _conv2d(n, c, h, w, f, kh, kw, stride, pad):
    data = te.placeholder((n, c, h, w), "float32", name="data")
    weight = te.placeholder((f, c, kh, kw), "float32", name="weight")
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    src = topi.nn.pad(data, [0, 0, pad, pad], [0, 0, pad, pad], 0.0, name="pad_temp") if pad else data
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    out = te.compute(
        (n, f, oh, ow),
        lambda nn, ff, yy, xx: te.sum(src[nn, rc, yy * stride + ry, xx * stride + rx] * weight[ff, rc, ry, rx],
                                      axis=[rc, ry, rx]),
        name="conv2d_nchw")

    def ref(d, wt):
        dp = np.pad(d, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        win = np.lib.stride_tricks.sliding_window_view(dp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
        win = win[:, :, :oh, :ow]  # n, c, oh, ow, kh, kw
        return np.einsum("nchwyx,fcyx->nfhw", win, wt, optimize=True).astype("float32")

    return [data, weight, out], ref


_PATTERNS = [
    (re.compile(r"^matmul-(\d+)$"), lambda g: _matmul(int(g[0]), int(g[0]), int(g[0]))),
    (re.compile(r"^matmul-(\d+)x(\d+)x(\d+)$"), lambda g: _matmul(int(g[0]), int(g[1]), int(g[2]))),
    (re.compile(r"^dense-relu-(\d+)-(\d+)(?:-b(\d+))?$"),
     lambda g: _dense_relu(int(g[0]), int(g[1]), int(g[2] or 1))),
    (re.compile(r"^conv2d-(\d+)x(\d+)x(\d+)x(\d+)-(\d+)x(\d+)x(\d+)(?:-s(\d+))?(?:-p(\d+))?$"),
     lambda g: _conv2d(*(int(x) for x in g[:7]), int(g[7] or 1), int(g[8]) if g[8] is not None else int(g[5]) // 2)),
]


def kernel_workload(name: str):
    """``(IRModule with "main", numpy reference of the inputs, input shapes, output shape)`` for a name."""
    for pat, make in _PATTERNS:
        m = pat.match(name)
        if m:
            tensors, ref = make(m.groups())
            func = te.create_prim_func(tensors).with_attr("global_symbol", "main")
            shapes = [tuple(int(d) for d in t.shape) for t in tensors]
            return tvm.IRModule({"main": func}), ref, shapes[:-1], shapes[-1]
    raise TVMWorkloadError(f"no TVM definition for workload {name!r}; known forms: matmul-N, matmul-MxNxK, "
                           "dense-relu-IN-OUT[-bB], conv2d-NxCxHxW-FxKHxKW[-sS][-pP]")


def mlp_module(params: dict, batch: int) -> tvm.IRModule:
    """The course MLP ``relu(x @ w0.T + b0) @ w1.T + b1`` as Relax, weights bound as constants (``main(x)``)."""
    for key, shape in (("w0", (128, 784)), ("b0", (128,)), ("w1", (10, 128)), ("b1", (10,))):
        if key not in params or tuple(params[key].shape) != shape:
            raise TVMWorkloadError(f"MLP parameter {key!r} must have shape {shape}")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((batch, 784), "float32"))
    const = {k: relax.const(np.ascontiguousarray(v, dtype="float32")) for k, v in params.items()}
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.linear(x, const["w0"], const["b0"]))
            h = bb.emit(relax.op.nn.relu(h))
            out = bb.emit_output(relax.op.linear(h, const["w1"], const["b1"]))
        bb.emit_func_output(out)
    return bb.get()


def mlp_reference(x: np.ndarray, params: dict) -> np.ndarray:
    """numpy's MLP (the same expression as ``tunefarm.nn.models.mlp_reference``)."""
    return np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]
