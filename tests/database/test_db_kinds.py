"""What the PostgreSQL store promises without a server: tunefarm imports without its client, a URL without the
client is a one-line error that hides the password, and every SQLite migration has a PostgreSQL form."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dbtest_helpers import REPO, repo_env
from tunefarm.database import DatabaseError, create, is_url, pg_schema
from tunefarm.database.schema import CURRENT_VERSION, MIGRATIONS

_NO_CLIENT = """
import sys
sys.modules["psycopg"] = None  # as on a machine without the postgres extra
import tunefarm, tunefarm.database
from tunefarm.database import DatabaseError, open_database
try:
    open_database("postgresql://tuner:hunter2@127.0.0.1:1/study")
except DatabaseError as e:
    print(e)
"""


def test_tunefarm_imports_without_the_client_and_a_url_then_says_what_to_install():
    out = subprocess.run([sys.executable, "-c", "import sys, tunefarm, tunefarm.database, tunefarm.cli; "
                          "print('psycopg' in sys.modules)"], capture_output=True, text=True, cwd=REPO, env=repo_env())
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
    out = subprocess.run([sys.executable, "-c", _NO_CLIENT], capture_output=True, text=True, cwd=REPO, env=repo_env())
    assert out.returncode == 0, out.stderr
    assert 'pip install "tunefarm[postgres]"' in out.stdout and out.stdout.count("\n") == 1
    assert "hunter2" not in out.stdout


def test_what_names_a_server_store():
    assert is_url("postgresql://u@h/db") and is_url("postgres://u@h/db")
    assert not is_url("tune.sqlite") and not is_url("/data/postgresql://x") and not is_url(None)
    with pytest.raises(ValueError, match="unknown database 'mysql'; use one of sqlite, postgresql"):
        create("mysql", "x")


def test_every_migration_has_a_postgresql_form():
    assert [m.version for m in MIGRATIONS] == list(range(1, CURRENT_VERSION + 1))
    for m in MIGRATIONS:
        pg = pg_schema.statements(m.version)
        assert len(pg) >= len(m.statements)
        for stmt in pg:
            assert "WITHOUT ROWID" not in stmt and " REAL" not in stmt
            assert " INTEGER" not in stmt or "RETURNS integer" in stmt or "CAST" in stmt, stmt
    triggers = [s for m in MIGRATIONS for s in m.statements if s.lstrip().startswith("CREATE TRIGGER")]
    assert len(triggers) == 2  # each became a PL/pgSQL function and its trigger
    with pytest.raises(NotImplementedError, match="'later' has no PostgreSQL counterpart"):
        pg_schema.translate("CREATE TRIGGER later AFTER INSERT ON jobs BEGIN SELECT 1; END")


@pytest.mark.postgres  # needs the client (the postgres extra), not a server
def test_a_url_is_required_by_the_server_store_and_errors_hide_the_password():
    with pytest.raises(DatabaseError, match="postgresql://user:password@host:port/dbname URL"):
        create("postgresql", "tune.sqlite")
    with pytest.raises(DatabaseError, match="Connection refused") as err:
        create("postgresql", "postgresql://tuner:hunter2@127.0.0.1:1/study", timeout=2)
    assert "hunter2" not in str(err.value) and "tuner:***@127.0.0.1:1/study" in str(err.value)
