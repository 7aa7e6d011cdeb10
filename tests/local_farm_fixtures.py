"""The one-core target and the module-wide LocalFarm (worker start-up is slow) that the search and tuning-job
tests share; their conftests import both fixtures from here."""
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
