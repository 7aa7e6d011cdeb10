"""Vectorized selects read memory only in the lanes whose guard picks that side, as the scalar path branches.

A padding select's memory side may lie outside its buffer in some lanes (or in all of them: the fuzzer found
a padding block whose unrolled ``h = 0`` copy loaded wholly outside the cached input). The side's loads are
masked by the guard (broadcast when the lanes share it), and the loop stays one vector loop.
The programs of ``guarded_read_programs.py`` put a wrong read 4 GB away, so they run in a child process and a
read the guard forbids fails the test instead of crashing the run.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from guarded_read_programs import GUARDS, source
from tunefarm.codegen import lower_and_emit
from tunefarm.reference import interpret
from tunefarm.runtime.build_module import build
from tunefarm.schedule import Schedule
from tunefarm.script import from_source
from tunefarm.target import Target
from tunefarm.testing.fuzz_programs import PROGRAMS

HERE = Path(__file__).resolve().parent

CONV2D = PROGRAMS["conv2d"]  # the fuzzer's program whose padding copy read outside its input


def unoptimized_ir(func) -> str:
    return str(lower_and_emit(func, Target()).module)


def test_unrolled_vectorized_padding_over_a_cached_input_matches_numpy():
    func = from_source(CONV2D)
    sch = Schedule(func)
    pad = sch.get_block("pad")
    _, c, h, w = sch.get_loops(pad)
    sch.unroll(h)
    sch.vectorize(w)
    sch.cache_read(pad, 0, "global")
    sch.unroll(c)
    ir = unoptimized_ir(sch.mod["main"])
    assert "llvm.masked.load.v7f32" in ir  # the padding row is still one vector, its reads masked
    assert re.search(r"store <7 x float>", ir)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in [(1, 2, 5, 5), (3, 2, 3, 3), (1, 3, 5, 5)]]
    want = [a.copy() for a in arrays]
    interpret(func, *want)
    got = [a.copy() for a in arrays]
    build({"p": sch.mod["main"]}, "llvm -num-cores=4")["p"](*got)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["contiguous", "gather", "lane-invariant", "contiguous+nested",
                                  "gather+divide"])
def test_guarded_reads_match_numpy_for_every_guard_shape(kind):
    run = subprocess.run([sys.executable, str(HERE / "guarded_read_programs.py"), kind], capture_output=True,
                         text=True, timeout=300, cwd=HERE.parents[1])
    assert run.returncode == 0, f"the program crashed (rc {run.returncode}): {run.stderr[-2000:]}"
    assert run.stdout.split("\n") == [f"{name} ok" for name in GUARDS] + [""], run.stdout


def test_a_lane_dependent_guard_masks_a_unit_stride_read_and_stays_vector():
    ir = unoptimized_ir(from_source(source("vl % 3 != 1", "vl + 16 * (vr - 1)")))
    assert "call <16 x float> @\"llvm.masked.load.v16f32.p0\"(ptr align 4" in ir
    assert not re.search(r"load <16 x float>, ptr", ir)  # no unmasked read of the guarded side
    assert re.search(r"select\s+<16 x i1> .*, <16 x float>", ir)
    assert re.search(r"store <16 x float>", ir)


def test_a_guard_every_lane_shares_masks_with_its_broadcast_and_stays_vector():
    ir = unoptimized_ir(from_source(source("vr >= 0", "vl + 16 * (vr - 1)")))  # no lane variable in the guard
    assert "llvm.masked.load.v16f32" in ir
    assert "select.true" not in ir and not re.search(r"phi\s+<16 x float>", ir)  # no per-lane phi
    assert re.search(r"store <16 x float>", ir)
    k, x = np.array([0, 1, 1], np.int32), np.arange(64, dtype="float32")
    y = np.zeros((3, 16), "float32")
    build(from_source(source("vr >= 0", "vl + 16 * (vr - 1)").replace("1000000000", "0")))(k, x, y)
    np.testing.assert_array_equal(y, np.concatenate([np.full((1, 16), -1, "float32"), x[:32].reshape(2, 16)]))


def test_a_select_without_reads_stays_one_vector_select():
    text = source("vl % 3 != 1", "vl").replace("x[vl + 1000000000 * (k[vr] - 1)]", "T.float32(2)")
    ir = unoptimized_ir(from_source(text))
    assert "masked.load" not in ir and "select.true" not in ir
    assert re.search(r"select\s+<16 x i1> .*, <16 x float>", ir)
