"""The small programs the schedule fuzzer schedules at random (TVMScript text, parsed once each).

They cover what schedules meet: reductions with init (matmul, rowsum, rowmax with a ``max`` combiner), a
chain of blocks with intermediate buffers (dense + bias + ReLU), a padding producer with a stencil consumer
(conv2d), overlapping reads (a 3-point stencil), and two programs whose loops must never run concurrently:
``colsum_racy`` (every iteration of ``i`` adds into the same ``B[vk]``: TVM's "not compact data flow"
example, without its ``init``, whose reset of ``B[0]`` at every ``i`` would make the serial result depend on
the order of the spatial loop, which schedules may change) and ``prefix_sum`` (an opaque block whose
iterations read what the previous one wrote). Every one is correct as written; schedules must keep it so.
"""
from __future__ import annotations

PROGRAMS = {
    "matmul": '''
@T.prim_func
def matmul(A: T.Buffer((6, 8), "float32"), B: T.Buffer((8, 10), "float32"), C: T.Buffer((6, 10), "float32")):
    for i, j, k in T.grid(6, 10, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''',
    "dense_bias_relu": '''
@T.prim_func
def dense_bias_relu(X: T.Buffer((4, 8), "float32"), W: T.Buffer((6, 8), "float32"), b: T.Buffer((6,), "float32"),
                    F: T.Buffer((4, 6), "float32")):
    D = T.alloc_buffer((4, 6), "float32")
    E = T.alloc_buffer((4, 6), "float32")
    for i, j, k in T.grid(4, 6, 8):
        with T.block("dense"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(4, 6):
        with T.block("bias"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = D[vi, vj] + b[vj]
    for i, j in T.grid(4, 6):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            F[vi, vj] = T.max(E[vi, vj], T.float32(0))
''',
    "conv2d": '''
@T.prim_func
def conv2d(I: T.Buffer((1, 2, 5, 5), "float32"), W: T.Buffer((3, 2, 3, 3), "float32"),
           O: T.Buffer((1, 3, 5, 5), "float32")):
    P = T.alloc_buffer((1, 2, 7, 7), "float32")
    for n, c, h, w in T.grid(1, 2, 7, 7):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(vh >= 1 and vh < 6 and vw >= 1 and vw < 6,
                                               I[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 3, 5, 5, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                O[vn, vf, vy, vx] = T.float32(0)
            O[vn, vf, vy, vx] = O[vn, vf, vy, vx] + P[vn, vrc, vy + vry, vx + vrx] * W[vf, vrc, vry, vrx]
''',
    "rowsum": '''
@T.prim_func
def rowsum(A: T.Buffer((8, 12), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 12):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
''',
    "rowmax": '''
@T.prim_func
def rowmax(A: T.Buffer((4, 12), "float32"), M: T.Buffer((4,), "float32"), N: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 12):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-1000)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i in range(4):
        with T.block("N"):
            vi = T.axis.spatial(4, i)
            N[vi] = M[vi] * T.float32(3)
''',
    "stencil": '''
@T.prim_func
def stencil(A: T.Buffer((16,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(14):
        with T.block("C"):
            vi = T.axis.spatial(14, i)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
''',
    "colsum_racy": '''
@T.prim_func
def colsum_racy(A: T.Buffer((64, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(64, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vk] = B[vk] + A[vi, vk]
''',
    "prefix_sum": '''
@T.prim_func
def prefix_sum(A: T.Buffer((32,), "float32")):
    for i in range(31):
        with T.block("opaque"):
            A[i + 1] = A[i + 1] + A[i]
''',
}
