"""Shared test configuration: make the repository importable and keep Ray/BLAS from grabbing the machine."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

# Tests share a 2-core machine with the code they measure: one BLAS thread, no Ray usage reports.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# the store fixtures (one PostgreSQL server per session) serve tests/database and tests/dashboard alike
pytest_plugins = ["store_fixtures"]
