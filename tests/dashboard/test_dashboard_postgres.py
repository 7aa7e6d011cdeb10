"""The dashboard over a PostgreSQL study, what only a server store has: ids that commit out of order, roles that
may only read, passwords that must not show. Against a real server the session starts (``postgres`` marker)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from dashtest_helpers import build_layers, check_union, get, get_json, records_of

from tunefarm.cli import main as cli_main
from tunefarm.dashboard import DashboardServer
from tunefarm.dashboard.queries import StudyQueries
from tunefarm.dashboard.study import Study
from tunefarm.database import open_database
from tunefarm.database.errors import DatabaseError
from tunefarm.testing.postgres_server import PASSWORD

pytestmark = [pytest.mark.postgres, pytest.mark.parametrize("kind", ["postgresql"])]


def _connect(url: str, **kw):
    """psycopg comes with the postgres extra; only the postgres run, which installs it, reaches these tests' bodies."""
    import psycopg
    return psycopg.connect(url, **kw)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a copy of record %(src)s under a new uid, inserted WITHOUT the store's write lock: concurrent transactions draw
# ids from the sequence and commit in any order, as writers that do not take turns would
COPY = ("INSERT INTO records ({cols}, uid) SELECT {cols}, %s FROM records WHERE id = %s RETURNING id")


def _copy_sql(conn) -> str:
    cols = [r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = "
                                       "'records' AND column_name NOT IN ('id', 'uid') ORDER BY ordinal_position")]
    return COPY.format(cols=", ".join(cols))


def _truth(url: str) -> dict:
    """What the study holds now, counted by the store: records per workload and status, per host, per job."""
    with open_database(url, readonly=True) as db:
        df = db.records()
    return {"n": len(df), "tasks": {(w, s): int(n) for (w, s), n in df.groupby(["workload", "status"]).size().items()},
            "hosts": {h: int(n) for h, n in df.groupby("host").size().items()},
            "jobs": {int(j): int(n) for j, n in df.dropna(subset=["job_id"]).groupby("job_id").size().items()}}


def _shown(snap: dict) -> dict:
    return {"n": snap["n_records"],
            "tasks": {(t["workload"], s): n for t in snap["tasks"] for s, n in t["statuses"].items() if n},
            "hosts": {h["host"]: h["n"] for h in snap["hosts"]},
            "jobs": {j["id"]: j["n"] for j in snap["jobs"] if j["n"]}}


def test_a_smaller_id_that_commits_later_is_counted_once_and_a_rolled_back_one_never(study_path):
    url = str(study_path[0])
    study = Study(StudyQueries.open(url))
    assert study.refresh() == 412
    late, gone, early = (_connect(url) for _ in range(3))  # transactions, not autocommit
    copy = _copy_sql(late)
    wids = [conn.execute("INSERT INTO workloads (key, name, ir_json, flop, created_us) VALUES (%s, %s, '{}', 1e6, 0) "
                         "RETURNING id", (f"k-{name}", f"late_{name}")).fetchone()[0]
            for conn, name in ((late, "smaller"), (early, "larger"))]
    late_id = late.execute(copy, ("late", 1)).fetchone()[0]
    gone_id = gone.execute(copy, ("gone", 2)).fetchone()[0]
    early_id = early.execute(copy, ("early", 3)).fetchone()[0]
    for conn, wid, rid in ((late, wids[0], late_id), (early, wids[1], early_id)):
        conn.execute("UPDATE records SET workload_id = %s WHERE id = %s", (wid, rid))
    early.commit()
    assert late_id < gone_id < early_id and wids[0] < wids[1]
    assert study.refresh() == 1 and study.last_id == early_id  # the larger ids are visible first
    assert _shown(study.snapshot()) == _truth(url)
    gone.rollback()
    late.commit()  # the smaller ids appear after the larger ones were read
    assert study.refresh() == 1
    assert _shown(study.snapshot()) == _truth(url)
    assert {"late_smaller", "late_larger"} <= {t["workload"] for t in study.snapshot()["tasks"]}
    assert study.refresh() == 0 and study.q.holes == []  # the rolled-back id is no longer looked for
    assert study.q.final == early_id
    for conn in (late, gone, early):
        conn.close()
    study.q.close()


def test_an_insert_that_stalls_between_drawing_its_id_and_writing_its_row_is_counted(study_path):
    """A row's id is drawn (its default) before the row is written, and the server gives a transaction its xid
    only when it writes. An insert stalled in between holds an id below a visible one while it has no xid yet,
    so a snapshot's xmax does not cover it: the store draws the xid first, and the stalled row is still read."""
    url = str(study_path[0])
    study = Study(StudyQueries.open(url))
    assert study.refresh() == 412
    stalled, quick = _connect(url, autocommit=True), _connect(url, autocommit=True)
    # a row-level trigger runs once the row is formed (its id drawn) and before it is written (the xid taken)
    stalled.execute("""CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.uid = 'stalled' THEN PERFORM pg_sleep(2); END IF; RETURN NEW; END $$""")
    stalled.execute("CREATE TRIGGER stall BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION stall()")
    slow = _copy_sql(stalled)
    out = {}
    t = threading.Thread(target=lambda: out.update(id=stalled.execute(slow, ("stalled", 1)).fetchone()[0]))
    t.start()
    time.sleep(0.5)  # the stalled insert has drawn its id
    quick_id = quick.execute(_copy_sql(quick), ("quick", 2)).fetchone()[0]
    while t.is_alive():  # the quick one's larger id is read, and refreshes go on while the other stalls
        study.refresh()
        time.sleep(0.05)
    t.join()
    assert out["id"] < quick_id
    study.refresh()
    assert _shown(study.snapshot()) == _truth(url) and study.snapshot()["n_records"] == 414
    for conn in (stalled, quick):
        conn.close()
    study.q.close()


WRITER = """
import random, sys, time
import psycopg
url, seed, copy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)
with psycopg.connect(url) as conn:
    for i in range(40):
        conn.execute(copy, (f"w{seed}-{i}", rng.randint(1, 412)))
        time.sleep(rng.random() * 0.03)  # others draw and commit ids meanwhile
        conn.rollback() if i % 7 == 3 else conn.commit()
"""


def test_refreshes_beside_writers_that_commit_out_of_order_count_every_record_once(study_path):
    url = str(study_path[0])
    with _connect(url) as conn:
        copy = _copy_sql(conn)
    study = Study(StudyQueries.open(url))
    study.refresh()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, url, str(seed), copy], cwd=REPO)
               for seed in range(3)]
    refreshes = 0
    while any(w.poll() is None for w in writers):
        study.refresh()
        refreshes += 1
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    study.refresh()
    truth = _truth(url)
    assert truth["n"] == 412 + 3 * 34  # 6 of each writer's 40 transactions rolled back
    assert _shown(study.snapshot()) == truth and refreshes > 3
    study.q.close()


def test_a_select_only_role_serves_the_page_and_no_password_shows(study_path, pg_server, capsys):
    url = str(study_path[0])
    dbname = url.rsplit("/", 1)[1]
    pg_server.grant_reader(dbname)
    reader = url.replace("tuner:", "reader:")
    with DashboardServer(reader, port=0).start() as server:
        assert server.service.name == reader.replace(PASSWORD, "***")
        s = get_json(server.url + "api/summary")
        assert _shown(s) == _truth(url)
        t = s["tasks"][0]
        d = get_json(server.url + f"api/task?workload={t['workload_id']}&target={t['target_id']}&k=3")
        assert len(d["top"]) == 3
        with _connect(url, autocommit=True) as owner:
            owner.execute("REVOKE SELECT ON records FROM reader")
        status, _, body = get(server.url + "api/summary")  # a failing read answers one line, no password
        assert status == 503 and b"may not do that" in body and PASSWORD.encode() not in body
        assert b"***@" in body
        for path in ("", "static/app.js", "api/summary"):
            assert PASSWORD.encode() not in get(server.url + path)[2]
    with pytest.raises(DatabaseError) as err:
        DashboardServer(reader.replace(PASSWORD, "wrong-" + PASSWORD), port=0)
    assert PASSWORD not in str(err.value) and "\n" not in str(err.value)
    empty = pg_server.new_database("empty_one")
    assert cli_main(["dashboard", "--db", empty, "--port", "0"]) == 1
    out, err_text = capsys.readouterr()
    assert "no tunefarm study" in err_text and err_text.count("\n") == 1
    assert PASSWORD not in out + err_text and "***" in err_text



def test_a_refresh_that_fails_half_way_counts_nothing_twice_and_a_restart_is_survived(study_path, pg_server):
    url = str(study_path[0])
    pg_server.grant_reader(url.rsplit("/", 1)[1])
    study = Study(StudyQueries.open(url.replace("tuner:", "reader:")))
    study.refresh()
    with _connect(url, autocommit=True) as owner:
        cols = [r[0] for r in owner.execute("SELECT column_name FROM information_schema.columns WHERE "
                                            "table_name = 'records' AND column_name <> 'error'")]
        # the reader may read every column but the error text: a refresh folds its counts, then fails on errors
        owner.execute(f"REVOKE SELECT ON records FROM reader; GRANT SELECT ({', '.join(cols)}) ON records TO reader")
        with _connect(url) as writer:
            writer.execute(_copy_sql(writer), ("more", 5))
        with pytest.raises(DatabaseError, match="may not do that") as err:
            study.refresh()
        assert PASSWORD not in str(err.value)
        owner.execute("GRANT SELECT ON records TO reader")
    assert study.refresh() == 413 and _shown(study.snapshot()) == _truth(url)
    pg_server.restart_after(1.0).join()  # the dashboard's connection is dropped under it
    with open_database(url) as db:
        db.start_job("after the restart")
    assert study.refresh() == 0 and len(study.snapshot()["jobs"]) == 3  # it reconnected
    assert _shown(study.snapshot()) == _truth(url)
    study.q.close()


def test_an_sqlite_file_and_a_postgresql_study_show_as_one(new_store, pg_server, tmp_path):
    """``--db mine.sqlite --db postgresql://...``: the union as ``LayeredDatabase`` reads it; the server study
    read by a role that may only SELECT, which stops being allowed for a while: that study is named in one line
    without its password, the file still shows, and both show again once it may read."""
    local, url = str(tmp_path / "mine.sqlite"), str(new_store("team"))
    build_layers(local, url)
    pg_server.grant_reader(url.rsplit("/", 1)[1])
    reader = url.replace("tuner:", "reader:")
    with DashboardServer([local, reader], port=0).start() as server:
        def detail(t):
            return get_json(server.url + f"api/task?workload={t['workload_id']}&target={t['target_id']}&k=10")
        check_union(get_json(server.url + "api/summary"), detail, [local, reader])
        with _connect(url, autocommit=True) as owner:
            owner.execute("REVOKE SELECT ON records FROM reader")
            status, _, body = get(server.url + "api/summary")
            assert status == 200 and PASSWORD.encode() not in body
            snap = json.loads(body)
            (err,) = snap["errors"]
            assert reader.replace(PASSWORD, "***") in err and "may not do that" in err and "\n" not in err
            assert snap["n_records"] == len(records_of([local])) and snap["tasks"]
            owner.execute("GRANT SELECT ON records TO reader")
        check_union(get_json(server.url + "api/summary"), detail, [local, reader])
    wrong = reader.replace(PASSWORD, "wrong-" + PASSWORD)
    with DashboardServer([local, wrong], port=0).start() as server:
        status, _, body = get(server.url + "api/summary")
        (err,) = json.loads(body)["errors"]
        assert status == 200 and PASSWORD.encode() not in body and "***@" in err and "\n" not in err
