"""Fixtures of the tuning-job tests: one LocalFarm per module on a one-core target (``local_farm_fixtures``)."""
from __future__ import annotations

from local_farm_fixtures import farm, target  # noqa: F401 - fixtures, found by name
