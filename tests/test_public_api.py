"""The public API: ``dir(tunefarm)`` lists public names only, ``import tunefarm`` stays light, ``compile`` takes
what a user has (PrimFuncs, a model, a tuned function with its database) and ``load`` reads either kind back."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.database import Record
from tunefarm.graph import Executable
from tunefarm.ir.serialize import dumps
from tunefarm.ir.structural import program_hash, workload_key
from tunefarm.runtime import Module
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.search import SearchError
from tunefarm.target import Target

from course_programs import MatmulModule

ROOT = Path(__file__).resolve().parent.parent
MATMUL = MatmulModule["main"]  # 128^3, block "C"


def _operands(seed: int = 0):
    a, b = np.random.default_rng(seed).standard_normal((2, 128, 128), dtype=np.float32)
    return a, b, np.zeros((128, 128), np.float32)


def test_dir_lists_the_public_names_only():
    names = dir(tunefarm)
    assert [n for n in names if n.startswith("_")] == ["__version__"]
    assert {"annotations", "importlib", "build", "compile_tir", "load_module"}.isdisjoint(names)
    assert {"tune", "tune_model", "compile", "load", "Database", "Schedule", "Trace", "Target", "nn", "tvm"} <= \
        set(names)
    for name in names:  # every listed name is there
        getattr(tunefarm, name)
    with pytest.raises(AttributeError):
        tunefarm.compile_tir  # noqa: B018 - compile(func, database=...) replaces it


def test_import_and_dir_load_nothing_else():
    code = ("import json, sys, tunefarm; dir(tunefarm); print(json.dumps([m for m in sys.modules if "
            "m.startswith('tunefarm.') or m in ('ray', 'xgboost', 'llvmlite', 'pandas', 'numpy')]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_compile_builds_prim_funcs_into_a_module_and_a_model_into_an_executable():
    a, b, c = _operands()
    lib = tunefarm.compile(MATMUL)
    assert isinstance(lib, Module) and lib.function_names == ["main"]
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert tunefarm.compile(MatmulModule, target="llvm -num-cores=1").function_names == ["main"]
    mod, params = nn.ReLU().export({"forward": {"x": nn.spec.Tensor((2, 3), "float32")}})
    exe = tunefarm.compile(mod, params)
    assert isinstance(exe, Executable)
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(exe(x), np.maximum(x, 0))
    with pytest.raises(TypeError, match="params are bound into a model's graph function"):
        tunefarm.compile(MATMUL, params={"w": np.zeros(3, np.float32)})
    with pytest.raises(TypeError, match="PrimFunc or an IRModule, got str"):
        tunefarm.compile("main")


def test_load_reads_back_a_module_and_an_executable(tmp_path):
    tunefarm.compile(MATMUL).save(tmp_path / "mm.tfmod")
    mod, params = nn.ReLU().export({"forward": {"x": nn.spec.Tensor((2, 3), "float32")}})
    tunefarm.compile(mod, params).save(tmp_path / "relu.tfx")
    lib = tunefarm.load(tmp_path / "mm.tfmod")
    a, b, c = _operands(1)
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    exe = tunefarm.load(str(tmp_path / "relu.tfx"))
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    assert isinstance(exe, Executable) and np.array_equal(exe(x), np.maximum(x, 0))
    with pytest.raises(FileNotFoundError, match="no saved module or executable"):
        tunefarm.load(tmp_path / "missing.tfx")


def _split_j(factor: int):
    """The matmul with its ``j`` loop split by ``factor``: a program of its own."""
    sch = tunefarm.Schedule(MATMUL)
    _, j, _ = sch.get_loops(sch.get_block("C", "main"))
    sch.split(j, factors=[128 // factor, factor])
    return sch


def _tuned_database(path, target: Target, timed: list) -> tunefarm.Database:
    """A database holding ``(schedule, seconds)`` measurements of the matmul on ``target``, as a job stores them."""
    db = tunefarm.Database(path)
    key = workload_key(MATMUL)
    db.commit_workload(key, "main", dumps(MATMUL))
    job = db.start_job("test", {})
    db.commit_records([Record(key, sch.trace.as_json(), program_hash(sch.mod["main"]), str(target),
                              MeasureResult(MeasureStatus.OK, [secs] * 3, 0.01, None, "here"), job, i)
                       for i, (sch, secs) in enumerate(timed)])
    db.finish_job(job)
    return db


def test_compile_with_a_database_builds_the_fastest_stored_schedule(tmp_path):
    target = Target.host(1)
    fast, slow = _split_j(4), _split_j(8)
    db = _tuned_database(tmp_path / "t.sqlite", target, [(slow, 2e-3), (fast, 1e-3)])
    lib = tunefarm.compile(MATMUL, database=str(tmp_path / "t.sqlite"))  # no target: the one it was tuned for
    assert lib.target == target and lib.function_names == ["main"]
    # the fastest record's program and nothing else: the same LLVM IR as building that schedule by hand
    assert lib.get_source("ll") == tunefarm.compile(fast.mod["main"], target=target).get_source("ll")
    assert lib.get_source("ll") != tunefarm.compile(slow.mod["main"], target=target).get_source("ll")
    a, b, c = _operands(2)
    tunefarm.compile(MatmulModule, database=db, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(SearchError, match="no successful tuning record of 'main' for target"):
        tunefarm.compile(MATMUL, database=db, target=Target.host(2))
