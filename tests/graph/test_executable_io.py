"""Saved executables load and run in a fresh process without importing the tuning stack (ray, xgboost)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.graph import ExecutableError
from tunefarm.nn.models import mlp

from graph_helpers import ROOT, numpy_mlp
from course_programs import MyModuleMixture, MyModuleWithExternCall


def _fresh_python(code: str) -> str:
    env_code = textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, timeout=120,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_native_executable_round_trip_in_a_fresh_process(tmp_path, mlp_params):
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    exe = tunefarm.compile(mod, params)
    path = tmp_path / "mlp.tfx"
    exe.save(path)
    x = np.random.default_rng(11).random((1, 784), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    out = _fresh_python(f"""
        import sys, numpy as np
        import tunefarm
        exe = tunefarm.load({str(path)!r})
        x = np.load({str(tmp_path / 'x.npy')!r})
        np.save({str(tmp_path / 'y.npy')!r}, exe(x))
        print(exe.kind, 'ray' in sys.modules, 'xgboost' in sys.modules)
    """)
    assert out.split() == ["native", "False", "False"]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), numpy_mlp(x, mlp_params), atol=1e-4)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), exe(x))


def test_graph_executable_round_trip_needs_its_functions_registered(tmp_path, mlp_params, env_funcs):
    bound = tunefarm.graph.BindParams("main", mlp_params)(MyModuleMixture)
    exe = tunefarm.compile(bound)
    path = tmp_path / "mixture.tfx"
    exe.save(path)
    x = np.random.default_rng(12).random((1, 784), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    out = _fresh_python(f"""
        import sys, numpy as np
        import tunefarm
        exe = tunefarm.load({str(path)!r})
        x = np.load({str(tmp_path / 'x.npy')!r})
        try:
            exe(x)
        except KeyError as e:
            print('unregistered:', 'env.relu' in str(e))

        @tunefarm.register_func("env.relu")
        def relu(a, out):
            np.maximum(a, 0, out=out)

        @tunefarm.register_func("env.linear")
        def linear(a, w, b, out):
            np.matmul(a, w.T, out=out)
            out += b

        np.save({str(tmp_path / 'y.npy')!r}, exe(x))
        print('ray' in sys.modules, 'xgboost' in sys.modules)
    """)
    assert out.split() == ["unregistered:", "True", "False", "False"]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), numpy_mlp(x, mlp_params), atol=1e-4)


def test_load_rejects_what_is_not_an_executable(tmp_path):
    with pytest.raises(FileNotFoundError):
        tunefarm.load(tmp_path / "missing.tfx")
    junk = tmp_path / "junk.tfx"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ExecutableError, match="not a zip"):
        tunefarm.load(junk)
    empty = tmp_path / "empty.tfx"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(ExecutableError, match="missing meta.json"):
        tunefarm.load(empty)


def test_load_rejects_a_newer_format(tmp_path):
    x = tunefarm.graph.var("x", (2, 2))
    bb = tunefarm.graph.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(tunefarm.graph.ops.relu(x)))
        bb.emit_func_output(gv)
    path = tmp_path / "relu.tfx"
    tunefarm.compile(bb.get()).save(path)
    patched = tmp_path / "patched.tfx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(patched, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "meta.json":
                meta = json.loads(data)
                meta["format_version"] = 99
                data = json.dumps(meta).encode()
            dst.writestr(name, data)
    with pytest.raises(ExecutableError, match="format 99"):
        tunefarm.load(patched)
    np.testing.assert_array_equal(tunefarm.load(path)(np.array([[-1, 2], [3, -4]], np.float32)),
                                  [[0, 2], [3, 0]])


def test_library_only_executable_saves_without_native_code(tmp_path, mlp_params, env_funcs):
    exe = tunefarm.compile(tunefarm.graph.BindParams("main", mlp_params)(MyModuleWithExternCall))
    assert exe.module is None and exe.kind == "graph"
    path = tmp_path / "extern.tfx"
    exe.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["constants.npz", "meta.json"]
    x = np.random.default_rng(13).random((1, 784), dtype=np.float32)
    np.testing.assert_allclose(tunefarm.load(path)(x), numpy_mlp(x, mlp_params), atol=1e-4)
