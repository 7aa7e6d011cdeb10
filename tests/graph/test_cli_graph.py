"""``tunefarm tune-model`` / ``compile`` / ``run``."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from tunefarm.cli import main

from graph_helpers import MLP_PARAMS, ROOT, numpy_mlp


def test_compile_then_run_in_a_fresh_process(tmp_path, capsys, mlp_params):
    exe_path = tmp_path / "mlp.tfx"
    assert main(["compile", "mlp", "--params", str(MLP_PARAMS), "-o", str(exe_path), "--batch", "2"]) == 0
    assert "native executable, 2 kernels (0 tuned, 2 default schedule)" in capsys.readouterr().out
    x = np.random.default_rng(0).random((2, 784), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = subprocess.run([sys.executable, "-m", "tunefarm.cli", "run", str(exe_path), "--input",
                           str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"), "--bench"],
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "latency per call" in proc.stdout and "argmax" in proc.stdout
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), numpy_mlp(x, mlp_params), atol=1e-4)


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.tfx")]) == 1
    assert "no executable file" in capsys.readouterr().err
    assert main(["compile", "mlp", "--params", str(tmp_path / "nope.pkl"), "-o", str(tmp_path / "a.tfx")]) == 1
    assert "does not exist" in capsys.readouterr().err
    exe_path = tmp_path / "m.tfx"
    assert main(["compile", "mlp", "--params", str(MLP_PARAMS), "-o", str(exe_path)]) == 0
    np.save(tmp_path / "bad.npy", np.zeros((1, 5), np.float32))
    capsys.readouterr()
    assert main(["run", str(exe_path), "--input", str(tmp_path / "bad.npy")]) == 1
    assert "must have shape (1, 784), got (1, 5)" in capsys.readouterr().err


def test_tune_model_main_job_on_a_local_farm(tmp_path, capsys):
    db = tmp_path / "tune.sqlite"
    code = main(["tune-model", "mlp", "--trials", "4", "--db", str(db), "--farm", "local", "--workers", "2",
                 "--batch", "1", "--save-dir", str(tmp_path / "exe")])
    out = capsys.readouterr().out
    assert code == 0
    assert "weights: the course's FashionMNIST weights (fasionmnist_mlp_params.npz, shipped with tunefarm, " \
           "sha256 verified)" in out
    assert "identical argmax (tuned and untuned)" in out
    assert "== kernels ==" in out and "fused_matmul_add_relu_1x128" in out
    assert (tmp_path / "exe" / "mlp_b1.tfx").exists() and db.exists()


def test_tune_model_with_a_users_weights_says_whose(tmp_path, capsys, mlp_params):
    own = tmp_path / "own.npz"
    np.savez(own, **{k: v * 0.5 for k, v in mlp_params.items()})
    code = main(["tune-model", "mlp", "--params", str(own), "--trials", "0", "--db", str(tmp_path / "t.sqlite"),
                 "--farm", "local", "--workers", "1", "--batch", "4"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"weights: {own} (not the course weights)" in out and "identical argmax" in out
