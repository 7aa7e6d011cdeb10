"""A second thread's connection must not cost the first its file locks.

Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included. If opening a
connection read the file's header through a descriptor it then closed, a writer in another process that closed
last would take the lock a live connection counts on, checkpoint and delete the WAL under it, and that connection
would go on reading a stale study without an error.
"""
from __future__ import annotations

import multiprocessing as mp
import threading

from dbtest_helpers import make_record
from tunefarm.database import Database


def _write_and_close(path: str, key: str, start: int, n: int) -> None:
    db = Database(path)
    db.commit_workload(key, "workload_" + key, "{}", 1e6)
    db.commit_records([make_record(key, i) for i in range(start, start + n)])
    db.close()


def test_a_thread_opening_a_connection_keeps_the_study_fresh_for_the_others(tmp_path):
    path = str(tmp_path / "study.sqlite")
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=_write_and_close, args=(path, "wk", 0, 3))
    p.start(); p.join(60)
    assert p.exitcode == 0
    db = Database(path)
    assert db.count_records("wk") == 3  # the main thread's connection is open
    t = threading.Thread(target=lambda: db.count_records("wk"))  # a second thread opens its own connection
    t.start(); t.join()
    for round_ in range(3):  # other processes write and close, the last one closing the file
        p = ctx.Process(target=_write_and_close, args=(path, "wk", 3 + 5 * round_, 5))
        p.start(); p.join(60)
        assert p.exitcode == 0
        assert db.count_records("wk") == 3 + 5 * (round_ + 1)
        assert len(db.records()) == 3 + 5 * (round_ + 1)
    db.close()
