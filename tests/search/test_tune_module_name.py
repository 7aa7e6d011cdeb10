"""``tunefarm.tune`` is the tuning function itself: no module shares its name, so no import order changes it."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap


def test_tune_is_the_function_whatever_was_imported_first():
    assert importlib.util.find_spec("tunefarm.tune") is None
    code = textwrap.dedent("""
        from tunefarm.tuning import tune_tasks  # the tuning package first
        import tunefarm
        from tunefarm.search.workloads import builtin_workload
        assert tunefarm.tune.__module__ == "tunefarm.tuning.api", tunefarm.tune
        try:
            tunefarm.tune(builtin_workload("matmul-128"), max_trials=-1)
        except ValueError as e:  # reached the function's own argument check
            print("ValueError:", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ValueError: max_trials must be an integer >= 0" in out.stdout
