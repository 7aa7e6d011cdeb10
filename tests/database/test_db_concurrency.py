"""Several processes writing one database at the same time (SQLite: WAL + busy timeout + retries; PostgreSQL)."""
from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading
import time

import pytest

from dbtest_helpers import make_record, raw_sql, spawn_writer
from tunefarm.database import Database, DatabaseLockedError

N_BATCHES, BATCH = 40, 32


def test_two_processes_commit_concurrently(db, kind):
    # db is handed to the children by pickling (its path or URL)
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=spawn_writer, args=(db, tag, N_BATCHES, BATCH, barrier, queue)) for tag in "AB"]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for tag in "AB":
        assert isinstance(results[tag], list), results[tag]  # a string is the child's exception
        assert len(results[tag]) == N_BATCHES
    # both finished with all their records, each batch complete
    for tag in "AB":
        assert db.count_records("wk-" + tag) == N_BATCHES * BATCH
        assert len(db.measured_hashes("wk-" + tag, db.targets("wk-" + tag)[0])) == N_BATCHES * BATCH
    if kind == "sqlite":
        assert raw_sql(db, "PRAGMA integrity_check") == [("ok",)]
    sizes = raw_sql(db, "SELECT b.n_records, count(r.id) FROM batches b JOIN records r ON r.batch_id = b.id "
                        "GROUP BY b.id")
    assert len(sizes) == 2 * N_BATCHES and all(n == c == BATCH for n, c in sizes)
    # the writes really overlapped: batch ids of A and B interleave
    owner = {i: tag for tag in "AB" for i in results[tag]}
    order = [owner[i] for i in sorted(owner)]
    switches = sum(a != b for a, b in zip(order, order[1:]))
    assert switches >= 2, order


def _hold_write_lock(path, seconds: float) -> threading.Thread:
    """Another writer (a raw connection) holding the write lock for a while."""
    locked = threading.Event()

    def hold():
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO meta (key, value) VALUES ('holder', 'x')")
        locked.set()
        time.sleep(seconds)
        other.execute("ROLLBACK")
        other.close()

    t = threading.Thread(target=hold)
    t.start()
    assert locked.wait(10)
    return t


def test_writer_waits_for_the_lock(tmp_path):
    path = tmp_path / "busy.sqlite"
    db = Database(path, timeout=20)
    db.commit_workload("k", "w", "{}", 1.0)
    holder = _hold_write_lock(path, 0.5)
    t0 = time.monotonic()
    db.commit_records([make_record("k", i) for i in range(10)])  # blocks until the holder lets go
    waited = time.monotonic() - t0
    holder.join()
    assert waited >= 0.3 and db.count_records() == 10


def test_lock_timeout_is_a_clear_error(tmp_path):
    path = tmp_path / "busy.sqlite"
    db = Database(path, timeout=0.3)
    db.commit_workload("k", "w", "{}", 1.0)
    holder = _hold_write_lock(path, 1.2)
    try:
        with pytest.raises(DatabaseLockedError, match="locked"):
            db.commit_records([make_record("k", 0)])
    finally:
        holder.join()
    assert db.count_records() == 0
    db.commit_records([make_record("k", 0)])  # and it works once the lock is free
    assert db.count_records() == 1
