"""Fixtures of the dashboard tests: real SQLite studies and a real server on 127.0.0.1."""
from __future__ import annotations

import pytest
from dashtest_helpers import add_hostile

from tunefarm.dashboard import DashboardServer
from tunefarm.database import Database
from tunefarm.testing.synthetic_study import build_study


@pytest.fixture
def study_path(tmp_path):
    path = tmp_path / "study.sqlite"
    with Database(path) as db:
        info = build_study(db, 400, n_workloads=3, n_jobs=2)
        add_hostile(db)
    return path, info


@pytest.fixture
def server(study_path):
    with DashboardServer(str(study_path[0]), port=0).start() as s:
        yield s
