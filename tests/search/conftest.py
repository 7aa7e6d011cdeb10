"""Fixtures of the search tests: small workloads and one LocalFarm per module (worker start-up is slow)."""
from __future__ import annotations

import pytest

from tunefarm.search.workloads import builtin_workload


@pytest.fixture(scope="session")
def target():
    from tunefarm.target import Target

    return Target("llvm -num-cores=1")


@pytest.fixture(scope="module")
def farm(target):
    from tunefarm.farm import LocalFarm

    with LocalFarm(num_workers=2, target=target) as f:
        yield f


@pytest.fixture(scope="session")
def mm128():
    return builtin_workload("matmul-128")


@pytest.fixture(scope="session")
def mm64():
    return builtin_workload("matmul-64")
