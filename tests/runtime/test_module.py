"""Modules: calling conventions, save/load in a fresh process, time_evaluator, source inspection."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime_programs as RP
from host_targets import a_feature_this_host_lacks
from tunefarm.runtime import BenchmarkResult, build, load_module
from tunefarm.runtime.module_file import ModuleFileError, read_module_file
from tunefarm.target import Target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_single_function_module_is_callable_directly(mm_mod):
    a, b = np.ones((2, 8), "float32"), np.full((8, 3), 2, "float32")
    c = np.zeros((2, 3), "float32")
    mm_mod(a, b, c)
    np.testing.assert_array_equal(c, 16)
    assert mm_mod.function_names == ["matmul"] and "matmul" in mm_mod
    assert "A: float32(n, 8)" in repr(mm_mod["matmul"])


def test_save_and_load_in_a_fresh_process_without_recompiling(tmp_path, mm_mod):
    path = tmp_path / "mm.tfmod"
    mm_mod.save(path)
    obj, meta, ll = read_module_file(path)
    assert obj[:4] == b"\x7fELF" and meta["functions"][0]["name"] == "matmul" and "define" in ll
    script = textwrap.dedent(f"""
        import sys, time, json
        import numpy as np
        t0 = time.perf_counter()
        from tunefarm.runtime import load_module
        mod = load_module({str(path)!r})
        t1 = time.perf_counter()
        a = np.arange(16, dtype="float32").reshape(2, 8); b = np.ones((8, 5), "float32")
        c = np.zeros((2, 5), "float32")
        mod["matmul"](a, b, c)
        heavy = [m for m in ("ray", "xgboost", "tunefarm.codegen", "tunefarm.schedule") if m in sys.modules]
        print(json.dumps({{"ok": bool((c == (a @ b)).all()), "heavy": heavy, "load_s": t1 - t0}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["ok"]
    assert res["heavy"] == []  # no ray, no xgboost, not even the code generator


def test_loaded_module_in_process_and_parallel_module(tmp_path):
    f = RP.add(1000)
    mod = build(f, Target.host(2))
    path = tmp_path / "add.tfmod"
    mod.save(path)
    again = load_module(path)
    a, b, c = np.ones(1000, "float32"), np.arange(1000, dtype="float32"), np.zeros(1000, "float32")
    again["add"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    assert again.target == Target.host(2)


def test_corrupt_or_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_module(tmp_path / "missing.tfmod")
    bad = tmp_path / "bad.tfmod"
    bad.write_bytes(b"not a module")
    with pytest.raises(ModuleFileError, match="bad magic"):
        load_module(bad)
    good = tmp_path / "good.tfmod"
    build(RP.add(8)).save(good)
    data = good.read_bytes()
    (tmp_path / "short.tfmod").write_bytes(data[:-10])
    with pytest.raises(ModuleFileError, match="truncated"):
        load_module(tmp_path / "short.tfmod")


def test_module_for_a_foreign_cpu_refuses_to_run():
    from tunefarm.codegen import compile_funcs
    from tunefarm.runtime import Module

    art = compile_funcs(RP.add(8), Target(f"llvm -mattr=+{a_feature_this_host_lacks()}"))  # this CPU, plus one
    assert art.object[:4] == b"\x7fELF"  # cross-compiling works...
    with pytest.raises(RuntimeError, match="may use instructions this CPU"):
        Module.from_artifact(art)  # ...but running it here could SIGILL: refused


def test_time_evaluator_result_fields(mm_mod):
    a, b = np.ones((16, 8), "float32"), np.ones((8, 16), "float32")
    c = np.zeros((16, 16), "float32")
    ev = mm_mod.time_evaluator("matmul", None, number=5, repeat=4)
    res = ev(a, b, c)
    assert isinstance(res, BenchmarkResult)
    assert len(res.results) == 4 and all(r > 0 for r in res.results)
    assert res.min <= res.median <= res.max and res.min <= res.mean <= res.max
    np.testing.assert_array_equal(c, 8)  # the kernel really ran
    with pytest.raises(ValueError, match="parameter 'C'"):
        ev(a, b, np.zeros((16, 15), "float32"))


def test_min_repeat_ms_grows_number(mm_mod):
    a, b = np.ones((4, 8), "float32"), np.ones((8, 4), "float32")
    c = np.zeros((4, 4), "float32")
    ev = mm_mod["matmul"].time_evaluator(number=1, repeat=2, min_repeat_ms=20)
    res = ev(a, b, c)
    # a 4x8x4 matmul takes well under a microsecond: the number of calls per repeat must have grown until a
    # repeat lasted 20 ms
    assert res.number > 1000
    assert res.number * res.median >= 0.02 * 0.999
    plain = mm_mod["matmul"].time_evaluator(number=7, repeat=2)(a, b, c)
    assert plain.number == 7


def test_flush_cache_runs(mm_mod):
    a, b = np.ones((4, 8), "float32"), np.ones((8, 4), "float32")
    c = np.zeros((4, 4), "float32")
    res = mm_mod.time_evaluator("matmul", number=2, repeat=2, flush_cache=True)(a, b, c)
    assert len(res.results) == 2


def test_time_evaluator_rejects_bad_settings(mm_mod):
    with pytest.raises(ValueError, match="number and repeat"):
        mm_mod.time_evaluator("matmul", number=0)
    with pytest.raises(ValueError, match="min_repeat_ms"):
        mm_mod.time_evaluator("matmul", min_repeat_ms=-1)


def test_get_source(mm_mod):
    ll = mm_mod.get_source("ll")
    asm = mm_mod.get_source("asm")
    assert "define void @matmul(ptr" in ll
    assert "matmul:" in asm and "ret" in asm
    with pytest.raises(ValueError, match="unknown source format"):
        mm_mod.get_source("cuda")


def test_bound_call_timing_loop_and_native_timer_agree(mm_mod):
    """The native timer and the bound call run the same kernel: both leave the same result."""
    a = np.random.default_rng(0).standard_normal((5, 8)).astype("float32")
    b = np.random.default_rng(1).standard_normal((8, 7)).astype("float32")
    c1, c2 = np.zeros((5, 7), "float32"), np.zeros((5, 7), "float32")
    mm_mod["matmul"].bind(a, b, c1)()
    mm_mod.time_evaluator("matmul", number=3)(a, b, c2)
    np.testing.assert_allclose(c1, a @ b, rtol=1e-5)
    np.testing.assert_array_equal(c1, c2)
