-- Maintenance (see R__maintenance_1_positions.sql): the step list, declared once, and the drivers that run it in
-- the database. The in-app runner (src/maintenance/run.ts) reads the same list with maintenance_steps() and runs
-- each step through the same functions, with its own logging and per-topic report.

-- The steps of a maintenance run, in order. The ledger is seeded before anything is deleted (seeded after a purge
-- it would restart at 1); staged outbox messages whose transaction committed are numbered next (a driver of last
-- resort, R__outbox_numbering.sql); VACUUM runs last, from the app or as a pg_cron job of its own (a procedure cannot).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_steps()
RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    SELECT ARRAY['premake partitions', 'seed sequence ledger', 'number outbox', 'drop expired partitions', 'age retention', 'row cap',
                 'byte cap', 'aggressive retention', 'compaction', 'sweep orphaned leases', 'advance stranded offsets',
                 'sweep delivery attempts', 'expire registrations', 'vacuum']
$fn$;

-- One step of maintenance_steps(), every batch of it: at most p_max_batches batches of p_batch rows per topic and
-- policy (and p_max_batches * 10 lease pages), committing after each when p_commit (pg_cron; a caller's own
-- transaction passes false). A failure (of one topic's policy, one partition) is reported with RAISE WARNING and
-- the step goes on. 'vacuum' does nothing here. No SET clause: it would forbid COMMIT; every name is qualified.
CREATE OR REPLACE PROCEDURE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_run_step(
    p_step text, p_batch int, p_max_batches int, p_expiry_seconds int, p_commit boolean)
LANGUAGE plpgsql
AS $fn$
DECLARE
    policy constant text := CASE p_step WHEN 'age retention' THEN 'age' WHEN 'row cap' THEN 'rowCap'
        WHEN 'byte cap' THEN 'byteCap' WHEN 'aggressive retention' THEN 'aggressive' END;
    r record;
    outcome text;
    n bigint;
    i int;
    st bigint[];
    bud bigint;
    cursor_id bigint := 0;
BEGIN
    IF policy IS NOT NULL THEN
        FOR r IN SELECT t.id, t.topic_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ORDER BY t.id LOOP
            st := NULL; bud := NULL; i := 0;
            LOOP
                BEGIN
                    SELECT b.deleted, b.budget, b.state INTO n, bud, st
                    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_retention_batch(policy, r.id, st, bud, p_batch, p_expiry_seconds) b;
                EXCEPTION WHEN OTHERS THEN
                    RAISE WARNING 'pgQueue maintenance: % of topic % failed: %', p_step, r.topic_name, SQLERRM;
                    n := 0;
                END;
                IF p_commit THEN COMMIT; END IF;
                i := i + 1;
                EXIT WHEN n < p_batch OR i >= p_max_batches;
            END LOOP;
        END LOOP;
    ELSIF p_step = 'compaction' THEN
        -- per log partition of a compacted topic (R__maintenance_6_compaction.sql)
        FOR r IN SELECT c.topic_id, c.topic_name, c.partition_id
                 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_plan() c LOOP
            i := 0;
            LOOP
                BEGIN
                    SELECT b.more INTO outcome
                    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_batch(r.topic_id, r.partition_id, p_batch, p_expiry_seconds) b;
                EXCEPTION WHEN OTHERS THEN
                    RAISE WARNING 'pgQueue maintenance: % of topic % partition % failed: %', p_step, r.topic_name, r.partition_id, SQLERRM;
                    outcome := 'false';
                END;
                IF p_commit THEN COMMIT; END IF;
                i := i + 1;
                EXIT WHEN NOT outcome::boolean OR i >= p_max_batches;
            END LOOP;
        END LOOP;
    ELSIF p_step = 'drop expired partitions' THEN
        FOR r IN SELECT d.partition_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_candidates() d LOOP
            BEGIN
                outcome := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_partition(r.partition_name);
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'pgQueue maintenance: dropping partition % failed: %', r.partition_name, SQLERRM;
                outcome := 'failed';
            END;
            IF p_commit THEN COMMIT; END IF;
            -- each attempt queues the traffic behind it for the lock timeout: one per run
            EXIT WHEN outcome = 'busy';
        END LOOP;
    ELSIF p_step = 'sweep orphaned leases' THEN
        i := 0;
        WHILE cursor_id IS NOT NULL AND i < p_max_batches * 10 LOOP
            BEGIN
                SELECT s.last_id INTO cursor_id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_leases(cursor_id, p_batch) s;
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'pgQueue maintenance: % failed: %', p_step, SQLERRM;
                cursor_id := NULL;
            END;
            IF p_commit THEN COMMIT; END IF;
            i := i + 1;
        END LOOP;
    ELSIF p_step <> 'vacuum' THEN
        BEGIN
            CASE p_step
                WHEN 'premake partitions' THEN PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions();
                WHEN 'seed sequence ledger' THEN PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_seed_ledger();
                WHEN 'number outbox' THEN
                    i := 0;
                    WHILE i < p_max_batches AND __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___number_outbox(100, NULL) = 100 LOOP
                        i := i + 1;
                    END LOOP;
                WHEN 'advance stranded offsets' THEN PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_advance_offsets();
                WHEN 'sweep delivery attempts' THEN
                    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_attempts(p_batch * p_max_batches);
                WHEN 'expire registrations' THEN
                    FOR r IN SELECT * FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_registrations(p_expiry_seconds) LOOP
                        RAISE LOG 'pgQueue maintenance: expired registration of group % on topic % (last heartbeat %)',
                            r.consumer_group, r.topic_name, r.last_heartbeat_at;
                    END LOOP;
                    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_members(p_expiry_seconds);
            END CASE;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgQueue maintenance: % failed: %', p_step, SQLERRM;
        END;
        IF p_commit THEN COMMIT; END IF;
    END IF;
END
$fn$;

-- The whole run for pg_cron (`CALL ...`): every step of maintenance_steps(), committing after every step and
-- batch; skipped when another runner holds the lock.
CREATE OR REPLACE PROCEDURE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___run_maintenance(
    p_expiry_seconds int DEFAULT 604800,
    p_batch int DEFAULT __BATCH_DELETE_LIMIT__,
    p_max_batches int DEFAULT 200)
LANGUAGE plpgsql
AS $fn$
DECLARE
    key constant bigint := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key();
    step text;
BEGIN
    IF NOT pg_catalog.pg_try_advisory_lock(key) THEN
        RAISE NOTICE 'pgQueue maintenance skipped: another runner holds the lock';
        RETURN;
    END IF;
    FOREACH step IN ARRAY __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_steps() LOOP
        CALL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_run_step(step, p_batch, p_max_batches, p_expiry_seconds, true);
    END LOOP;
    PERFORM pg_catalog.pg_advisory_unlock(key);
END
$fn$;

-- DataHub's entry point (`SELECT <schema>.<prefix>_apply_retention()`, called by its Java store and Python
-- `apply_topic_retention` in a transaction of their own), with DataHub's signature and policies, run by the same
-- steps in DataHub's order: no registration expiry (as in DataHub), at most 50 batches of __BATCH_DELETE_LIMIT__
-- rows per topic and policy, and expired partitions last, so the lock a drop takes is held only until the caller
-- commits. Skipped (NOTICE) while another maintenance runner works.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___apply_retention()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    step text;
BEGIN
    IF NOT pg_try_advisory_xact_lock(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key()) THEN
        RAISE NOTICE 'pgQueue retention skipped: another maintenance runner holds the lock';
        RETURN;
    END IF;
    FOREACH step IN ARRAY ARRAY['premake partitions', 'seed sequence ledger', 'age retention', 'row cap', 'byte cap',
                                'aggressive retention', 'compaction', 'sweep orphaned leases',
                                'advance stranded offsets', 'drop expired partitions'] LOOP
        CALL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_run_step(step, __BATCH_DELETE_LIMIT__, 50, 0, false);
    END LOOP;
END
$fn$;
