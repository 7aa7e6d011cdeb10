"""Fixtures every store-backed test shares: the kind of store (SQLite in the default run, PostgreSQL under the
``postgres`` marker) and one private PostgreSQL server for the whole session, whichever folders use it."""
from __future__ import annotations

import pytest

from tunefarm.testing.postgres_server import PostgresServer


@pytest.fixture(scope="session")
def pg_server():
    """A private PostgreSQL server for the session. Never skips: a server that cannot start is a failure."""
    server = PostgresServer()
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - any reason the server could not run fails the tests that need it
        server.stop()
        pytest.fail(f"could not start a PostgreSQL server for the postgres tests: {e}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def kind(request) -> str:
    return request.param
