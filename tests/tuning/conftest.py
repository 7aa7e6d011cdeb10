"""Fixtures of the tuning-job tests: one LocalFarm per module (worker start-up is slow) on a one-core target."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def target():
    from tunefarm.target import Target

    return Target("llvm -num-cores=1")


@pytest.fixture(scope="module")
def farm(target):
    from tunefarm.farm import LocalFarm

    with LocalFarm(num_workers=2, target=target) as f:
        yield f
