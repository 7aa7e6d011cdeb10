"""A bare clone works: the README's two Quick-start commands pass in a copy of the repository's tracked files,
with nothing beside it (no sibling folders, no network, no cache), run by this test's Python (the commands'
``python3 -m venv ... && pip install ...`` part is what gave this Python its packages)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[list[str]]:
    """The Python part (after the last ``&&``) of each bash block of the README's "Quick start" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [shlex.split(block.strip().rsplit("&&", 1)[1]) for block in blocks]


def test_the_quick_start_has_the_main_job_and_the_tests():
    commands = quick_start_commands()
    assert [c[:2] for c in commands] == [[".venv/bin/tunefarm", "tune-model"], [".venv/bin/python", "-m"]]
    assert commands[0][2] == "mlp" and "--trials" in commands[0] and commands[1][2:4] == ["pytest", "-q"]


def _bare_copy(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.mark.slow
def test_the_readme_quick_start_passes_in_a_bare_copy(tmp_path):
    clone = _bare_copy(tmp_path / "tunefarm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tunefarm"]  # nothing beside the copy
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "TUNEFARM_MLP_PARAMS"}
    (tmp_path / "home").mkdir()  # an empty home: no cache of weights or anything else to find
    env.update(RAY_USAGE_STATS_ENABLED="0", HOME=str(tmp_path / "home"))
    main_job, tests = quick_start_commands()

    def run(argv: list[str], timeout: int) -> str:
        proc = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"{argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc.stdout

    where = run([sys.executable, "-c", "import tunefarm; print(tunefarm.__file__)"], 60)
    assert where.strip() == str(clone / "tunefarm" / "__init__.py")  # the copy's code, not this checkout's
    trials = main_job.index("--trials") + 1
    main_job = main_job[:trials] + ["4"] + main_job[trials + 1:]
    out = run([sys.executable, "-m", "tunefarm.cli"] + main_job[1:], 900)
    assert "weights: the course's FashionMNIST weights" in out and "sha256 verified" in out
    assert out.count("identical argmax (tuned and untuned)") == 2
    assert "== latency per call through Python" in out and (clone / "tune.sqlite").exists()
    out = run([sys.executable] + tests[1:] + ["-p", "no:cacheprovider", "tests/graph/test_params.py",
                                              "tests/script/test_script_course.py"], 600)
    assert re.search(r"\d+ passed", out) and "failed" not in out and "error" not in out
