-- Maintenance (see R__maintenance_1_positions.sql): orphaned leases, stranded offsets, delivery attempts the group
-- is done with, silent registrations and members.
-- Every function pins search_path (pg_catalog first, pg_temp last) and schema-qualifies what it touches.
-- JIT is off in every function: generic plans carry estimates large enough to trigger it, and compiling costs far
-- more than the bounded work it would speed up. A per-priority scan runs one index probe per priority,
-- generate_series(0, __MAX_PRIORITY__), the priorities the library accepts (src/config/priorityBands.ts).

-- One page (by id) of the lease/ack table: deletes the rows whose message is gone. last_id is NULL past the end.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_leases(p_after bigint, p_limit int)
RETURNS TABLE (last_id bigint, deleted bigint)
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH page AS (
        SELECT l.id, l.message_id, l.message_enqueued_at FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message_group_lease l
        WHERE l.id > p_after ORDER BY l.id LIMIT p_limit
    ), orphan AS (
        -- LATERAL + LIMIT keeps this a probe per row (pruned to one partition) rather than a hash of every message
        SELECT p.id FROM page p
        LEFT JOIN LATERAL (
            SELECT 1 AS hit FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
            WHERE m.id = p.message_id AND m.enqueued_at = p.message_enqueued_at LIMIT 1
        ) x ON true
        WHERE x.hit IS NULL
    ), d AS (
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message_group_lease l USING orphan o WHERE l.id = o.id
        RETURNING 1
    )
    SELECT (SELECT max(id) FROM page), (SELECT count(*) FROM d)
$fn$;

-- At most p_limit delivery-attempt rows (the dead-letter extension's, src/deadLetter/) whose group is done with their
-- message: its committed offset is past it (the message was moved, or handled by another member after the one
-- counting its failures died mid-retry), or it has no offset for the partition any more (its offsets were deleted).
-- A row of a deleted topic goes with the topic. Rows a move's transaction holds are left for the next run.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_attempts(p_limit int)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH done AS (
        SELECT a.consumer_group, a.topic_id, a.partition_id, a.enqueue_seq
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___delivery_attempt a
        WHERE NOT EXISTS (
            SELECT 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_offset co
            WHERE co.consumer_group = a.consumer_group AND co.topic_id = a.topic_id AND co.partition_id = a.partition_id
              AND co.offset_value < a.enqueue_seq)
        LIMIT p_limit
        FOR UPDATE OF a SKIP LOCKED
    ), d AS (
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___delivery_attempt a USING done
        WHERE a.consumer_group = done.consumer_group AND a.topic_id = done.topic_id
          AND a.partition_id = done.partition_id AND a.enqueue_seq = done.enqueue_seq
        RETURNING 1
    )
    SELECT count(*) FROM d
$fn$;

-- Offsets left below deleted rows move up to the next stored row (or the last seq handed out): DataHub's consumers
-- advance only across contiguous acked seqs and would otherwise stall at the gap forever. Never moves an offset
-- back, never touches one at or past the last seq.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_advance_offsets()
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH target AS (
        SELECT o.id, LEAST(
                   COALESCE(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(o.topic_id, o.partition_id, o.offset_value) - 1, h.seq),
                   h.seq) AS offset_value
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_offset o
        CROSS JOIN LATERAL (SELECT __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_high_seq(o.topic_id, o.partition_id) AS seq) h
        WHERE o.offset_value < h.seq
    ), u AS (
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_offset o SET offset_value = target.offset_value
        FROM target
        WHERE o.id = target.id AND o.offset_value < target.offset_value
        RETURNING 1
    )
    SELECT count(*) FROM u
$fn$;

-- Registrations silent longer than p_expiry_seconds (0 = never): they would block aggressive retention forever.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_registrations(p_expiry_seconds int)
RETURNS TABLE (consumer_group text, topic_name text, last_heartbeat_at timestamptz)
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH d AS (
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_registration r
        WHERE p_expiry_seconds > 0 AND r.last_heartbeat_at < now() - p_expiry_seconds * interval '1 second'
        RETURNING r.consumer_group, r.topic_id, r.last_heartbeat_at
    )
    SELECT d.consumer_group, t.topic_name, d.last_heartbeat_at
    FROM d JOIN __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ON t.id = d.topic_id
    ORDER BY d.consumer_group, t.topic_name
$fn$;

-- Group members, partition leases and idempotent-producer state silent longer than p_expiry_seconds (0 = never).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_members(p_expiry_seconds int)
RETURNS TABLE (members bigint, partition_leases bigint, producer_sequences bigint)
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    cutoff timestamptz := now() - p_expiry_seconds * interval '1 second';
BEGIN
    members := 0; partition_leases := 0; producer_sequences := 0;
    IF p_expiry_seconds > 0 THEN
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___group_member g WHERE g.heartbeat_at < cutoff;
        GET DIAGNOSTICS members = ROW_COUNT;
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_lease l WHERE l.locked_until < cutoff;
        GET DIAGNOSTICS partition_leases = ROW_COUNT;
        -- added by a later migration; absent in schemas that predate it
        IF to_regclass('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___producer_sequence') IS NOT NULL THEN
            EXECUTE 'DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___producer_sequence WHERE updated_at < $1' USING cutoff;
            GET DIAGNOSTICS producer_sequences = ROW_COUNT;
        END IF;
    END IF;
    RETURN NEXT;
END
$fn$;
