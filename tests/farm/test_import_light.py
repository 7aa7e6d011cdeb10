"""``import tunefarm.farm`` must not pull in ray (it is imported lazily by RayFarm)."""
from __future__ import annotations

import subprocess
import sys


def test_importing_the_farm_does_not_import_ray():
    code = ("import sys, tunefarm.farm as f; f.MeasureInput; f.LocalFarm; f.RayFarm; "
            "print('ray' in sys.modules, 'llvmlite' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
