"""Fixtures of the farm tests: a private local Ray for the module that needs one, a measuring-lock file per module."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray for this test module (never attaches to a cluster someone else started)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def lock_path(tmp_path_factory):
    """A measuring-lock file of this test module's own (farms that share it measure one at a time)."""
    return str(tmp_path_factory.mktemp("lock") / "measure.lock")
