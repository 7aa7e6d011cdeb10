"""Fixtures of the dashboard tests: real studies (SQLite files, and under the ``postgres`` marker databases on a
real PostgreSQL server the session starts) and a real dashboard server on 127.0.0.1."""
from __future__ import annotations

import itertools

import pytest
from dashtest_helpers import add_hostile

from tunefarm.dashboard import DashboardServer
from tunefarm.database import open_database
from tunefarm.testing.synthetic_study import build_study

_NUMBERS = itertools.count()


@pytest.fixture
def new_store(kind, tmp_path, request):
    """``new_store(name)``: the name (a path, or a URL with the password) of a new empty store of this kind."""
    if kind == "sqlite":
        return lambda name="study": tmp_path / f"{name}.sqlite"
    server = request.getfixturevalue("pg_server")
    return lambda name="study": server.new_database(f"d{next(_NUMBERS)}_{name}")


@pytest.fixture
def study_path(new_store):
    """A study of 412 records (a path or a URL) and what ``build_study`` made."""
    name = new_store("study")
    with open_database(str(name)) as db:
        info = build_study(db, 400, n_workloads=3, n_jobs=2)
        add_hostile(db)
    return name, info


@pytest.fixture
def server(study_path):
    with DashboardServer(str(study_path[0]), port=0).start() as s:
        yield s
