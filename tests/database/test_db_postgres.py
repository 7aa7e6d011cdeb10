"""The PostgreSQL store against a real server: migrations under a race, a dropped connection and a Ctrl-C
mid-step, the server restarting under a tuning job, the password kept secret, a read-only role, moving a study
both ways.
(Nothing here imports psycopg at module level: the default run collects this file without the extra.)"""
from __future__ import annotations

import json
import multiprocessing as mp
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from dbtest_helpers import REPO, TARGET_A, make_record, raw_sql, repo_env, store_name
from tunefarm.cli import main
from tunefarm.database import SCHEMA_VERSION, DatabaseError, create, open_database
from tunefarm.graph.params import COURSE_NPZ, course_mlp_params
from tunefarm.testing.postgres_server import PASSWORD, PostgresServer

pytestmark = pytest.mark.postgres

TUNE = [sys.executable, "-m", "tunefarm.cli", "tune", "matmul-64", "--target", "llvm -num-cores=1", "--farm",
        "local", "--workers", "1", "--trials-per-round", "8", "--seed", "5"]


def _open(url: str, barrier, queue) -> None:
    barrier.wait(timeout=60)
    try:
        db = create("postgresql", url)
        queue.put(db.count_records())
    except BaseException as e:  # surfaced by the parent
        queue.put(repr(e))


def test_drivers_opening_a_fresh_database_at_once_create_its_schema_once(pg_server):
    url = pg_server.new_database("race")
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_open, args=(url, barrier, queue)) for _ in range(4)]
    for p in procs:
        p.start()
    got = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
    assert got == [0, 0, 0, 0]
    assert raw_sql(url, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert raw_sql(url, "SELECT count(*) FROM meta") == [(1,)]


def _waiting_step(url: str) -> int | None:
    """The backend pid of a driver's step blocked on a lock (within 30 s), or None."""
    for _ in range(600):
        rows = raw_sql(url, "SELECT pid FROM pg_stat_activity WHERE application_name = 'tunefarm' AND "
                            "wait_event_type = 'Lock'")
        if rows:
            return rows[0][0]
        time.sleep(0.05)
    return None


def _kill_the_step_while_it_waits(url: str, locker, seen: list) -> None:
    """Wait until the driver's step blocks on the locked claims table (its records inserted, uncommitted), see
    that nothing of it is stored, kill its connection, then let the claims table go."""
    pid = _waiting_step(url)
    if pid is not None:
        seen.append(raw_sql(url, "SELECT count(*) FROM records")[0][0])
        raw_sql(url, "SELECT pg_terminate_backend(?)", (pid,))
        seen.append(pid)
    locker.rollback()


def test_a_connection_dropped_mid_step_leaves_nothing_half_written(pg_server):
    import threading

    import psycopg

    url = pg_server.new_database("drop")
    db = create("postgresql", url)
    db.commit_workload("k", "w", "{}", 1.0)
    job = db.start_job("j")
    pid = db._conn().raw.info.backend_pid
    locker = psycopg.connect(url)  # the step's records retire their claims: it waits for this lock mid-way
    locker.execute("LOCK TABLE claims IN ACCESS EXCLUSIVE MODE")
    seen: list = []
    killer = threading.Thread(target=_kill_the_step_while_it_waits, args=(url, locker, seen))
    killer.start()
    granted = db.commit_and_claim([make_record("k", i, job=job) for i in range(3)], job, [("k", TARGET_A, ["x"], 9)])
    killer.join(60)
    locker.close()
    assert seen == [0, pid]  # killed mid-step, with nothing of the step stored
    assert granted == [["x"]] and db._conn().raw.info.backend_pid != pid  # run again on a new connection
    assert raw_sql(url, "SELECT count(*) FROM records") == [(3,)]  # once: the first try left nothing
    assert raw_sql(url, "SELECT count(*), sum(n_records) FROM batches") == [(1, 3)]
    assert db.budget_used("k", TARGET_A) == 4


def _interrupt_the_step_while_it_waits(url: str, seen: list) -> None:
    """As a user's Ctrl-C: SIGINT to the main thread while its step waits."""
    import signal
    import threading

    pid = _waiting_step(url)
    if pid is not None:
        seen.append(pid)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def test_ctrl_c_in_a_waiting_step_stores_nothing_and_the_store_goes_on(pg_server):
    import threading

    import psycopg

    url = pg_server.new_database("interrupt")
    db = create("postgresql", url)
    db.commit_workload("k", "w", "{}", 1.0)
    job = db.start_job("j")
    locker = psycopg.connect(url)
    locker.execute("LOCK TABLE claims IN ACCESS EXCLUSIVE MODE")
    seen: list = []
    helper = threading.Thread(target=_interrupt_the_step_while_it_waits, args=(url, seen))
    helper.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            db.commit_and_claim([make_record("k", i, job=job) for i in range(3)], job,
                                [("k", TARGET_A, ["x"], 9)])
    finally:
        helper.join(60)
        locker.close()
    assert len(seen) == 1
    for _ in range(600):  # the closed session ends once it reads past the lock it waited for
        if not raw_sql(url, "SELECT 1 FROM pg_stat_activity WHERE pid = ?", (seen[0],)):
            break
        time.sleep(0.05)
    assert raw_sql(url, "SELECT 1 FROM pg_stat_activity WHERE pid = ?", (seen[0],)) == []
    assert raw_sql(url, "SELECT count(*) FROM records") == [(0,)]  # the interrupted step was rolled back
    granted = db.commit_and_claim([make_record("k", i, job=job) for i in range(3)], job, [("k", TARGET_A, ["x"], 9)])
    assert granted == [["x"]] and db._conn().raw.info.backend_pid != seen[0]  # on a new connection
    assert raw_sql(url, "SELECT count(*), sum(n_records) FROM batches") == [(1, 3)]


def test_a_tuning_job_goes_through_a_20_s_server_restart(tmp_path):
    with PostgresServer() as server:
        url = server.url()
        create("postgresql", url).close()
        proc = subprocess.Popen([*TUNE, "--trials", "48", "--db", url], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=repo_env(), cwd=REPO)
        try:
            deadline = time.monotonic() + 300
            while raw_sql(url, "SELECT count(*) FROM records")[0][0] < 8:  # it has measured and committed
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
            before = raw_sql(url, "SELECT uid FROM records")
            server.restart_after(20).join()
            out = proc.communicate(timeout=600)[0]
        finally:
            proc.kill()
        assert PASSWORD not in out
        if proc.returncode != 0:  # documented: a connection lost during COMMIT stops the job with one line
            assert "while committing" in out and "resume the job" in out, out
            rerun = subprocess.run([*TUNE, "--trials", "48", "--db", url, "--resume"], capture_output=True,
                                   text=True, env=repo_env(), cwd=REPO, timeout=600)
            assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        else:
            assert "lost the connection" in out and "reconnecting" in out, out  # it did live through it
        after = raw_sql(url, "SELECT uid, program_hash FROM records")
        assert {u for (u,) in before} <= {u for u, _ in after}  # nothing committed was lost
        assert len(after) == 48 == len({h for _, h in after})  # the budget exactly, nothing measured twice


def test_the_password_appears_nowhere(pg_server, tmp_path):
    url = pg_server.new_database("secret")
    run = subprocess.run([*TUNE, "--trials", "8", "--db", url], capture_output=True, text=True, env=repo_env(),
                         cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "tuner:***@" in run.stdout and PASSWORD not in run.stdout + run.stderr
    db = open_database(url)
    assert PASSWORD not in repr(db) + db.path + str(db.jobs().to_dict()) + str(db.records().to_dict())
    assert main(["report", "--db", url, "-o", str(tmp_path / "r.html")]) == 0
    assert main(["export", "--db", url, "-o", str(tmp_path / "e.jsonl")]) == 0
    assert PASSWORD not in (tmp_path / "r.html").read_text() + (tmp_path / "e.jsonl").read_text()
    bare = url.replace(f":{PASSWORD}@", "@")  # the README's way: the password in PGPASSWORD, not in the URL
    best = subprocess.run([sys.executable, "-m", "tunefarm.cli", "best", "--db", bare], capture_output=True,
                          text=True, env=dict(repo_env(), PGPASSWORD=PASSWORD), cwd=REPO, timeout=300)
    assert best.returncode == 0 and "matmul" in best.stdout and PASSWORD not in best.stdout + best.stderr
    wrong = url.replace(PASSWORD, "x" + PASSWORD)  # refused by the server
    closed = url.replace(f"tuner:{PASSWORD}@", "tuner@").replace(str(pg_server.port), "1") + "?password=" + PASSWORD
    for bad, why in ((wrong, "password authentication failed"), (closed, "Connection refused")):
        with pytest.raises(DatabaseError, match=why) as err:
            create("postgresql", bad)
        assert PASSWORD not in str(err.value) and "\n" not in str(err.value) and "***" in str(err.value)


def test_a_read_only_role_reads_compiles_and_is_refused_writes(pg_server, tmp_path, capsys):
    import tunefarm
    from tunefarm import nn
    from tunefarm.farm import LocalFarm
    from tunefarm.nn.models import mlp

    url = pg_server.new_database("team")
    params = course_mlp_params()
    mod, weights = mlp(params).export({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    with LocalFarm(num_workers=1) as farm:
        tunefarm.tune_model(mod, weights, max_trials=4, database=url, farm=farm, seed=1)
        target = str(farm.target)
    pg_server.grant_reader(url.rsplit("/", 1)[1])
    reader = url.replace("tuner:", "reader:")
    db = open_database(reader)
    assert len(db.records()) == 4 and len(db.workloads()) >= 1 and len(db.jobs()) == 1
    key = db.records()["workload_key"][0]
    assert db.best(key).status.value == db.top_k(key, 1)[0].status.value
    for cmd in (["best", "--db", reader], ["report", "--db", reader, "-o", str(tmp_path / "r.html")],
                ["export", "--db", reader, "-o", str(tmp_path / "e.jsonl")],
                ["compile", "mlp", "--params", str(COURSE_NPZ), "--db", reader, "--batch", "1", "--target", target,
                 "-o", str(tmp_path / "m.tfx")]):
        assert main(cmd) == 0, capsys.readouterr().err
    tuned = re.search(r"(\d) tuned", capsys.readouterr().out)
    assert tuned and int(tuned.group(1)) >= 1  # compiled from what the reader read
    exe = tunefarm.load(str(tmp_path / "m.tfx"))
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    np.testing.assert_allclose(exe(x), np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T
                               + params["b1"], atol=1e-4)
    for write in (lambda: db.start_job("j"), lambda: db.commit_workload("k", "w", "{}", 1.0)):
        with pytest.raises(DatabaseError, match="may not do that") as err:
            write()
        assert "\n" not in str(err.value) and PASSWORD not in str(err.value)
    assert main(["import", str(tmp_path / "e.jsonl"), "--db", reader]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "may not do that" in err
    with pytest.raises(DatabaseError, match="read-only"):
        open_database(url, readonly=True).start_job("j")


@pytest.mark.parametrize("kind", ["postgresql"])
def test_a_study_moves_between_the_kinds_both_ways(real_study, pg_server, tmp_path):
    db, _ = real_study
    assert main(["export", "--db", store_name(db), "-o", str(tmp_path / "pg.jsonl")]) == 0
    assert main(["import", str(tmp_path / "pg.jsonl"), "--db", str(tmp_path / "s.sqlite")]) == 0
    assert main(["export", "--db", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "s.jsonl")]) == 0
    back = pg_server.new_database("back")
    assert main(["import", str(tmp_path / "s.jsonl"), "--db", back]) == 0
    lines = [(tmp_path / n).read_text().splitlines()[1:] for n in ("pg.jsonl", "s.jsonl")]
    assert lines[0] == lines[1] and len(lines[0]) > 80  # the same rows, in the same order
    assert json.loads(lines[0][-1])["type"] == "record"
    a, b = db.records(), open_database(back).records()
    cols = [c for c in a.columns if c not in ("record_id", "job_status")]
    assert a[cols].equals(b[cols]) and list(a.dtypes) == list(b.dtypes)


def test_a_version_7_study_draws_its_record_ids_on_after_the_identitys_last_and_only_with_an_xid(pg_server,
                                                                                                 monkeypatch):
    """Migration 8 swaps the records' identity column for a default that takes the transaction's xid before it
    draws the id (pg_schema._RECORD_IDS): the ids go on past every id the identity gave, a rolled-back one too."""
    from tunefarm.database import pg_schema
    from tunefarm.database.schema import MIGRATIONS

    url = pg_server.new_database("v7")
    with monkeypatch.context() as m:  # a study made by the code before migration 8
        m.setattr(pg_schema, "MIGRATIONS", MIGRATIONS[:7])
        m.setattr(pg_schema, "CURRENT_VERSION", 7)
        with open_database(url) as db:
            db.commit_workload("wk-a", "a", "{}", 1.0)
            db.commit_records([make_record("wk-a", i) for i in range(5)])
    assert raw_sql(url, "SELECT value FROM meta WHERE key = 'schema_version'") == [("7",)]
    assert raw_sql(url, "SELECT is_identity FROM information_schema.columns WHERE table_name = 'records' "
                        "AND column_name = 'id'") == [("YES",)]
    import psycopg
    with psycopg.connect(url) as conn:  # an insert the identity numbers, rolled back: its id is never used again
        cols = ", ".join(r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'records' "
            "AND column_name NOT IN ('id', 'uid') ORDER BY ordinal_position"))
        conn.execute(f"INSERT INTO records (uid, {cols}) SELECT 'gone', {cols} FROM records LIMIT 1")
        conn.rollback()
    old_ids = [r[0] for r in raw_sql(url, "SELECT id FROM records ORDER BY id")]
    with open_database(url) as db:
        db.commit_records([make_record("wk-a", i) for i in range(5, 8)])
        assert db.count_records() == 8
    new_ids = [r[0] for r in raw_sql(url, "SELECT id FROM records ORDER BY id")][5:]
    assert old_ids == [1, 2, 3, 4, 5] and new_ids == [7, 8, 9]  # 6 was the rolled-back insert's
    assert raw_sql(url, "SELECT is_identity, column_default FROM information_schema.columns WHERE "
                        "table_name = 'records' AND column_name = 'id'") == [("NO", "tunefarm_record_id()")]
    with psycopg.connect(url) as conn:  # a transaction that has written nothing holds an xid once it draws an id
        conn.execute("SELECT 1")
        assert conn.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()[0] is None
        conn.execute("SELECT tunefarm_record_id()")
        assert conn.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()[0] is not None
        conn.rollback()
