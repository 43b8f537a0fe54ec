-- Maintenance and retention (docs/retention.md). Each function is ONE bounded step that runs in the caller's
-- transaction; the drivers (src/ops/maintenance.ts in the app, __PGQUEUE_PREFIX___run_maintenance() under pg_cron)
-- call them one at a time in autocommit, so a run never holds one long transaction.
-- Sequence numbers live in __PGQUEUE_PREFIX___partition_seq, so any message row (the newest included) may be deleted.
-- JIT is off in every function: generic plans carry estimates large enough to trigger it, and compiling costs far
-- more than the bounded work it would speed up.

-- Advisory-lock key shared by every runner of this schema + prefix (in-app, CLI, pg_cron).
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_lock_key()
RETURNS bigint
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT ('x' || left(md5('kafkajs-pgqueue:maintenance:' || '__PGQUEUE_SCHEMA__' || '.__PGQUEUE_PREFIX__'), 16))::bit(64)::bigint
$fn$;

-- Highest stored seq of one partition (one index probe per priority), NULL when it holds no rows.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT max(x.seq)
    FROM generate_series(0, 9) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.enqueue_seq AS seq FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
        ORDER BY m.enqueue_seq DESC LIMIT 1
    ) x
$fn$;

-- Smallest stored seq above p_after in one partition, NULL when there is none.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id bigint, p_partition int, p_after bigint)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT min(x.seq)
    FROM generate_series(0, 9) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.enqueue_seq AS seq FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
          AND m.enqueue_seq > p_after
        ORDER BY m.enqueue_seq LIMIT 1
    ) x
$fn$;

-- Last seq handed out for a partition. The ledger is authoritative; MAX(seq) covers rows written by DataHub's own
-- producers (they allocate MAX+1 and never touch the ledger).
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_high_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT GREATEST(
        (SELECT s.next_seq - 1 FROM __PGQUEUE_PREFIX___partition_seq s
         WHERE s.topic_id = p_topic_id AND s.partition_id = p_partition),
        __PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, p_partition),
        0)
$fn$;

-- Ledger rows for partitions that have none (topics DataHub's clients created), seeded past the stored rows BEFORE
-- anything is deleted: seeded after a purge they would restart at 1.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_seed_ledger()
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH ins AS (
        INSERT INTO __PGQUEUE_PREFIX___partition_seq (topic_id, partition_id, next_seq)
        SELECT t.id, p.partition_id, COALESCE(__PGQUEUE_PREFIX___maintenance_max_seq(t.id, p.partition_id), 0) + 1
        FROM __PGQUEUE_PREFIX___topic t
        CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
        WHERE NOT EXISTS (
            SELECT 1 FROM __PGQUEUE_PREFIX___partition_seq s WHERE s.topic_id = t.id AND s.partition_id = p.partition_id)
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) FROM ins
$fn$;

-- Message partitions whose whole range ended at least one partition width ago, oldest first. The width of slack
-- keeps a partition that a still-open transaction (enqueued_at = its start time) may yet insert into.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_drop_candidates()
RETURNS TABLE (partition_name text, range_end timestamptz)
LANGUAGE sql STABLE
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT c.relname::text, b.range_end
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL (
        SELECT substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz AS range_end
    ) b
    WHERE i.inhparent = '__PGQUEUE_PREFIX___message'::regclass
      AND b.range_end <= now() - interval '__PARTITION_INTERVAL__'
    ORDER BY b.range_end, c.relname
$fn$;

-- Drops one candidate partition when every row in it is deletable by the age rule of its own topic, which holds
-- when no topic that keeps rows past the partition's end (retention 0, or a window reaching past it) has a row
-- there: one index probe, no scan. Otherwise the rows are left to the row-level policies.
-- Returns 'dropped', 'kept' (rows must stay), 'busy' (message table locked longer than p_lock_timeout_ms) or 'gone'.
-- Lease and ack rows never block it: V002 dropped their foreign key; orphans are swept afterwards.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_drop_partition(p_name text, p_lock_timeout_ms int DEFAULT 2000)
RETURNS text
LANGUAGE plpgsql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
DECLARE
    child regclass := to_regclass(quote_ident(current_schema()) || '.' || quote_ident(p_name));
    ends timestamptz;
    keepers bigint[];
    blocked boolean;
BEGIN
    IF child IS NULL THEN
        RETURN 'gone';
    END IF;
    PERFORM set_config('lock_timeout', p_lock_timeout_ms || 'ms', true);
    BEGIN
        -- parent first, as DROP itself locks them: taking the child first could deadlock with a writer
        LOCK TABLE ONLY __PGQUEUE_PREFIX___message IN ACCESS EXCLUSIVE MODE;
    EXCEPTION WHEN lock_not_available THEN
        RETURN 'busy';
    END;
    SELECT d.range_end INTO ends FROM __PGQUEUE_PREFIX___maintenance_drop_candidates() d WHERE d.partition_name = p_name;
    IF NOT FOUND THEN
        RETURN 'gone';
    END IF;
    SELECT coalesce(array_agg(t.id), '{}') INTO keepers
    FROM __PGQUEUE_PREFIX___topic t
    WHERE t.retention_max_age_seconds = 0 OR ends > now() - t.retention_max_age_seconds * interval '1 second';
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s m WHERE m.topic_id = ANY($1))', child) INTO blocked USING keepers;
    IF blocked THEN
        RETURN 'kept';
    END IF;
    BEGIN
        EXECUTE format('DROP TABLE %s', child);
    EXCEPTION WHEN lock_not_available THEN
        RETURN 'busy'; -- e.g. a manual VACUUM of the partition itself
    END;
    RETURN 'dropped';
END
$fn$;

-- Deletes rows located by (partition oid, ctid), one TID scan per partition. Victims are chosen through the parent
-- table, but a join back to it by (id, enqueued_at) would hash-scan every partition for each batch.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_delete_located(p_parts oid[], p_ctids tid[])
RETURNS bigint
LANGUAGE plpgsql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
DECLARE
    part oid;
    n bigint;
    total bigint := 0;
BEGIN
    FOR part IN SELECT DISTINCT x FROM unnest(p_parts) AS u(x) LOOP
        EXECUTE format('DELETE FROM %s WHERE ctid = ANY($1)', part::regclass)
            USING ARRAY(SELECT x.c FROM unnest(p_parts, p_ctids) AS x(o, c) WHERE x.o = part);
        GET DIAGNOSTICS n = ROW_COUNT;
        total := total + n;
    END LOOP;
    RETURN total;
END
$fn$;

-- Age: one batch of rows older than the topic's retention_max_age_seconds (0 = keep forever). Returns rows deleted.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_delete_by_age(p_topic_id bigint, p_limit int)
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT __PGQUEUE_PREFIX___maintenance_delete_located(array_agg(v.tableoid), array_agg(v.ctid))
    FROM (
        SELECT m.tableoid, m.ctid FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id
          -- a scalar subquery, so partitions past the cutoff are pruned when execution starts
          AND m.enqueued_at < (SELECT now() - t.retention_max_age_seconds * interval '1 second'
                               FROM __PGQUEUE_PREFIX___topic t
                               WHERE t.id = p_topic_id AND t.retention_max_age_seconds > 0)
        LIMIT p_limit
    ) v
$fn$;

-- Row cap: one batch of the oldest rows, never more than count - max_rows_per_topic (recounted every batch, so a
-- concurrent delete can only make it delete fewer). Oldest = (enqueued_at, seq), ties broken by partition and id.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_delete_over_row_cap(p_topic_id bigint, p_limit int)
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT __PGQUEUE_PREFIX___maintenance_delete_located(array_agg(v.tableoid), array_agg(v.ctid))
    FROM (
        SELECT m.tableoid, m.ctid FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id
        ORDER BY m.enqueued_at, m.enqueue_seq, m.partition_id, m.id
        LIMIT LEAST(p_limit, COALESCE((
            SELECT (SELECT count(*) FROM __PGQUEUE_PREFIX___message c WHERE c.topic_id = p_topic_id) - t.max_rows_per_topic
            FROM __PGQUEUE_PREFIX___topic t WHERE t.id = p_topic_id AND t.max_rows_per_topic > 0), 0))
    ) v
$fn$;

-- Byte cap: one batch of the shortest oldest-first prefix whose payload bytes bring the topic down to
-- max_total_payload_bytes: a row belongs to it while the bytes before it are still short of the excess.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_delete_over_byte_cap(p_topic_id bigint, p_limit int)
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH excess AS (
        SELECT (SELECT COALESCE(sum(m.payload_bytes), 0) FROM __PGQUEUE_PREFIX___message m WHERE m.topic_id = p_topic_id)
               - t.max_total_payload_bytes AS bytes
        FROM __PGQUEUE_PREFIX___topic t WHERE t.id = p_topic_id AND t.max_total_payload_bytes > 0
    ), ranked AS (
        SELECT m.tableoid, m.ctid, m.enqueued_at, m.enqueue_seq, m.partition_id, m.id,
               sum(m.payload_bytes) OVER (ORDER BY m.enqueued_at, m.enqueue_seq, m.partition_id, m.id
                                          ROWS UNBOUNDED PRECEDING) - m.payload_bytes AS bytes_before
        FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND EXISTS (SELECT 1 FROM excess WHERE excess.bytes > 0)
    )
    SELECT __PGQUEUE_PREFIX___maintenance_delete_located(array_agg(v.tableoid), array_agg(v.ctid))
    FROM (
        SELECT r.tableoid, r.ctid FROM ranked r, excess
        WHERE r.bytes_before < excess.bytes
        ORDER BY r.enqueued_at, r.enqueue_seq, r.partition_id, r.id
        LIMIT p_limit
    ) v
$fn$;

-- Aggressive retention for one partition: the seq through which every registered (not expired) group has
-- committed, or why nothing may go. A registered group without an offset row blocks (as in DataHub), and so does
-- one STUCK_AHEAD (committed past the last seq handed out): its offset says nothing about what it really read.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_consumed_through(p_topic_id bigint, p_partition int, p_expiry_seconds int)
RETURNS TABLE (purge_through bigint, blocked_reason text, blocked_group text)
LANGUAGE sql STABLE ROWS 1
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH regs AS (
        SELECT r.consumer_group, o.offset_value
        FROM __PGQUEUE_PREFIX___consumer_registration r
        LEFT JOIN __PGQUEUE_PREFIX___consumer_offset o
          ON o.consumer_group = r.consumer_group AND o.topic_id = r.topic_id AND o.partition_id = p_partition
        WHERE r.topic_id = p_topic_id
          AND (p_expiry_seconds = 0 OR r.last_heartbeat_at >= now() - p_expiry_seconds * interval '1 second')
    ), agg AS (
        SELECT count(*) AS groups, min(offset_value) AS low,
               min(consumer_group) FILTER (WHERE offset_value IS NULL) AS no_offset,
               min(consumer_group) FILTER (WHERE offset_value > __PGQUEUE_PREFIX___maintenance_high_seq(p_topic_id, p_partition)) AS ahead
        FROM regs
    )
    SELECT CASE WHEN groups > 0 AND no_offset IS NULL AND ahead IS NULL THEN low END,
           CASE WHEN groups = 0 THEN 'no registered group'
                WHEN no_offset IS NOT NULL THEN 'registered group has no offset'
                WHEN ahead IS NOT NULL THEN 'STUCK_AHEAD' END,
           COALESCE(no_offset, ahead)
    FROM agg
$fn$;

-- Partitions of aggressive-retention topics that hold rows, with their purge bound or blocker; a partition whose
-- rows all lie above its bound is left out.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_aggressive_plan(p_expiry_seconds int)
RETURNS TABLE (topic_id bigint, partition_id int, purge_through bigint, blocked_reason text, blocked_group text)
LANGUAGE sql STABLE
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    SELECT f.topic_id, f.partition_id, c.purge_through, c.blocked_reason, c.blocked_group
    FROM (
        SELECT t.id AS topic_id, p.partition_id,
               __PGQUEUE_PREFIX___maintenance_next_seq_after(t.id, p.partition_id, 0) AS first_seq
        FROM __PGQUEUE_PREFIX___topic t
        CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
        WHERE t.aggressive_retention
    ) f
    CROSS JOIN LATERAL __PGQUEUE_PREFIX___maintenance_consumed_through(f.topic_id, f.partition_id, p_expiry_seconds) c
    WHERE f.first_seq IS NOT NULL AND (c.purge_through IS NULL OR f.first_seq <= c.purge_through)
    ORDER BY f.topic_id, f.partition_id
$fn$;

-- Aggressive retention: one batch of rows at or below the bound, re-checked in the same statement. One index range
-- per priority, so rows above the bound are never scanned.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_delete_consumed(p_topic_id bigint, p_partition int, p_expiry_seconds int, p_limit int)
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH bound AS (
        SELECT c.purge_through
        FROM __PGQUEUE_PREFIX___topic t
        CROSS JOIN LATERAL __PGQUEUE_PREFIX___maintenance_consumed_through(t.id, p_partition, p_expiry_seconds) c
        WHERE t.id = p_topic_id AND t.aggressive_retention AND c.purge_through IS NOT NULL
    )
    SELECT __PGQUEUE_PREFIX___maintenance_delete_located(array_agg(v.tableoid), array_agg(v.ctid))
    FROM (
        SELECT x.tableoid, x.ctid
        FROM bound, generate_series(0, 9) AS pr(priority)
        CROSS JOIN LATERAL (
            SELECT m.tableoid, m.ctid FROM __PGQUEUE_PREFIX___message m
            WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
              AND m.enqueue_seq <= bound.purge_through
            ORDER BY m.enqueue_seq
            LIMIT p_limit
        ) x
        LIMIT p_limit
    ) v
$fn$;

-- One page (by id) of the lease/ack table: deletes the rows whose message is gone. last_id is NULL past the end.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_sweep_leases(p_after bigint, p_limit int)
RETURNS TABLE (last_id bigint, deleted bigint)
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH page AS (
        SELECT l.id, l.message_id, l.message_enqueued_at FROM __PGQUEUE_PREFIX___message_group_lease l
        WHERE l.id > p_after ORDER BY l.id LIMIT p_limit
    ), orphan AS (
        -- LATERAL + LIMIT keeps this a probe per row (pruned to one partition) rather than a hash of every message
        SELECT p.id FROM page p
        LEFT JOIN LATERAL (
            SELECT 1 AS hit FROM __PGQUEUE_PREFIX___message m
            WHERE m.id = p.message_id AND m.enqueued_at = p.message_enqueued_at LIMIT 1
        ) x ON true
        WHERE x.hit IS NULL
    ), d AS (
        DELETE FROM __PGQUEUE_PREFIX___message_group_lease l USING orphan o WHERE l.id = o.id
        RETURNING 1
    )
    SELECT (SELECT max(id) FROM page), (SELECT count(*) FROM d)
$fn$;

-- Offsets left below deleted rows move up to the next stored row (or the last seq handed out): DataHub's consumers
-- advance only across contiguous acked seqs and would otherwise stall at the gap forever. Never moves an offset
-- back, never touches one at or past the last seq.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_advance_offsets()
RETURNS bigint
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH target AS (
        SELECT o.id, LEAST(
                   COALESCE(__PGQUEUE_PREFIX___maintenance_next_seq_after(o.topic_id, o.partition_id, o.offset_value) - 1, h.seq),
                   h.seq) AS offset_value
        FROM __PGQUEUE_PREFIX___consumer_offset o
        CROSS JOIN LATERAL (SELECT __PGQUEUE_PREFIX___maintenance_high_seq(o.topic_id, o.partition_id) AS seq) h
        WHERE o.offset_value < h.seq
    ), u AS (
        UPDATE __PGQUEUE_PREFIX___consumer_offset o SET offset_value = target.offset_value
        FROM target
        WHERE o.id = target.id AND o.offset_value < target.offset_value
        RETURNING 1
    )
    SELECT count(*) FROM u
$fn$;

-- Registrations silent longer than p_expiry_seconds (0 = never): they would block aggressive retention forever.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_expire_registrations(p_expiry_seconds int)
RETURNS TABLE (consumer_group text, topic_name text, last_heartbeat_at timestamptz)
LANGUAGE sql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
    WITH d AS (
        DELETE FROM __PGQUEUE_PREFIX___consumer_registration r
        WHERE p_expiry_seconds > 0 AND r.last_heartbeat_at < now() - p_expiry_seconds * interval '1 second'
        RETURNING r.consumer_group, r.topic_id, r.last_heartbeat_at
    )
    SELECT d.consumer_group, t.topic_name, d.last_heartbeat_at
    FROM d JOIN __PGQUEUE_PREFIX___topic t ON t.id = d.topic_id
    ORDER BY d.consumer_group, t.topic_name
$fn$;

-- Group members, partition leases and idempotent-producer state silent longer than p_expiry_seconds (0 = never).
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___maintenance_expire_members(p_expiry_seconds int)
RETURNS TABLE (members bigint, partition_leases bigint, producer_sequences bigint)
LANGUAGE plpgsql
SET search_path = __PGQUEUE_SCHEMA__, public
SET jit = off
AS $fn$
DECLARE
    cutoff timestamptz := now() - p_expiry_seconds * interval '1 second';
BEGIN
    members := 0; partition_leases := 0; producer_sequences := 0;
    IF p_expiry_seconds > 0 THEN
        DELETE FROM __PGQUEUE_PREFIX___group_member g WHERE g.heartbeat_at < cutoff;
        GET DIAGNOSTICS members = ROW_COUNT;
        DELETE FROM __PGQUEUE_PREFIX___partition_lease l WHERE l.locked_until < cutoff;
        GET DIAGNOSTICS partition_leases = ROW_COUNT;
        -- added by a later migration; absent in schemas that predate it
        IF to_regclass('__PGQUEUE_PREFIX___producer_sequence') IS NOT NULL THEN
            EXECUTE 'DELETE FROM __PGQUEUE_PREFIX___producer_sequence WHERE updated_at < $1' USING cutoff;
            GET DIAGNOSTICS producer_sequences = ROW_COUNT;
        END IF;
    END IF;
    RETURN NEXT;
END
$fn$;

-- The whole run for pg_cron (`CALL ...`), committing after every step and batch. Same steps, same order as the
-- in-app runner; skipped when another runner holds the lock. No SET clause: it would forbid COMMIT.
CREATE OR REPLACE PROCEDURE __PGQUEUE_PREFIX___run_maintenance(
    p_expiry_seconds int DEFAULT 604800,
    p_batch int DEFAULT __BATCH_DELETE_LIMIT__,
    p_max_batches int DEFAULT 200)
LANGUAGE plpgsql
AS $fn$
DECLARE
    key constant bigint := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key();
    r record;
    n bigint;
    i int;
    cursor_id bigint;
BEGIN
    IF NOT pg_try_advisory_lock(key) THEN
        RAISE NOTICE 'pgQueue maintenance skipped: another runner holds the lock';
        RETURN;
    END IF;
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions();
    COMMIT;
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_seed_ledger();
    COMMIT;
    FOR r IN SELECT d.partition_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_candidates() d LOOP
        BEGIN
            PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_partition(r.partition_name);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgQueue maintenance: dropping partition % failed: %', r.partition_name, SQLERRM;
        END;
        COMMIT;
    END LOOP;
    FOR r IN SELECT t.id, t.retention_max_age_seconds > 0 AS age, t.max_rows_per_topic > 0 AS rows_cap,
                    t.max_total_payload_bytes > 0 AS bytes_cap
             FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ORDER BY t.id LOOP
        i := 0;
        WHILE r.age AND i < p_max_batches LOOP
            n := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_by_age(r.id, p_batch);
            COMMIT;
            i := i + 1;
            EXIT WHEN n < p_batch;
        END LOOP;
        i := 0;
        WHILE r.rows_cap AND i < p_max_batches LOOP
            n := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_over_row_cap(r.id, p_batch);
            COMMIT;
            i := i + 1;
            EXIT WHEN n < p_batch;
        END LOOP;
        i := 0;
        WHILE r.bytes_cap AND i < p_max_batches LOOP
            n := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_over_byte_cap(r.id, p_batch);
            COMMIT;
            i := i + 1;
            EXIT WHEN n < p_batch;
        END LOOP;
    END LOOP;
    FOR r IN SELECT a.topic_id, a.partition_id
             FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_aggressive_plan(p_expiry_seconds) a
             WHERE a.purge_through IS NOT NULL LOOP
        i := 0;
        LOOP
            n := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_consumed(r.topic_id, r.partition_id, p_expiry_seconds, p_batch);
            COMMIT;
            i := i + 1;
            EXIT WHEN n < p_batch OR i >= p_max_batches;
        END LOOP;
    END LOOP;
    cursor_id := 0;
    LOOP
        SELECT s.last_id INTO cursor_id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_leases(cursor_id, p_batch) s;
        COMMIT;
        EXIT WHEN cursor_id IS NULL;
    END LOOP;
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_advance_offsets();
    COMMIT;
    FOR r IN SELECT * FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_registrations(p_expiry_seconds) LOOP
        RAISE LOG 'pgQueue maintenance: expired registration of group % on topic % (last heartbeat %)',
            r.consumer_group, r.topic_name, r.last_heartbeat_at;
    END LOOP;
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_members(p_expiry_seconds);
    COMMIT;
    PERFORM pg_advisory_unlock(key);
END
$fn$;
