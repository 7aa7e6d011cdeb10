"""What the first read of a study costs, checked by SQLite's query plans rather than by a clock: every statement
of a whole read reaches the records through an index (the narrow ones of schema migration 6, read in their
order), none scans the wide rows, and only the failed records' error texts are sorted."""
from __future__ import annotations

import pytest

from tunefarm.dashboard.queries import StudyQueries
from tunefarm.dashboard.study import Study


@pytest.mark.parametrize("kind", ["sqlite"])  # the plans are SQLite's (the benchmark times PostgreSQL)
def test_a_whole_read_reads_indexes_in_their_order(study_path):
    q = StudyQueries.open(str(study_path[0]))
    statements, run = [], q._rows

    def recording(sql, params=()):
        statements.append((sql, tuple(params)))
        return run(sql, params)

    q._rows = recording
    study = Study(q)
    assert study.refresh() == 412
    q._rows = run
    selects = [(s, p) for s, p in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert len(selects) >= 10
    walked = set()
    for sql, params in selects:
        plan = [row[3] for row in q.conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
        on_records = [line for line in plan if line.startswith(("SCAN records", "SEARCH records"))]
        assert not [line for line in on_records if line.startswith("SCAN records") and "INDEX" not in line], (
            sql, plan)  # no statement reads the records' rows one by one
        walked |= {line.split("INDEX ")[1].split()[0] for line in on_records if "INDEX " in line}
        if any("TEMP B-TREE" in line for line in plan):
            assert "substr(error" in sql and "status <> 'ok'" in sql, (sql, plan)  # the failed records only
    assert {"records_job_task", "records_task_order", "records_host_status", "records_host_build",
            "records_failed", "records_job_time"} <= walked
    q.close()
