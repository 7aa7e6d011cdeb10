"""Fixtures of the search tests: small workloads and one LocalFarm per module (worker start-up is slow)."""
from __future__ import annotations

import pytest

from local_farm_fixtures import farm, target  # noqa: F401 - fixtures, found by name
from tunefarm.search.workloads import builtin_workload


@pytest.fixture(scope="session")
def mm128():
    return builtin_workload("matmul-128")


@pytest.fixture(scope="session")
def mm64():
    return builtin_workload("matmul-64")
