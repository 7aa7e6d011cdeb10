"""The command line as a whole: what loads when, and the one way a command reports an error."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import tunefarm
from tunefarm import nn
from tunefarm.cli import main

ROOT = Path(__file__).resolve().parents[2]
TUNING_STACK = ("ray", "xgboost", "pandas", "tunefarm.tuning", "tunefarm.search", "tunefarm.schedule",
                "tunefarm.codegen")


def _loaded_after(statements: str) -> dict:
    """Run ``statements`` in a fresh interpreter; the modules of interest it loaded, as the last line of output."""
    code = textwrap.dedent(statements) + textwrap.dedent(f"""
        print(json.dumps({{"heavy": [m for m in {TUNING_STACK!r} if m in sys.modules],
                           "tunefarm": sorted({{m.split(".")[1] for m in sys.modules
                                               if m.startswith("tunefarm.")}})}}))
    """)
    proc = subprocess.run([sys.executable, "-c", "import json, sys\n" + code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_help_lists_every_command_and_loads_no_layer():
    proc = subprocess.run([sys.executable, "-m", "tunefarm.cli", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for command in ("tune", "tune-model", "best", "report", "compile", "run", "bench", "import", "export"):
        assert f"\n    {command}" in proc.stdout, command
    loaded = _loaded_after("""
        import contextlib, io
        from tunefarm.cli import main
        with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
            main(["--help"])
    """)
    assert loaded["heavy"] == [] and set(loaded["tunefarm"]) <= {"cli", "target"}, loaded


def test_python_dash_m_tunefarm_is_the_command(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=60, cwd=ROOT)

    package, cli = run("tunefarm", "--help"), run("tunefarm.cli", "--help")
    assert package.returncode == 0, package.stderr
    assert package.stdout.startswith("usage: tunefarm ") and package.stdout == cli.stdout
    missing = tmp_path / "missing.sqlite"
    proc = run("tunefarm", "best", "--db", str(missing))
    assert proc.returncode == 1 and proc.stderr.startswith("tunefarm best: error: ") and "no tunefarm database" \
        in proc.stderr, proc.stderr
    assert not missing.exists()


def test_run_loads_the_executable_without_the_tuning_stack(tmp_path):
    mod, params = nn.ReLU().export({"forward": {"x": nn.spec.Tensor((2, 3), "float32")}})
    exe_path = tmp_path / "relu.tfx"
    tunefarm.compile(mod, params).save(exe_path)
    a = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    np.save(tmp_path / "a.npy", a)
    loaded = _loaded_after(f"""
        from tunefarm.cli import main
        assert main(["run", {str(exe_path)!r}, "--input", {str(tmp_path / 'a.npy')!r},
                     "--output", {str(tmp_path / 'b.npy')!r}, "--bench"]) == 0
    """)
    assert loaded["heavy"] == [], loaded
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), np.maximum(a, 0))


def test_an_error_of_several_lines_is_reported_on_one(tmp_path, capsys):
    bad = tmp_path / "bad_workload.py"
    bad.write_text(textwrap.dedent("""
        from tunefarm.script import T


        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.bogus()
    """))
    assert main(["tune", f"{bad}:f", "--db", str(tmp_path / "t.sqlite"), "--farm", "local"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tunefarm tune: error: ") and err.count("\n") == 1, err
    assert f"{bad}:7:" in err and "T.bogus()" in err and not (tmp_path / "t.sqlite").exists()
