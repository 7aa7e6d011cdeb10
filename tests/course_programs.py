"""The MLC course's tensor programs written in TVMScript, for every engineer's tests.

Import as ``import course_programs as cp`` (``tests/`` is on ``sys.path`` via ``conftest.py``). Module-level
objects (all parsed at import time, so a parser regression fails loudly everywhere):

* ``MyModule`` (IRModule with ``mm_relu``, as printed in seeds/004, old ``T.Buffer[...]`` spelling) and
  ``mm_relu``;
* ``MatmulModule`` / ``matmul``: 128^3 matmul, function ``main``, block ``"C"`` (``stochastic_schedule_mm``);
* ``vector_add`` (``T.parallel``, seeds/001), ``MyAdd`` / ``my_add`` (int64 4x4 add, seeds/001);
* the three modules of seeds/000, as written there: ``MLPModuleWithMain`` (the notes' ``MyModule``, renamed:
  ``relu0`` / ``linear0`` with symbolic dims, ``n = T.int64()`` + ``T.match_buffer``, and the Relax ``main``
  calling them), ``MyModuleWithExternCall``, and ``MyModuleMixture`` (parsed from the notes' own block);
* ``MLPModule``: ``MLPModuleWithMain``'s prim funcs alone, and ``relu0`` / ``linear0``;
* ``dense_bias_relu``: 1x784 -> 128 dense + bias + ReLU (blocks ``dense``, ``add``, ``relu``);
* ``conv2d_nchw``: a small NCHW convolution (1x2x8x8 input, 4x2x3x3 weight, no padding);
* ``before_inline`` / ``before_fuse``: the compute_inline / fuse examples of seeds/000.

``REFERENCES[name](*inputs) -> output`` computes each program's result with numpy (inputs first, as the
destination-passing call takes them; the output is the last parameter). ``PRIM_FUNCS`` and ``MODULES``
list everything by name.

The notes' own script blocks, verbatim (``tests/script/course_scripts/``), are there for tests that check a
result against the printout the notes show: ``course_scripts(prefix)`` lists the complete definitions of one
set of notes, ``course_script(prefix, *parts)`` picks the one that contains every part, ``notes_module(prefix,
class_name)`` parses one module of the notes whole.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tunefarm.ir.module import IRModule
from tunefarm.script import R, T, from_source, ir_module


@ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"],
                C: T.Buffer[(128, 128), "float32"]) -> None:
        # function attr dict
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        # with T.block("root")
        Y = T.alloc_buffer([128, 128], dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


mm_relu = MyModule["mm_relu"]


@ir_module
class MatmulModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


matmul = MatmulModule["main"]


@T.prim_func
def vector_add(A: T.Buffer[128, "float32"],
               B: T.Buffer[128, "float32"],
               C: T.Buffer[128, "float32"]):
    # element-wise add, in parallel
    for i in T.parallel(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = A[vi] + B[vi]


@ir_module
class MyAdd:
    @T.prim_func
    def add(A: T.Buffer((4, 4), "int64"),
            B: T.Buffer((4, 4), "int64"),
            C: T.Buffer((4, 4), "int64")):
        T.func_attr({"global_symbol": "add", "tir.noalias": True})
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(4, j)
                C[vi, vj] = A[vi, vj] + B[vi, vj]


my_add = MyAdd["add"]


@ir_module
class MLPModuleWithMain:  # the notes' ``MyModule``
    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (1, n), "float32")
        Y = T.match_buffer(y, (1, n), "float32")
        for i, j in T.grid(1, n):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear0(x: T.handle,
                w: T.handle,
                b: T.handle,
                z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n, ), "float32")
        Z = T.match_buffer(z, (1, n), "float32")
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, k in T.grid(1, n, m):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("relu0", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("linear0", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


@ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        # block 0
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


MLPModule = IRModule({name: MLPModuleWithMain[name] for name in ("relu0", "linear0")})
relu0 = MLPModule["relu0"]
linear0 = MLPModule["linear0"]


@T.prim_func
def dense_bias_relu(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                    B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
    T.func_attr({"global_symbol": "dense_bias_relu", "tir.noalias": True})
    D = T.alloc_buffer((1, 128), "float32")
    S = T.alloc_buffer((1, 128), "float32")
    for i, j, k in T.grid(1, 128, 784):
        with T.block("dense"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, 128):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = D[vi, vj] + B[vj]
    for i, j in T.grid(1, 128):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = T.max(S[vi, vj], T.float32(0))


@T.prim_func
def conv2d_nchw(X: T.Buffer((1, 2, 8, 8), "float32"), K: T.Buffer((4, 2, 3, 3), "float32"),
                Y: T.Buffer((1, 4, 6, 6), "float32")):
    T.func_attr({"global_symbol": "conv2d_nchw", "tir.noalias": True})
    for n, co, h, w, ci, kh, kw in T.grid(1, 4, 6, 6, 2, 3, 3):
        with T.block("conv"):
            vn, vco, vh, vw, vci, vkh, vkw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, kh, kw])
            with T.init():
                Y[vn, vco, vh, vw] = T.float32(0)
            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh + vkh, vw + vkw] * K[vco, vci, vkh, vkw]


@T.prim_func
def before_inline(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (128, 128))
    B = T.alloc_buffer((128, 128))
    C = T.match_buffer(c, (128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def before_fuse(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, (128, 128))
    B = T.match_buffer(b, (128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


def _conv2d_ref(x, k):
    n, ci, h, w = x.shape
    co, _, kh, kw = k.shape
    out = np.zeros((n, co, h - kh + 1, w - kw + 1), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + w - kw + 1]
            out += np.einsum("nchw,oc->nohw", patch, k[:, :, i, j])
    return out


REFERENCES = {
    "mm_relu": lambda A, B: np.maximum(A @ B, 0),
    "matmul": lambda A, B: A @ B,
    "vector_add": lambda A, B: A + B,
    "my_add": lambda A, B: A + B,
    "relu0": lambda X: np.maximum(X, 0),
    "linear0": lambda X, W, B: X @ W.T + B,
    "dense_bias_relu": lambda X, W, B: np.maximum(X @ W.T + B, 0),
    "conv2d_nchw": _conv2d_ref,
    "before_inline": lambda A: A * 2 + 1,
    "before_fuse": lambda A: A * 2,
}

PRIM_FUNCS = {
    "mm_relu": mm_relu, "matmul": matmul, "vector_add": vector_add, "my_add": my_add, "relu0": relu0,
    "linear0": linear0, "dense_bias_relu": dense_bias_relu, "conv2d_nchw": conv2d_nchw,
    "before_inline": before_inline, "before_fuse": before_fuse,
}

MODULES = {"MyModule": MyModule, "MatmulModule": MatmulModule, "MyAdd": MyAdd, "MLPModule": MLPModule}


# ----------------------------------------------------------------------------------------------------------
# the notes' own script blocks (tests/script/course_scripts/*.md): the programs and printouts as written there
# ----------------------------------------------------------------------------------------------------------
COURSE_SCRIPTS = Path(__file__).resolve().parent / "script" / "course_scripts"


def _notes(prefix: str) -> str:
    return (COURSE_SCRIPTS / f"{prefix}.md").read_text(encoding="utf-8")


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python3?\n(.*?)```", text, flags=re.S)


def _drop_relax_functions(code: str) -> str:
    """Remove ``@R.function`` methods (the graph front end parses those) and keep everything else."""
    out, skip = [], None
    lines = code.splitlines()
    for k, ln in enumerate(lines):
        ind = len(ln) - len(ln.lstrip())
        if skip is not None:
            if not ln.strip() or ind > skip or (ind == skip and ln.lstrip().startswith("def ")
                                                 and lines[k - 1].lstrip().startswith("@R.")):
                continue
            skip = None
        if ln.lstrip().startswith("@R.function"):
            skip = ind
            continue
        out.append(ln)
    return "\n".join(out)


def _script_only(code: str) -> str:
    """Cut the notebook code that follows a definition (``sch = tvm.tir.Schedule(...)``)."""
    out, started = [], False
    for ln in code.splitlines():
        if ln and not ln[0].isspace() and started and not ln.startswith(("@", "def ", "class ", "#")):
            break
        started = started or ln.startswith(("@", "def ", "class "))
        out.append(ln)
    return "\n".join(out)


def course_scripts(prefix: str) -> list[str]:
    """The complete TVMScript definitions in notes ``prefix`` ("000", "001", "003" or "004"), in their order, as
    written there: every code block with a ``@T.prim_func`` (elided ``...`` bodies left out), cut after its
    definition, without ``@R.function`` methods."""
    out = []
    for b in _blocks(_notes(prefix)):
        if "T.prim_func" in b and "\n        ...\n" not in b:
            out.append(_script_only(_drop_relax_functions(b)))
    return out


def notes_module(prefix: str, class_name: str) -> IRModule:
    """The module ``class <class_name>:`` of notes ``prefix``, parsed as written there (Relax functions too)."""
    (block,) = [b for b in _blocks(_notes(prefix)) if f"\nclass {class_name}:\n" in b]
    return from_source(block)


def course_script(prefix: str, *parts: str) -> str:
    """The one script of ``course_scripts(prefix)`` that contains every string in ``parts``."""
    found = [s for s in course_scripts(prefix) if all(p in s for p in parts)]
    if len(found) != 1:
        raise LookupError(f"{len(found)} scripts of notes {prefix} contain all of {parts}")
    return found[0]


# the notes' mixture of a kernel (their linear0 again) and library functions, parsed from the notes as written
MyModuleMixture = notes_module("000", "MyModuleMixture")
