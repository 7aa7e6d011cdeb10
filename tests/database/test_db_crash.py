"""A writer killed with SIGKILL mid-commit leaves an intact file holding only complete batches."""
from __future__ import annotations

import os
import random
import signal
import sqlite3
import struct
import subprocess
import sys
import time

from dbtest_helpers import REPO, TARGET_A, make_record, repo_env
from tunefarm.database import Database

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dbtest_helpers.py")
BATCH = 100
PAD = 40_000  # ~4 MB per batch: more than SQLite's page cache, so pages reach the WAL before the commit does


def uncommitted_wal_tail(path: str) -> bool:
    """True if the WAL ends with frames of a transaction that never committed (the kill hit mid-commit)."""
    wal = path + "-wal"
    if not os.path.exists(wal) or os.path.getsize(wal) < 32:
        return False
    with open(wal, "rb") as f:
        data = f.read()
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    pos, last_commit = 32, None
    while pos + 24 + page_size <= len(data) and data[pos + 8:pos + 16] == salts:
        last_commit = struct.unpack(">I", data[pos + 4:pos + 8])[0]
        pos += 24 + page_size
    return last_commit == 0


def _kill_mid_commit(path: str, tag: str, rng: random.Random) -> tuple[list[int], bool]:
    """Start a writer, SIGKILL it at a random moment of a batch; returns (ids it reported, killed mid-commit)."""
    proc = subprocess.Popen([sys.executable, HELPER, "writer", path, tag, "1000", str(BATCH), str(PAD)], cwd=REPO,
                            env=repo_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported, stamps = [], []
    try:
        while len(reported) < 2:
            line = proc.stdout.readline()
            assert line, f"writer died early: {proc.stderr.read()}"
            reported.append(int(line.split()[1]))
            stamps.append(time.monotonic())
        time.sleep(rng.uniform(0.0, stamps[1] - stamps[0]))  # anywhere in the next batch's cycle
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    reported += [int(line.split()[1]) for line in proc.stdout.read().splitlines() if line.startswith("committed")]
    proc.stdout.close()
    proc.stderr.close()
    return reported, uncommitted_wal_tail(path)


def test_sigkill_leaves_only_complete_batches(tmp_path):
    path = str(tmp_path / "crash.sqlite")
    rng = random.Random(1234)
    expected: set[int] = set()
    mid_commit = 0
    for round_ in range(20):  # kill at random moments until some kills landed inside a commit (~1 in 3 do)
        reported, torn = _kill_mid_commit(path, f"t{round_}", rng)
        mid_commit += torn
        expected |= set(reported)
        raw = sqlite3.connect(path)  # recovery happens here: the torn transaction must vanish
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        batches = dict(raw.execute("SELECT id, n_records FROM batches").fetchall())
        counts = dict(raw.execute("SELECT batch_id, count(*) FROM records GROUP BY batch_id").fetchall())
        raw.close()
        assert None not in counts  # no record outside a batch
        assert counts == {b: BATCH for b in batches}  # every stored batch is complete
        assert set(batches.values()) == {BATCH}
        assert expected <= set(batches)  # everything reported as committed survived
        assert len(set(batches) - expected) <= 1  # plus at most the one batch in flight
        expected = set(batches)
        if mid_commit >= 2 and round_ >= 2:
            break
    assert mid_commit >= 1, "no kill landed inside a transaction: the test did not test anything"
    # the file stays usable for the next writer
    db = Database(path)
    db.commit_workload("wk-after", "after", "{}", 1.0)
    db.commit_records([make_record("wk-after", i) for i in range(5)])
    assert db.count_records("wk-after", target=TARGET_A) == 5
    assert db.count_records() == BATCH * len(expected) + 5
