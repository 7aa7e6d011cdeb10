"""Databases in places that cannot be written: a missing directory, a read-only directory or filesystem.

A WAL database needs its ``-shm`` file even to be read, so on a read-only filesystem the commands that only
read (best, report, export) open it read-only (immutable when no write-ahead log is pending); the commands
that write say, in one line naming the file, why they cannot. Where mounts are allowed the read-only place is a
real read-only bind mount (``unshare -m``: a private mount namespace); otherwise the directory's write bits are
cleared (see ``run_on_readonly_dir``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbtest_helpers import populate_real, repo_env
from tunefarm.database import Database, DatabaseError


def _can_mount() -> bool:
    return os.geteuid() == 0 and subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def _as_nobody() -> None:
    os.setgid(65534)
    os.setuid(65534)


def _can_mount() -> bool:
    return os.geteuid() == 0 and subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def run_on_readonly_dir(folder: Path, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``args`` while ``folder`` cannot be written: a read-only bind mount (EROFS) in a private mount
    namespace where that is allowed; else the folder's write bits cleared, or for root (which ignores them)
    the folder made immutable (``chattr +i``)."""
    kw = {"capture_output": True, "text": True, "timeout": 300, "env": repo_env()}
    if _can_mount():
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *args], **kw)
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.fail(f"cannot make {folder} read-only for root here (no mount namespace; chattr: {made.stderr})")
        try:
            return subprocess.run(args, **kw)
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    mode = folder.stat().st_mode
    folder.chmod(mode & ~0o222)
    try:
        return subprocess.run(args, **kw)
    finally:
        folder.chmod(mode)


@pytest.fixture
def readonly_study(tmp_path):
    folder, outdir = tmp_path / "ro", tmp_path / "out"
    folder.mkdir()
    outdir.mkdir()
    db = Database(folder / "study.sqlite")
    populate_real(db)
    best = db.best(db.workloads()["key"][0], target=db.targets()[0])
    db.close()  # the last connection checkpoints the log and removes -wal and -shm
    assert sorted(os.listdir(folder)) == ["study.sqlite"]
    return folder, outdir, best


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tunefarm.cli", *args]


def test_reading_commands_work_on_a_readonly_filesystem(readonly_study):
    folder, outdir, best = readonly_study
    path = str(folder / "study.sqlite")
    out = run_on_readonly_dir(folder, _cli("best", "--db", path, "--format", "json"))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 3 and best.record_id in {r["record_id"] for r in rows}
    out = run_on_readonly_dir(folder, _cli("report", "--db", path, "-o", str(outdir / "r.html")))
    assert out.returncode == 0, out.stderr
    assert "80 records" in out.stdout and (outdir / "r.html").stat().st_size > 0
    out = run_on_readonly_dir(folder, _cli("export", "--db", path, "-o", str(outdir / "e.jsonl")))
    assert out.returncode == 0, out.stderr
    assert len((outdir / "e.jsonl").read_text().splitlines()) == 1 + 2 + 2 + 11 + 80
    assert sorted(os.listdir(folder)) == ["study.sqlite"]  # nothing was written beside it


def test_writing_commands_say_why_in_one_line(readonly_study):
    folder, outdir, _ = readonly_study
    (outdir / "e.jsonl").write_text('{"type":"tunefarm-db-export","version":1}\n')
    for args in (_cli("import", str(outdir / "e.jsonl"), "--db", str(folder / "study.sqlite")),
                 _cli("tune", "matmul-16", "--farm", "ray", "--db", str(folder / "new.sqlite"))):
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
    folder, _, best = readonly_study
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
