"""build() refuses a program whose unrolled code LLVM would spend minutes on, before LLVM sees it.

The drill: ``fuse(i, j, k)`` then ``unroll`` of the fused loop of a 37x53x29 matmul (113,738 statements once
unrolled); ``tunefarm.build`` had not returned after 10 minutes. The builds run in a child process with a
deadline, so a build that would hang fails the test instead of stalling the suite.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tunefarm.codegen import CodeSizeError
from tunefarm.codegen.code_size import MAX_UNROLLED_LOOPS, MAX_UNROLLED_STATEMENTS, code_size
from tunefarm.runtime import build
from tunefarm.schedule import Schedule
from tunefarm.search.workloads import load_workload

_CHILD = """
import sys
from tunefarm.codegen import CodeSizeError
from tunefarm.runtime import build
from tunefarm.schedule import Schedule
from tunefarm.search.workloads import load_workload
_, f = load_workload(sys.argv[1])
sch = Schedule(f)
i, j, k = sch.get_loops(sch.get_block("C"))
sch.unroll(sch.fuse(i, j, k) if sys.argv[2] == "ijk" else sch.fuse(i, j))
try:
    build(sch.mod["main"], "llvm -num-cores=1")
except CodeSizeError as e:
    print("refused:", e)
else:
    print("built")
"""


def _build_in_child(workload: str, fused: str) -> str:
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, workload, fused], capture_output=True, text=True,
                             timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"building {workload} with {fused} fused and unrolled did not return in 120 s")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_drills_huge_unroll_is_refused_naming_the_loop_and_size():
    msg = _build_in_child("matmul-37x53x29", "ijk")
    assert msg.startswith("refused: main: unrolling loop 'i0_i1_i2_fused' makes 113,738 statements"), msg
    assert f"limit of {MAX_UNROLLED_STATEMENTS:,}" in msg and "\n" not in msg


def test_unrolling_a_loop_around_rolled_loops_is_bounded_by_the_copies():
    msg = _build_in_child("matmul-64x64x8", "ij")  # 4,096 copies of the k loop: 396 s measured
    assert msg.startswith("refused: main: unrolling loop 'i0_i1_fused' makes 4,096 loops"), msg
    assert f"limit of {MAX_UNROLLED_LOOPS:,}" in msg


def test_unrolls_under_the_limits_build_and_compute_the_product():
    for workload, fused in (("matmul-8x8x8", "ijk"), ("matmul-8x16x8", "ij")):
        _, f = load_workload(workload)
        sch = Schedule(f)
        i, j, k = sch.get_loops(sch.get_block("C"))
        loop = sch.fuse(i, j, k) if fused == "ijk" else sch.fuse(i, j)
        sch.unroll(loop)
        size = code_size(sch.mod["main"])
        assert 0 < size.statements_made <= MAX_UNROLLED_STATEMENTS and size.loops_made <= MAX_UNROLLED_LOOPS
        mod = build(sch.mod["main"], "llvm -num-cores=1")
        m, n, kk = (int(x) for x in workload.split("-")[1].split("x"))
        rng = np.random.default_rng(0)
        a, b = rng.random((m, kk), dtype="float32"), rng.random((kk, n), dtype="float32")
        c = np.full((m, n), np.nan, "float32")
        mod(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_the_error_is_a_typed_lowering_error():
    _, f = load_workload("matmul-37x53x29")
    sch = Schedule(f)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.unroll(sch.fuse(i, j, k))
    with pytest.raises(CodeSizeError) as info:
        build(sch.mod["main"])
    assert isinstance(info.value, ValueError)
