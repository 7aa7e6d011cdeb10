"""Fixtures of the database tests: fresh and populated databases of every kind, and a real headless Chromium.

The contract tests take their database through ``kind`` / ``new_store``: each runs on SQLite in the default run
and on a real PostgreSQL server (started once per session by ``pg_server``) under the ``postgres`` marker.
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess

import pytest

from dbtest_helpers import populate, populate_real
from tunefarm.database import open_database

CHROMIUM = "/usr/bin/chromium"


_NUMBERS = itertools.count()


@pytest.fixture
def new_store(kind, tmp_path, request):
    """``new_store(name)``: the name (a path, or a URL) of a new empty store of this kind."""
    if kind == "sqlite":
        return lambda name="tune": str(tmp_path / f"{name}.sqlite")
    server = request.getfixturevalue("pg_server")
    return lambda name="tune": server.new_database(f"t{next(_NUMBERS)}_{name}")


@pytest.fixture
def db(new_store):
    d = open_database(new_store("tune"))
    yield d
    d.close()


@pytest.fixture
def study(new_store):
    """A populated database and what populate() created."""
    d = open_database(new_store("study"))
    info = populate(d)
    yield d, info
    d.close()


@pytest.fixture
def real_study(new_store):
    """A populated database of real programs (what an import accepts) and what populate_real() created."""
    d = open_database(new_store("real"))
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
