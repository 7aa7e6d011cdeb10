"""``tunefarm.tune`` is both a module and the tuning function: either import order leaves it callable."""
from __future__ import annotations

import subprocess
import sys
import textwrap


def test_tune_stays_callable_after_importing_the_module_of_the_same_name():
    code = textwrap.dedent("""
        from tunefarm.tune import tune_tasks  # binds the module tunefarm.tune on the package first
        import tunefarm
        from tunefarm.search.workloads import builtin_workload
        try:
            tunefarm.tune(builtin_workload("matmul-128"), max_trials=-1)
        except ValueError as e:  # reached the function's own argument check
            print("ValueError:", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ValueError: max_trials must be an integer >= 0" in out.stdout
