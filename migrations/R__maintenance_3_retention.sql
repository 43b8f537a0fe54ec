-- Maintenance (see R__maintenance_1_positions.sql): row retention, one bounded batch of one policy of one topic.
-- Every function pins search_path (pg_catalog first, pg_temp last) and schema-qualifies what it touches.
-- JIT is off in every function: generic plans carry estimates large enough to trigger it, and compiling costs far
-- more than the bounded work it would speed up. A per-priority scan runs one index probe per priority,
-- generate_series(0, __MAX_PRIORITY__), the priorities the library accepts (src/config/priorityBands.ts).

-- Deletes rows located by (partition oid, ctid), one TID scan per partition. Victims are chosen through the parent
-- table, but a join back to it by (id, enqueued_at) would hash-scan every partition for each batch.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_located(p_parts oid[], p_ctids tid[])
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
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

-- The first p_limit rows of one partition's log with p_after < seq < p_below, in seq order: one index range per
-- priority that starts at p_after, so rows already deleted by earlier batches of a run are never walked again.
-- flags and the key columns serve compaction (R__maintenance_6_compaction.sql); they were added later, and CREATE OR
-- REPLACE cannot change a function's result type.
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_log_head(bigint, int, bigint, bigint, int);
CREATE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_log_head(
    p_topic_id bigint, p_partition int, p_after bigint, p_below bigint, p_limit int)
RETURNS TABLE (part oid, row_ctid tid, seq bigint, enqueued_at timestamptz, bytes bigint, flags smallint,
               routing_key text, message_key bytea)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT x.tableoid, x.ctid, x.enqueue_seq, x.enqueued_at, x.payload_bytes, x.kafka_flags, x.routing_key, x.message_key
    FROM generate_series(0, __MAX_PRIORITY__) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.tableoid, m.ctid, m.enqueue_seq, m.enqueued_at, m.payload_bytes, m.kafka_flags, m.routing_key, m.message_key
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
          AND m.enqueue_seq > p_after AND m.enqueue_seq < p_below
        ORDER BY m.enqueue_seq LIMIT p_limit
    ) x
    ORDER BY x.enqueue_seq
    LIMIT p_limit
$fn$;

-- Aggressive retention for one partition: the seq through which every registered (not expired) group has
-- committed, or why nothing may go. A registered group without an offset row blocks (as in DataHub), and so does
-- one STUCK_AHEAD (committed past the last seq handed out): its offset says nothing about what it really read.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_consumed_through(p_topic_id bigint, p_partition int, p_expiry_seconds int)
RETURNS TABLE (purge_through bigint, blocked_reason text, blocked_group text)
LANGUAGE sql STABLE ROWS 1
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH regs AS (
        SELECT r.consumer_group, o.offset_value
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_registration r
        LEFT JOIN __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___consumer_offset o
          ON o.consumer_group = r.consumer_group AND o.topic_id = r.topic_id AND o.partition_id = p_partition
        WHERE r.topic_id = p_topic_id
          AND (p_expiry_seconds = 0 OR r.last_heartbeat_at >= now() - p_expiry_seconds * interval '1 second')
    ), agg AS (
        SELECT count(*) AS groups, min(offset_value) AS low,
               min(consumer_group) FILTER (WHERE offset_value IS NULL) AS no_offset,
               min(consumer_group) FILTER (WHERE offset_value > __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_high_seq(p_topic_id, p_partition)) AS ahead
        FROM regs
    )
    SELECT CASE WHEN groups > 0 AND no_offset IS NULL AND ahead IS NULL THEN low END,
           CASE WHEN groups = 0 THEN 'no registered group'
                WHEN no_offset IS NOT NULL THEN 'registered group has no offset'
                WHEN ahead IS NOT NULL THEN 'STUCK_AHEAD' END,
           COALESCE(no_offset, ahead)
    FROM agg
$fn$;

-- Partitions of aggressive-retention topics that hold rows below their anchor, with their purge bound or blocker;
-- a partition whose deletable rows all lie above its bound is left out. Reporting only: the batches re-derive it.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_aggressive_plan(p_expiry_seconds int)
RETURNS TABLE (topic_id bigint, partition_id int, purge_through bigint, blocked_reason text, blocked_group text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT f.topic_id, f.partition_id, c.purge_through, c.blocked_reason, c.blocked_group
    FROM (
        SELECT t.id AS topic_id, p.partition_id,
               __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(t.id, p.partition_id, 0) AS first_seq,
               __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(t.id, p.partition_id) AS anchor
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t
        CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
        WHERE t.aggressive_retention
    ) f
    CROSS JOIN LATERAL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_consumed_through(f.topic_id, f.partition_id, p_expiry_seconds) c
    WHERE f.first_seq < f.anchor AND (c.purge_through IS NULL OR f.first_seq <= c.purge_through)
    ORDER BY f.topic_id, f.partition_id
$fn$;

-- One batch (at most p_limit rows) of one row policy of one topic: 'age' (older than retention_max_age_seconds),
-- 'rowCap' (beyond max_rows_per_topic), 'byteCap' (beyond max_total_payload_bytes) or 'aggressive' (committed by
-- every registered group). A policy the topic does not use deletes nothing. Rows go oldest first across the topic's
-- partitions, yet always as a prefix of each partition's log: a row's age is the latest enqueued_at up to it in its
-- log (a transaction's rows carry its start time, so enqueued_at alone is not monotonic in seq). The anchor stays.
-- The caller threads p_state (per partition, the seq through which rows are gone; NULL on the first batch) and
-- p_budget (byteCap: payload bytes still to delete; NULL on the first batch, which sums the topic once) from one
-- batch to the next. The row cap counts rows as the seq span of each log (seqs are handed out without gaps and
-- deleted only as prefixes), so no batch counts or sums the topic.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_retention_batch(
    p_policy text, p_topic_id bigint, p_state bigint[], p_budget bigint, p_limit int, p_expiry_seconds int DEFAULT 0)
RETURNS TABLE (deleted bigint, budget bigint, state bigint[])
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    tp record;
    cutoff timestamptz;
    take bigint := p_limit;
    parts int[];
    afters bigint[];
    belows bigint[];
    span bigint;
    picked_parts oid[];
    picked_ctids tid[];
    picked_logs int[];
    picked_seqs bigint[];
    picked_bytes bigint;
BEGIN
    IF p_policy IS NULL OR p_policy NOT IN ('age', 'rowCap', 'byteCap', 'aggressive') THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('unknown retention policy %L', p_policy);
    END IF;
    deleted := 0; budget := p_budget; state := p_state;
    SELECT t.partition_count, t.retention_max_age_seconds, t.max_rows_per_topic, t.max_total_payload_bytes,
           t.aggressive_retention
      INTO tp FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t WHERE t.id = p_topic_id;
    IF NOT FOUND OR p_limit < 1
       OR (p_policy = 'age' AND tp.retention_max_age_seconds <= 0)
       OR (p_policy = 'rowCap' AND tp.max_rows_per_topic <= 0)
       OR (p_policy = 'byteCap' AND tp.max_total_payload_bytes <= 0)
       OR (p_policy = 'aggressive' AND NOT tp.aggressive_retention) THEN
        RETURN NEXT;
        RETURN;
    END IF;
    IF p_policy = 'age' THEN
        cutoff := now() - tp.retention_max_age_seconds * interval '1 second';
    END IF;

    -- per log partition: `after` = rows at or below it are gone; `below` (exclusive) never reaches the anchor
    SELECT array_agg(x.partition_id ORDER BY x.partition_id), array_agg(x.after_seq ORDER BY x.partition_id),
           array_agg(x.below ORDER BY x.partition_id), COALESCE(sum(x.anchor - x.after_seq), 0)
      INTO parts, afters, belows, span
    FROM (
        SELECT g.partition_id, a.anchor,
               COALESCE(p_state[g.partition_id + 1],
                        __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id, g.partition_id, 0) - 1) AS after_seq,
               CASE WHEN p_policy <> 'aggressive' THEN a.anchor
                    -- LEAST ignores NULL: a blocked partition (no bound) must stay blocked
                    WHEN c.purge_through IS NOT NULL THEN LEAST(a.anchor, c.purge_through + 1) END AS below
        FROM generate_series(0, tp.partition_count - 1) AS g(partition_id)
        CROSS JOIN LATERAL (SELECT __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, g.partition_id) AS anchor) a
        LEFT JOIN LATERAL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_consumed_through(
            p_topic_id, g.partition_id, p_expiry_seconds) c ON p_policy = 'aggressive'
    ) x;
    state := afters;

    IF p_policy = 'rowCap' THEN
        take := LEAST(p_limit, GREATEST(span - tp.max_rows_per_topic, 0));
    ELSIF p_policy = 'byteCap' AND budget IS NULL THEN
        SELECT COALESCE(sum(m.payload_bytes), 0) - tp.max_total_payload_bytes INTO budget
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m WHERE m.topic_id = p_topic_id;
    END IF;
    IF take <= 0 OR (p_policy = 'byteCap' AND budget <= 0) THEN
        RETURN NEXT;
        RETURN;
    END IF;

    WITH cand AS (
        SELECT u.partition_id, h.part, h.row_ctid, h.seq, h.bytes,
               max(h.enqueued_at) OVER w AS age_key,
               bool_and(cutoff IS NULL OR h.enqueued_at < cutoff) OVER w AS aged
        FROM unnest(parts, afters, belows) AS u(partition_id, after_seq, below)
        CROSS JOIN LATERAL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_log_head(
            p_topic_id, u.partition_id, u.after_seq, u.below, take::int) h
        WHERE u.after_seq IS NOT NULL AND u.below IS NOT NULL
        WINDOW w AS (PARTITION BY u.partition_id ORDER BY h.seq ROWS UNBOUNDED PRECEDING)
    ), ordered AS (
        SELECT c.*, sum(c.bytes) OVER (ORDER BY c.age_key, c.partition_id, c.seq ROWS UNBOUNDED PRECEDING) - c.bytes AS bytes_before
        FROM cand c
        WHERE c.aged
    ), picked AS (
        SELECT o.part, o.row_ctid, o.partition_id, o.seq, o.bytes
        FROM ordered o
        WHERE p_policy <> 'byteCap' OR o.bytes_before < budget
        ORDER BY o.age_key, o.partition_id, o.seq
        LIMIT take
    )
    SELECT array_agg(p.part), array_agg(p.row_ctid), array_agg(p.partition_id), array_agg(p.seq), COALESCE(sum(p.bytes), 0)
      INTO picked_parts, picked_ctids, picked_logs, picked_seqs, picked_bytes
    FROM picked p;

    IF picked_parts IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    deleted := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_located(picked_parts, picked_ctids);
    SELECT array_agg(COALESCE(d.last_seq, u.after_seq) ORDER BY u.partition_id) INTO state
    FROM unnest(parts, afters) AS u(partition_id, after_seq)
    LEFT JOIN (SELECT x.log, max(x.seq) AS last_seq FROM unnest(picked_logs, picked_seqs) AS x(log, seq) GROUP BY x.log) d
      ON d.log = u.partition_id;
    IF p_policy = 'byteCap' THEN
        budget := budget - picked_bytes;
    END IF;
    RETURN NEXT;
END
$fn$;
