"""Databases in places that cannot be written: a missing directory, a read-only directory or filesystem.

A WAL database needs its ``-shm`` file even to be read, so on a read-only filesystem the commands that only
read (best, report, export) open it read-only (immutable when no write-ahead log is pending); the commands
that write say, in one line naming the file, why they cannot. As root the read-only place is a real read-only
bind mount (``unshare -m``: a private mount namespace); otherwise the directory's write bits are cleared.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dbtest_helpers import populate_real, repo_env
from tunefarm.database import Database, DatabaseError


def run_on_readonly_dir(folder, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``args`` while ``folder`` cannot be written (see the module docstring)."""
    kw = {"capture_output": True, "text": True, "timeout": 300, "env": repo_env()}
    if os.geteuid() == 0:
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *args], **kw)
    modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
    for p, mode in modes.items():
        p.chmod(mode & ~0o222)
    try:
        return subprocess.run(args, **kw)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


@pytest.fixture
def readonly_study(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = Database(folder / "study.sqlite")
    populate_real(db)
    best = db.best(db.workloads()["key"][0], target=db.targets()[0])
    db.close()  # the last connection checkpoints the log and removes -wal and -shm
    assert sorted(os.listdir(folder)) == ["study.sqlite"]
    return folder, best


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tunefarm.cli", *args]


def test_reading_commands_work_on_a_readonly_filesystem(readonly_study, tmp_path):
    folder, best = readonly_study
    path = str(folder / "study.sqlite")
    out = run_on_readonly_dir(folder, _cli("best", "--db", path, "--format", "json"))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 3 and best.record_id in {r["record_id"] for r in rows}
    out = run_on_readonly_dir(folder, _cli("report", "--db", path, "-o", str(tmp_path / "r.html")))
    assert out.returncode == 0, out.stderr
    assert "80 records" in out.stdout and (tmp_path / "r.html").stat().st_size > 0
    out = run_on_readonly_dir(folder, _cli("export", "--db", path, "-o", str(tmp_path / "e.jsonl")))
    assert out.returncode == 0, out.stderr
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 1 + 2 + 2 + 11 + 80
    assert sorted(os.listdir(folder)) == ["study.sqlite"]  # nothing was written beside it


def test_writing_commands_say_why_in_one_line(readonly_study, tmp_path):
    folder, _ = readonly_study
    for args in (_cli("import", str(tmp_path / "e.jsonl"), "--db", str(folder / "study.sqlite")),
                 _cli("tune", "matmul-16", "--farm", "ray", "--db", str(folder / "new.sqlite"))):
        (tmp_path / "e.jsonl").write_text('{"type":"tunefarm-db-export","version":1}\n')
        out = run_on_readonly_dir(folder, args)
        assert out.returncode == 1, out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
        assert str(folder) in out.stderr and "read-only" in out.stderr, out.stderr
        assert "Ray" not in out.stderr  # refused before a farm was started


def test_a_missing_directory_is_named(tmp_path):
    path = tmp_path / "nowhere" / "t.sqlite"
    with pytest.raises(DatabaseError, match="directory .*nowhere' does not exist") as info:
        Database(path)
    assert str(path) in str(info.value)
    with pytest.raises(DatabaseError, match="no tunefarm database"):
        Database(path, readonly=True)


def test_a_readonly_database_never_writes(readonly_study):
    folder, best = readonly_study
    db = Database(folder / "study.sqlite", readonly=True)
    assert db.best(best.workload_key, target=best.target).record_id == best.record_id
    with pytest.raises(DatabaseError, match="readonly"):
        db.start_job("nope")
    db.close()
    writer = Database(folder / "study.sqlite")
    assert writer.count_records() == 80 and len(writer.jobs()) == 2


def test_an_old_file_opened_readonly_is_upgraded_where_it_can_be(tmp_path):
    from test_db_migration import write_v1_file

    write_v1_file(tmp_path / "old.sqlite")
    db = Database(tmp_path / "old.sqlite", readonly=True)
    assert db.count_records() == 3 and db.jobs()["status"].tolist() == ["finished"]
