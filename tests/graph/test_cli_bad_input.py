"""Bad input to ``tune-model`` / ``compile`` / ``run`` / ``tune`` is a one-line error, found before any farm starts.

The hardening drill got tracebacks from: ``--params`` given a text file or a refused pickle, ``--workers 0``,
``--batch 0`` (which also divided by zero after tuning), a text file or an object array given to ``run``, and a
database in a missing directory (found only after Ray had started).
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from tunefarm.cli import main


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def _one_line_error(capsys, command: str, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"tunefarm {command}: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture
def bad_params(tmp_path):
    (tmp_path / "notes.txt").write_text("these are not weights\n")
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps({"w0": _Evil()}))
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04 not really a zip")
    return {"text": tmp_path / "notes.txt", "evil": tmp_path / "evil.pkl", "npz": tmp_path / "broken.npz"}


def test_tune_model_refuses_bad_arguments_before_starting_a_farm(tmp_path, capsys, bad_params):
    import ray

    db = str(tmp_path / "t.sqlite")
    base = ["tune-model", "mlp", "--trials", "0", "--farm", "ray", "--db", db]
    # input refused before anything started: status 2, as tune's refusals
    assert main(base + ["--workers", "0"]) == 2
    _one_line_error(capsys, "tune-model", "--workers must be at least 1, got 0")
    assert main(base + ["--batch", "1", "--batch", "0"]) == 2
    _one_line_error(capsys, "tune-model", "--batch must be at least 1, got 0")
    assert main(base + ["--trials", "-1"]) == 2
    _one_line_error(capsys, "tune-model", "--trials must be >= 0")
    assert main(base + ["--params", str(bad_params["text"])]) == 2
    _one_line_error(capsys, "tune-model", "cannot read the weights", "not a pickle of numpy arrays")
    assert main(base + ["--params", str(bad_params["evil"])]) == 2
    _one_line_error(capsys, "tune-model", "refusing to load", "system")
    assert main(base + ["--params", str(bad_params["npz"])]) == 2
    _one_line_error(capsys, "tune-model", "not an .npz of numeric arrays")
    assert main(base + ["--params", str(tmp_path / "missing.npz")]) == 2
    _one_line_error(capsys, "tune-model", "missing.npz", "does not exist")
    missing = tmp_path / "no" / "such" / "dir"
    assert main(["tune-model", "mlp", "--trials", "0", "--farm", "ray",
                 "--db", str(missing / "t.sqlite")]) == 1
    _one_line_error(capsys, "tune-model", str(missing / "t.sqlite"), "does not exist")
    assert not ray.is_initialized()  # all refused before Ray was started
    assert not (tmp_path / "t.sqlite").exists()


def test_tune_refuses_a_database_it_cannot_open_before_starting_a_farm(tmp_path, capsys):
    import ray

    path = tmp_path / "missing" / "t.sqlite"
    assert main(["tune", "matmul-16", "--farm", "ray", "--db", str(path)]) == 1
    _one_line_error(capsys, "tune", str(path), "does not exist")
    assert main(["tune", "matmul-16", "--farm", "ray", "--workers", "0", "--db", str(tmp_path / "t.sqlite")]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert not ray.is_initialized()


def test_compile_refuses_unreadable_weights(tmp_path, capsys, bad_params):
    for kind, needle in (("text", "not a pickle of numpy arrays"), ("evil", "refusing to load"),
                         ("npz", "not an .npz")):
        assert main(["compile", "mlp", "--params", str(bad_params[kind]), "-o", str(tmp_path / "a.tfx")]) == 1
        _one_line_error(capsys, "compile", "cannot read the weights", needle)
    assert main(["compile", "convnet", "--params", str(bad_params["text"]), "-o", str(tmp_path / "c.tfx")]) == 1
    _one_line_error(capsys, "compile", "cannot read the weights")
    assert main(["compile", "mlp", "--batch", "0", "-o", str(tmp_path / "a.tfx")]) == 1
    _one_line_error(capsys, "compile", "--batch must be at least 1")
    assert not (tmp_path / "a.tfx").exists()


def test_run_refuses_inputs_that_are_not_numeric_arrays(tmp_path, capsys):
    exe = tmp_path / "m.tfx"
    assert main(["compile", "mlp", "-o", str(exe)]) == 0
    capsys.readouterr()
    (tmp_path / "x.txt").write_text("1 2 3\n")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(tmp_path / "x.npz", x=np.zeros((1, 784), np.float32))
    for name, needle in (("x.txt", "is not a numeric .npy array"), ("obj.npy", "is not a numeric .npy array"),
                         ("x.npz", "is an .npz archive")):
        assert main(["run", str(exe), "--input", str(tmp_path / name)]) == 1
        _one_line_error(capsys, "run", needle)
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((1, 784), dtype=np.float32))
    assert main(["run", str(exe), "--input", str(tmp_path / "x.npy")]) == 0
