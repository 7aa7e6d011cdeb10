"""A driver's step on the PostgreSQL store in one statement: the server function ``tunefarm_step``.

The shared SQL of a step (store the records that arrived, claim the next picks: ``SqlDatabase._store_rows`` and
``claims.claim``) is a dozen statements, and psycopg costs the driver some 50 us of CPU per statement, the
database's own work being the server's. So the PostgreSQL store runs the same step as one call of this
PL/pgSQL function (created by a migration), inside the write transaction that holds the write lock: the
driver builds one JSON text of the rows and reads one JSON answer.

The function decides as ``claims.claim`` and ``liveness.job_state`` do, with one exception: whether a process
on the calling host is alive only the caller can tell. Such a job (same ``pid_space``, another pid) is
counted alive and returned in ``check``; the caller looks at its pid before committing and, when it is gone,
rolls back and runs the step again with that job in ``dead`` (see ``PostgresDatabase._step``). Records are
inserted by column name (``jsonb_populate_recordset``), so a column added to ``RECORD_COLUMNS`` by a
migration (and written by ``prepare_row``, after the columns the store sets) needs no change here.
"""
from __future__ import annotations

import json

from tunefarm.database.errors import InvalidRecordError, JobNotRunningError, UnknownJobError, UnknownWorkloadError
from tunefarm.database.schema import RECORD_COLUMNS

# the function's own SQLSTATEs: a record's unknown workload or job, a claim's job unknown or not running
UNKNOWN_WORKLOAD, UNKNOWN_JOB, NOT_RUNNING, UNKNOWN_CLAIMER = "TF001", "TF002", "TF003", "TF004"

_FUNCTION = """CREATE FUNCTION tunefarm_step(p_rows json, p_cols json, p_asks json, p_job bigint, p_now bigint,
    p_space text, p_pid bigint, p_pid_start bigint, p_stale_us bigint, p_dead bigint[], p_batch_uid text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
    v_wids jsonb := '{}';
    v_tids jsonb := '{}';
    v_counts jsonb := '{}';
    v_out jsonb := '[]';
    v_granted jsonb := '[]';
    v_check jsonb := '[]';
    v_batch bigint;
    v_bjob bigint;
    v_key text;
    v_id bigint;
    v_n bigint;
    v_r json;
    v_w bigint;
    v_t bigint;
    v_ck text;
    v_cols text;
    v_a json;
    v_budget bigint;
    v_room bigint;
    v_live bigint;
    v_deadjobs bigint[];
    v_owned jsonb;
    v_h text;
    v_holder bigint;
    v_alive boolean;
    v_job record;
    v_c record;
BEGIN
    PERFORM pg_advisory_xact_lock({lock});  -- the store's write lock: writers take turns
    IF json_array_length(p_rows) > 0 THEN
        FOR v_key IN SELECT DISTINCT r->>1 FROM json_array_elements(p_rows) r LOOP
            SELECT id INTO v_id FROM workloads WHERE key = v_key;
            IF v_id IS NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'TF001', MESSAGE = v_key;
            END IF;
            v_wids := v_wids || jsonb_build_object(v_key, v_id);
        END LOOP;
        FOR v_key IN SELECT DISTINCT r->>2 FROM json_array_elements(p_rows) r LOOP
            INSERT INTO targets (target) VALUES (v_key) ON CONFLICT DO NOTHING;
            SELECT id INTO v_id FROM targets WHERE target = v_key;
            v_tids := v_tids || jsonb_build_object(v_key, v_id);
        END LOOP;
        -- a commit is a sign of life; a job that does not exist refuses the batch
        FOR v_id IN SELECT DISTINCT (r->>3)::bigint FROM json_array_elements(p_rows) r WHERE r->>3 IS NOT NULL
        LOOP
            UPDATE jobs SET heartbeat_us = CASE WHEN status = 'running' THEN p_now ELSE heartbeat_us END
                WHERE id = v_id;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'TF002', MESSAGE = v_id::text;
            END IF;
        END LOOP;
        SELECT CASE WHEN count(DISTINCT coalesce(r->>3, '')) = 1 THEN max((r->>3)::bigint) END INTO v_bjob
            FROM json_array_elements(p_rows) r;
        INSERT INTO batches (uid, job_id, n_records, created_us)
            VALUES (p_batch_uid, v_bjob, json_array_length(p_rows), p_now) RETURNING id INTO v_batch;
        -- trial numbers in commit order: a missing one takes the count of records so far (record_counts)
        FOR v_r IN SELECT r FROM json_array_elements(p_rows) WITH ORDINALITY AS x(r, i) ORDER BY i LOOP
            v_w := (v_wids->>(v_r->>1))::bigint;
            v_t := (v_tids->>(v_r->>2))::bigint;
            v_ck := v_w || ':' || v_t;
            IF NOT v_counts ? v_ck THEN
                SELECT n INTO v_n FROM record_counts WHERE workload_id = v_w AND target_id = v_t;
                v_counts := v_counts || jsonb_build_object(v_ck, coalesce(v_n, 0));
            END IF;
            v_n := (v_counts->>v_ck)::bigint;
            v_out := v_out || jsonb_build_array(jsonb_build_object('uid', v_r->0, 'workload_id', v_w,
                'target_id', v_t, 'job_id', v_r->3, 'batch_id', v_batch, 'trial', coalesce((v_r->>4)::bigint, v_n))
                || (SELECT jsonb_object_agg(c, v) FROM json_array_elements_text(p_cols) WITH ORDINALITY AS a(c, i)
                    JOIN json_array_elements(v_r) WITH ORDINALITY AS b(v, k) ON k = i + 5));
            v_counts := v_counts || jsonb_build_object(v_ck, v_n + 1);
        END LOOP;
        SELECT string_agg(quote_ident(k), ', ') INTO v_cols FROM jsonb_object_keys(v_out->0) k;
        EXECUTE format('INSERT INTO records (%s) SELECT %s FROM jsonb_populate_recordset(NULL::records, $1)',
                       v_cols, v_cols) USING v_out;
    END IF;
    FOR v_a IN SELECT a FROM json_array_elements(p_asks) WITH ORDINALITY AS x(a, i) ORDER BY i LOOP
        v_w := (v_a->>0)::bigint;
        v_key := v_a->>1;
        v_budget := (v_a->>3)::bigint;
        SELECT id INTO v_t FROM targets WHERE target = v_key;
        IF v_t IS NULL THEN
            INSERT INTO targets (target) VALUES (v_key) ON CONFLICT DO NOTHING;
            SELECT id INTO v_t FROM targets WHERE target = v_key;
        END IF;
        -- the claiming job: alive, and heartbeating (a stale job that claims is alive again)
        UPDATE jobs SET heartbeat_us = p_now WHERE id = p_job RETURNING status, pid, pid_space, pid_start INTO v_job;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'TF004', MESSAGE = p_job::text;
        END IF;
        IF v_job.status <> 'running' THEN
            RAISE EXCEPTION USING ERRCODE = 'TF003', MESSAGE = v_job.status;
        END IF;
        IF v_job.pid IS NOT NULL AND v_job.pid_space = p_space THEN
            IF v_job.pid = p_pid THEN
                IF v_job.pid_start IS NOT NULL AND v_job.pid_start IS DISTINCT FROM p_pid_start THEN
                    RAISE EXCEPTION USING ERRCODE = 'TF003', MESSAGE = 'killed';
                END IF;
            ELSIF p_job = ANY(p_dead) THEN
                RAISE EXCEPTION USING ERRCODE = 'TF003', MESSAGE = 'killed';
            ELSE
                v_check := v_check || jsonb_build_array(jsonb_build_array(p_job, v_job.pid, v_job.pid_start));
            END IF;
        END IF;
        -- live claims on this workload and target; dead jobs' claims are taken over
        v_live := 0;
        v_deadjobs := '{}';
        FOR v_c IN SELECT cl.job_id, count(*) AS n, jb.status, jb.pid, jb.pid_space, jb.pid_start,
                        coalesce(jb.heartbeat_us, jb.started_us) AS last_us
                 FROM claims cl JOIN jobs jb ON jb.id = cl.job_id WHERE cl.workload_id = v_w AND cl.target_id = v_t
                 GROUP BY cl.job_id, jb.status, jb.pid, jb.pid_space, jb.pid_start, jb.heartbeat_us, jb.started_us
        LOOP
            v_alive := v_c.status = 'running' AND p_now - v_c.last_us <= p_stale_us;
            IF v_alive AND v_c.pid IS NOT NULL AND v_c.pid_space = p_space THEN
                IF v_c.pid = p_pid THEN
                    v_alive := v_c.pid_start IS NULL OR v_c.pid_start IS NOT DISTINCT FROM p_pid_start;
                ELSIF v_c.job_id = ANY(p_dead) THEN
                    v_alive := false;
                ELSE
                    v_check := v_check || jsonb_build_array(jsonb_build_array(v_c.job_id, v_c.pid, v_c.pid_start));
                END IF;
            END IF;
            IF v_alive THEN
                v_live := v_live + v_c.n;
            ELSE
                v_deadjobs := v_deadjobs || v_c.job_id;
            END IF;
        END LOOP;
        IF cardinality(v_deadjobs) > 0 THEN
            DELETE FROM claims WHERE job_id = ANY(v_deadjobs) AND workload_id = v_w AND target_id = v_t;
        END IF;
        IF v_budget IS NOT NULL THEN
            SELECT coalesce(max(n), 0) INTO v_n FROM record_counts WHERE workload_id = v_w AND target_id = v_t;
            v_room := v_budget - v_n - v_live;
        ELSE
            v_room := NULL;
        END IF;
        v_owned := '[]';
        FOR v_h IN SELECT h FROM json_array_elements_text(v_a->2) WITH ORDINALITY AS x(h, i) ORDER BY i LOOP
            SELECT job_id INTO v_holder FROM claims WHERE workload_id = v_w AND target_id = v_t AND program_hash = v_h;
            IF FOUND THEN
                IF v_holder = p_job THEN
                    v_owned := v_owned || to_jsonb(v_h);
                END IF;
                CONTINUE;
            END IF;
            IF (v_room IS NOT NULL AND v_room <= 0) OR EXISTS (SELECT 1 FROM records WHERE workload_id = v_w
                    AND target_id = v_t AND program_hash = v_h) THEN
                CONTINUE;
            END IF;
            INSERT INTO claims (workload_id, target_id, program_hash, job_id, created_us)
                VALUES (v_w, v_t, v_h, p_job, p_now);
            v_owned := v_owned || to_jsonb(v_h);
            v_room := v_room - 1;
        END LOOP;
        v_granted := v_granted || jsonb_build_array(v_owned);
    END LOOP;
    RETURN json_build_object('batch', v_batch, 'granted', v_granted, 'check', v_check);
END $$"""


def function_sql(write_lock: int) -> str:
    """The function's CREATE statement; it takes the store's write lock (``pg_schema.WRITE_LOCK``) first."""
    return _FUNCTION.replace("{lock}", str(int(write_lock)))


CALL = (b"SELECT tunefarm_step($1::json, $2::json, $3::json, $4::bigint, $5::bigint, $6::text, $7::bigint, "
        b"$8::bigint, $9::bigint, $10::bigint[], $11::text)")
# the record columns after (uid, workload_id, target_id, job_id, batch_id, trial), as ``prepare_row`` orders them
TAIL_COLUMNS = RECORD_COLUMNS[6:]
_COLS = json.dumps(TAIL_COLUMNS)


def rows_json(rows: list[tuple], uids: list[str]) -> str:
    """The JSON the function reads for prepared rows (``prepare_row``): ``[uid, workload key, target, job id,
    trial, *values of TAIL_COLUMNS]`` each (positional: cheaper to write than objects)."""
    try:
        return json.dumps([[uid, *r] for r, uid in zip(rows, uids)], separators=(",", ":"), allow_nan=False)
    except ValueError as e:
        raise InvalidRecordError(f"a record holds a number PostgreSQL's JSON cannot carry: {e}") from None


def call(conn, rows: str, asks: str, job_id: int | None, now: int, process: tuple, stale_us: int, dead: list[int],
         batch_uid: str, path: str) -> dict:
    """One call of the function on ``conn`` (in the caller's write transaction); its errors in tunefarm's words.
    ``process`` is the caller's ``(pid, pid_space, pid_start)``."""
    import psycopg  # here: pg_schema (which the default tests read) imports this module without the extra

    pid, space, start = process
    try:
        return conn.call_json(CALL, (rows, _COLS, asks, job_id, now, space, pid, start, stale_us, "{" + ",".join(
            str(d) for d in dead) + "}", batch_uid))
    except psycopg.Error as e:
        said = e.diag.message_primary if e.diag else None
        if e.sqlstate == UNKNOWN_WORKLOAD:
            raise UnknownWorkloadError(f"workload key {said!r} is not in {path!r}; call commit_workload first") \
                from None
        if e.sqlstate == UNKNOWN_JOB:
            raise UnknownJobError(f"no job with id {int(said)!r} in {path!r}; call start_job first") from None
        if e.sqlstate == UNKNOWN_CLAIMER:
            raise UnknownJobError(f"no job with id {job_id!r} in {path!r}") from None
        if e.sqlstate == NOT_RUNNING:
            raise JobNotRunningError(f"job {job_id} is {said!r}, not running: it cannot claim programs") from None
        raise
