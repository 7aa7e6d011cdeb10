"""Fixtures of the database tests: fresh and populated databases, and a real headless Chromium."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from dbtest_helpers import populate, populate_real
from tunefarm.database import Database

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def db(tmp_path):
    d = Database(tmp_path / "tune.sqlite")
    yield d
    d.close()


@pytest.fixture
def study(tmp_path):
    """A populated database and what populate() created."""
    d = Database(tmp_path / "study.sqlite")
    info = populate(d)
    yield d, info
    d.close()


@pytest.fixture
def real_study(tmp_path):
    """A populated database of real programs (what an import accepts) and what populate_real() created."""
    d = Database(tmp_path / "real.sqlite")
    info = populate_real(d)
    yield d, info
    d.close()


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of a Chromium binary; installs Debian's package if missing. Never skips: no browser = failure."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} is missing and the tests are not root, so they cannot apt-get install chromium")
    if shutil.which("apt-get") is None:
        pytest.fail(f"{CHROMIUM} is missing and apt-get is not available to install it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0:
            pytest.fail(f"installing Chromium failed: {' '.join(cmd)} exited {proc.returncode}\n"
                        f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"apt-get install chromium succeeded but {CHROMIUM} does not exist")
    return CHROMIUM
