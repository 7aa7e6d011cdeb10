"""Test programs for the schedule tests, built with the IR constructors (independent of the front ends).

Each builder returns a fresh PrimFunc shaped as TVMScript prints the course's examples: one block per
computation, loops bound one-to-one to block iteration variables, regions inferred from the bodies.
``numpy_reference(name, *inputs)`` gives the expected outputs. ``mm_bias_relu_script(n)`` and
``stencil_script(n)`` are TVMScript text, for the tests that parse their programs (and edit the text into
variants).
"""
from __future__ import annotations

import numpy as np

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.regions import infer_block_regions


def nest(name: str, axes, body_fn, init_fn=None, loop_kinds=None):
    """Loops ``for <loop> in range(extent)`` around block ``name``.

    ``axes``: ``[(loop_name, extent, "S" | "R")]`` outermost first; ``body_fn(*block_vars)`` returns the
    BufferStore; ``init_fn`` the init store of a reduction.
    """
    loop_vars = [E.Var(n) for n, _, _ in axes]
    block_vars = [E.Var("v" + n) for n, _, _ in axes]
    iter_vars = [S.IterVar(bv, S.Range.from_extent(ext), kind) for bv, (_, ext, kind) in zip(block_vars, axes)]
    body = body_fn(*block_vars)
    init = init_fn(*block_vars) if init_fn is not None else None
    block = S.Block(name, iter_vars, (), (), body, init)
    reads, writes = infer_block_regions(block)
    block = block.replace(reads=reads, writes=writes)
    stmt = S.BlockRealize(loop_vars, S.TRUE, block)
    kinds = loop_kinds or ["serial"] * len(axes)
    for lv, (_, ext, _), kind in reversed(list(zip(loop_vars, axes, kinds))):
        stmt = S.For(lv, 0, ext, kind, stmt)
    return stmt


def _f32(x: float) -> E.PrimExpr:
    return E.const(float(x), "float32")


def matmul(n: int = 16, m: int = 16, k: int = 16, name: str = "main") -> PrimFunc:
    A = Buffer("A", (n, k))
    B = Buffer("B", (k, m))
    C = Buffer("C", (n, m))
    body = nest("C", [("i", n, "S"), ("j", m, "S"), ("k", k, "R")],
                lambda vi, vj, vk: S.BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
                lambda vi, vj, vk: S.BufferStore(C, _f32(0), (vi, vj)))
    return PrimFunc([A, B, C], wrap_root(body), {"global_symbol": name, "tir.noalias": True}, name)


def mm_relu(n: int = 128) -> PrimFunc:
    """The course's ``mm_relu``: Y = A @ B (block "Y"), C = max(Y, 0) (block "C")."""
    A, B, C = Buffer("A", (n, n)), Buffer("B", (n, n)), Buffer("C", (n, n))
    Y = Buffer("Y", (n, n))
    mm = nest("Y", [("i", n, "S"), ("j", n, "S"), ("k", n, "R")],
              lambda vi, vj, vk: S.BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
              lambda vi, vj, vk: S.BufferStore(Y, _f32(0), (vi, vj)))
    relu = nest("C", [("i", n, "S"), ("j", n, "S")],
                lambda vi, vj: S.BufferStore(C, E.max_(Y[vi, vj], _f32(0)), (vi, vj)))
    return PrimFunc([A, B, C], wrap_root(S.seq(mm, relu), [Y]), {"global_symbol": "mm_relu", "tir.noalias": True},
                    "mm_relu")


def dense_bias_relu(n: int = 8, m: int = 12, k: int = 16) -> PrimFunc:
    """D = X @ W^T (block "dense"), E = D + b (block "bias"), F = max(E, 0) (block "relu")."""
    X, W, b = Buffer("X", (n, k)), Buffer("W", (m, k)), Buffer("b", (m,))
    D, Eb, F = Buffer("D", (n, m)), Buffer("E", (n, m)), Buffer("F", (n, m))
    dense = nest("dense", [("i", n, "S"), ("j", m, "S"), ("k", k, "R")],
                 lambda vi, vj, vk: S.BufferStore(D, D[vi, vj] + X[vi, vk] * W[vj, vk], (vi, vj)),
                 lambda vi, vj, vk: S.BufferStore(D, _f32(0), (vi, vj)))
    bias = nest("bias", [("i", n, "S"), ("j", m, "S")],
                lambda vi, vj: S.BufferStore(Eb, D[vi, vj] + b[vj], (vi, vj)))
    relu = nest("relu", [("i", n, "S"), ("j", m, "S")],
                lambda vi, vj: S.BufferStore(F, E.max_(Eb[vi, vj], _f32(0)), (vi, vj)))
    return PrimFunc([X, W, b, F], wrap_root(S.seq(dense, bias, relu), [D, Eb]), {"global_symbol": "main"}, "main")


def conv2d(n: int = 1, ci: int = 2, hw: int = 6, co: int = 3, kk: int = 3, pad: int = 1) -> PrimFunc:
    """NCHW conv2d with a zero-padding block "pad" and the reduction block "conv" (stride 1)."""
    hp = hw + 2 * pad
    ho = hp - kk + 1
    I, Wt = Buffer("I", (n, ci, hw, hw)), Buffer("W", (co, ci, kk, kk))
    P, O = Buffer("P", (n, ci, hp, hp)), Buffer("O", (n, co, ho, ho))

    def pad_body(vn, vc, vh, vw):
        inside = E.logical_and(E.logical_and(vh >= pad, vh < hw + pad), E.logical_and(vw >= pad, vw < hw + pad))
        load = I[vn, vc, E.max_(E.min_(vh - pad, hw - 1), 0), E.max_(E.min_(vw - pad, hw - 1), 0)]
        return S.BufferStore(P, E.select(inside, load, _f32(0)), (vn, vc, vh, vw))

    padding = nest("pad", [("n", n, "S"), ("c", ci, "S"), ("h", hp, "S"), ("w", hp, "S")], pad_body)
    conv = nest("conv", [("n", n, "S"), ("f", co, "S"), ("y", ho, "S"), ("x", ho, "S"),
                         ("rc", ci, "R"), ("ry", kk, "R"), ("rx", kk, "R")],
                lambda vn, vf, vy, vx, vrc, vry, vrx: S.BufferStore(
                    O, O[vn, vf, vy, vx] + P[vn, vrc, vy + vry, vx + vrx] * Wt[vf, vrc, vry, vrx], (vn, vf, vy, vx)),
                lambda vn, vf, vy, vx, vrc, vry, vrx: S.BufferStore(O, _f32(0), (vn, vf, vy, vx)))
    return PrimFunc([I, Wt, O], wrap_root(S.seq(padding, conv), [P]), {"global_symbol": "main"}, "main")


def vector_add(n: int = 128) -> PrimFunc:
    """The course's ``vector_add`` whose loop is ``T.parallel``."""
    A, B, C = Buffer("A", (n,)), Buffer("B", (n,)), Buffer("C", (n,))
    body = nest("C", [("i", n, "S")], lambda vi: S.BufferStore(C, A[vi] + B[vi], (vi,)), loop_kinds=["parallel"])
    return PrimFunc([A, B, C], wrap_root(body), {"global_symbol": "vector_add"}, "vector_add")


def add4x4() -> PrimFunc:
    """The course's ``MyAdd.add`` (4x4 int64)."""
    A, B, C = (Buffer(x, (4, 4), "int64") for x in "ABC")
    body = nest("C", [("i", 4, "S"), ("j", 4, "S")], lambda vi, vj: S.BufferStore(C, A[vi, vj] + B[vi, vj], (vi, vj)))
    return PrimFunc([A, B, C], wrap_root(body), {"global_symbol": "add", "tir.noalias": True}, "add")


def before_inline(n: int = 128) -> PrimFunc:
    A, C, B = Buffer("A", (n, n)), Buffer("C", (n, n)), Buffer("B", (n, n))
    b = nest("B", [("i", n, "S"), ("j", n, "S")], lambda vi, vj: S.BufferStore(B, A[vi, vj] * _f32(2), (vi, vj)))
    c = nest("C", [("i", n, "S"), ("j", n, "S")], lambda vi, vj: S.BufferStore(C, B[vi, vj] + _f32(1), (vi, vj)))
    return PrimFunc([A, C], wrap_root(S.seq(b, c), [B]), {}, "before_inline")


def before_fuse(n: int = 128) -> PrimFunc:
    A, B = Buffer("A", (n, n)), Buffer("B", (n, n))
    b = nest("B", [("i", n, "S"), ("j", n, "S")], lambda vi, vj: S.BufferStore(B, A[vi, vj] * _f32(2), (vi, vj)))
    return PrimFunc([A, B], wrap_root(b), {}, "before_fuse")


def row_sum(n: int = 8, m: int = 12) -> PrimFunc:
    """B[i] = sum_j A[i, j]: a reduction whose loop can be rfactor-ed."""
    A, B = Buffer("A", (n, m)), Buffer("B", (n,))
    body = nest("B", [("i", n, "S"), ("j", m, "R")],
                lambda vi, vj: S.BufferStore(B, B[vi] + A[vi, vj], (vi,)),
                lambda vi, vj: S.BufferStore(B, _f32(0), (vi,)))
    return PrimFunc([A, B], wrap_root(body), {"global_symbol": "main"}, "main")


def mm_bias_relu_script(n: int) -> str:
    """TVMScript text of ``C = relu(A @ B + D)`` over n x n (blocks "Y", "Z", "C"; ``D`` is a bias per column)."""
    return f'''
@T.prim_func
def mm_bias_relu(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
                 D: T.Buffer(({n},), "float32"), C: T.Buffer(({n}, {n}), "float32")):
    Y = T.alloc_buffer(({n}, {n}), "float32")
    Z = T.alloc_buffer(({n}, {n}), "float32")
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid({n}, {n}):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + D[vj]
    for i, j in T.grid({n}, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Z[vi, vj], T.float32(0))
'''


def stencil_script(n: int) -> str:
    """TVMScript text of ``B = 2 * A`` (block "B") and the 3-point stencil ``C[i] = B[i] + B[i+1] + B[i+2]``."""
    m = n - 2
    return f'''
@T.prim_func
def stencil(A: T.Buffer(({n},), "float32"), C: T.Buffer(({m},), "float32")):
    B = T.alloc_buffer(({n},), "float32")
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range({m}):
        with T.block("C"):
            vi = T.axis.spatial({m}, i)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
'''


# --------------------------------------------------------------------------------------------------------
# inputs and numpy references
# --------------------------------------------------------------------------------------------------------
def random_args(func: PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """Random inputs and zeroed outputs (the last parameter is the output in all programs here)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for p in func.params:
        shape = p.const_shape()
        if p.dtype.startswith("int"):
            arrays.append(rng.integers(-50, 50, size=shape).astype(p.dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(p.dtype))
    arrays[-1][...] = 0
    return arrays


def expected(func_name: str, args) -> np.ndarray:
    """numpy's answer for the output of the named builder, from the input arrays ``args[:-1]``."""
    if func_name == "matmul":
        a, b = args[:2]
        return a @ b
    if func_name == "mm_relu":
        a, b = args[:2]
        return np.maximum(a @ b, 0)
    if func_name == "dense_bias_relu":
        x, w, b = args[:3]
        return np.maximum(x @ w.T + b, 0)
    if func_name == "conv2d":
        i, w = args[:2]
        n, ci, hw, _ = i.shape
        co, _, kk, _ = w.shape
        pad = (args[2].shape[2] + kk - 1 - hw) // 2
        p = np.pad(i, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        ho = p.shape[2] - kk + 1
        out = np.zeros((n, co, ho, ho), dtype=i.dtype)
        for ry in range(kk):
            for rx in range(kk):
                out += np.einsum("nchw,fc->nfhw", p[:, :, ry:ry + ho, rx:rx + ho], w[:, :, ry, rx])
        return out
    if func_name in ("vector_add", "add4x4"):
        return args[0] + args[1]
    if func_name == "before_inline":
        return args[0] * 2 + 1
    if func_name == "before_fuse":
        return args[0] * 2
    if func_name == "row_sum":
        return args[0].sum(axis=1)
    raise KeyError(func_name)


BUILDERS = {"matmul": matmul, "mm_relu": mm_relu, "dense_bias_relu": dense_bias_relu, "conv2d": conv2d,
            "vector_add": vector_add, "add4x4": add4x4, "before_inline": before_inline, "before_fuse": before_fuse,
            "row_sum": row_sum}


def check_numerics(func_or_mod, builder_name: str, seed: int = 0, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Run ``func_or_mod`` in the reference executor and compare its output with numpy."""
    from tunefarm.reference import interpret

    func = func_or_mod
    if not isinstance(func, PrimFunc):
        funcs = func.prim_funcs()
        func = next(iter(funcs.values())) if len(funcs) == 1 else funcs["main"]
    args = random_args(func, seed)
    interpret(func, *args)
    np.testing.assert_allclose(args[-1], expected(builder_name, args), rtol=rtol, atol=atol)
