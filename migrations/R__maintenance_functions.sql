-- Maintenance and retention (docs/retention.md). Each function is ONE bounded step that runs in the caller's
-- transaction; the drivers (src/ops/maintenance.ts in the app, __PGQUEUE_PREFIX___run_maintenance() under pg_cron,
-- __PGQUEUE_PREFIX___apply_retention() for DataHub's callers) call them one at a time, so a failure of one step for
-- one topic never stops the others.
-- Two rules hold for every kind of retention: it deletes a prefix of each partition's log (by seq), never a row in
-- the middle, and it keeps each partition's highest-seq row (the anchor), so DataHub's MAX(enqueue_seq)+1 producers
-- never hand out a seq again.
-- Every function pins search_path (pg_catalog first, pg_temp last) and schema-qualifies what it touches.
-- JIT is off in every function: generic plans carry estimates large enough to trigger it, and compiling costs far
-- more than the bounded work it would speed up.

-- Replaced by __PGQUEUE_PREFIX___maintenance_retention_batch (one driver for every row policy).
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_by_age(bigint, int);
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_over_row_cap(bigint, int);
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_over_byte_cap(bigint, int);
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_consumed(bigint, int, int, int);
DROP FUNCTION IF EXISTS __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_candidates();

-- Advisory-lock key shared by every runner of this schema + prefix (in-app, CLI, pg_cron, apply_retention).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key()
RETURNS bigint
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    SELECT ('x' || left(md5('kafkajs-pgqueue:maintenance:' || '__PGQUEUE_SCHEMA__' || '.__PGQUEUE_PREFIX__'), 16))::bit(64)::bigint
$fn$;

-- Highest stored seq of one partition (one index probe per priority), NULL when it holds no rows: the anchor.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT max(x.seq)
    FROM generate_series(0, 9) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.enqueue_seq AS seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
        ORDER BY m.enqueue_seq DESC LIMIT 1
    ) x
$fn$;

-- Smallest stored seq above p_after in one partition, NULL when there is none.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id bigint, p_partition int, p_after bigint)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT min(x.seq)
    FROM generate_series(0, 9) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.enqueue_seq AS seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
          AND m.enqueue_seq > p_after
        ORDER BY m.enqueue_seq LIMIT 1
    ) x
$fn$;

-- Last seq handed out for a partition. The ledger is authoritative; MAX(seq) covers rows written by DataHub's own
-- producers (they allocate MAX+1 and never touch the ledger).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_high_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT GREATEST(
        (SELECT s.next_seq - 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s
         WHERE s.topic_id = p_topic_id AND s.partition_id = p_partition),
        __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, p_partition),
        0)
$fn$;

-- Ledger rows for partitions that have none (topics DataHub's clients created), seeded past the stored rows BEFORE
-- anything is deleted: seeded after a purge they would restart at 1.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_seed_ledger()
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    WITH ins AS (
        INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq (topic_id, partition_id, next_seq)
        SELECT t.id, p.partition_id, COALESCE(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(t.id, p.partition_id), 0) + 1
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t
        CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
        WHERE NOT EXISTS (
            SELECT 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s
            WHERE s.topic_id = t.id AND s.partition_id = p.partition_id)
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) FROM ins
$fn$;

-- Message partitions whose whole range ended at least one partition width ago, oldest first. The width of slack
-- keeps a partition that a still-open transaction (enqueued_at = its start time) may yet insert into.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_candidates()
RETURNS TABLE (partition_name text, range_start timestamptz, range_end timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT c.relname::text, b.range_start, b.range_end
    FROM pg_catalog.pg_inherits i
    JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL (
        SELECT substring(pg_catalog.pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''([^'']+)''\)')::timestamptz AS range_start,
               substring(pg_catalog.pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz AS range_end
    ) b
    WHERE i.inhparent = '__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message'::regclass
      AND b.range_end <= now() - interval '__PARTITION_INTERVAL__'
    ORDER BY b.range_end, c.relname
$fn$;

-- Why a candidate partition must stay, or NULL when dropping it deletes only rows its retention rules would delete
-- anyway: every row is past its own topic's age retention, and for every log partition with rows in it those rows
-- are a prefix of that log (all below its rows elsewhere) that does not hold the anchor. A few index probes per log
-- partition present, no scan.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_blocker(
    p_child regclass, p_start timestamptz, p_end timestamptz)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    tp record;
    present boolean;
    child_max bigint;
    older_min bigint;
    newer_min bigint;
BEGIN
    FOR tp IN SELECT t.id, t.topic_name, t.partition_count, t.retention_max_age_seconds
              FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ORDER BY t.id LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s m WHERE m.topic_id = $1)', p_child) INTO present USING tp.id;
        CONTINUE WHEN NOT present;
        IF tp.retention_max_age_seconds = 0 OR p_end > now() - tp.retention_max_age_seconds * interval '1 second' THEN
            RETURN format('topic %s keeps rows in it (retention)', tp.topic_name);
        END IF;
        FOR p IN 0 .. tp.partition_count - 1 LOOP
            EXECUTE format(
                'SELECT max(x.seq) FROM generate_series(0, 9) AS pr(priority) CROSS JOIN LATERAL ('
                ' SELECT m.enqueue_seq AS seq FROM %s m WHERE m.topic_id = $1 AND m.partition_id = $2'
                ' AND m.priority = pr.priority ORDER BY m.enqueue_seq DESC LIMIT 1) x', p_child)
                INTO child_max USING tp.id, p;
            CONTINUE WHEN child_max IS NULL;
            -- the log's rows outside this partition, by enqueued_at ranges so that only other partitions are probed
            SELECT min(x.seq) INTO older_min
            FROM generate_series(0, 9) AS pr(priority)
            CROSS JOIN LATERAL (
                SELECT m.enqueue_seq AS seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
                WHERE m.topic_id = tp.id AND m.partition_id = p AND m.priority = pr.priority AND m.enqueued_at < p_start
                ORDER BY m.enqueue_seq LIMIT 1) x;
            SELECT min(x.seq) INTO newer_min
            FROM generate_series(0, 9) AS pr(priority)
            CROSS JOIN LATERAL (
                SELECT m.enqueue_seq AS seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
                WHERE m.topic_id = tp.id AND m.partition_id = p AND m.priority = pr.priority AND m.enqueued_at >= p_end
                ORDER BY m.enqueue_seq LIMIT 1) x;
            IF older_min IS NULL AND newer_min IS NULL THEN
                RETURN format('holds the newest row (anchor) of topic %s partition %s', tp.topic_name, p);
            END IF;
            IF child_max > LEAST(older_min, newer_min) THEN
                RETURN format('its rows of topic %s partition %s are not a prefix of that log', tp.topic_name, p);
            END IF;
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$fn$;

-- Drops one candidate partition when nothing blocks it (checked without a lock first, then again under the lock).
-- Returns 'dropped', 'kept' (rows must stay; the row-level policies handle them), 'busy' (the message table stayed
-- locked for p_lock_timeout_ms: retried on the next run) or 'gone'. Lease and ack rows never block it: V002 dropped
-- their foreign key; orphans are swept afterwards.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_partition(p_name text, p_lock_timeout_ms int DEFAULT 200)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
SET lock_timeout = '200ms'
AS $fn$
DECLARE
    child regclass := to_regclass('__PGQUEUE_SCHEMA__.' || quote_ident(p_name));
    c record;
BEGIN
    IF child IS NULL THEN
        RETURN 'gone';
    END IF;
    SELECT * INTO c FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_candidates() d WHERE d.partition_name = p_name;
    IF NOT FOUND THEN
        RETURN 'gone';
    END IF;
    IF __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_blocker(child, c.range_start, c.range_end) IS NOT NULL THEN
        RETURN 'kept';
    END IF;
    PERFORM set_config('lock_timeout', p_lock_timeout_ms || 'ms', true);
    BEGIN
        -- parent first, as DROP itself locks them: taking the child first could deadlock with a writer
        LOCK TABLE ONLY __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message IN ACCESS EXCLUSIVE MODE;
    EXCEPTION WHEN lock_not_available THEN
        RETURN 'busy';
    END;
    -- rows may have arrived since the first check (a transaction open since the partition's range)
    IF __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_blocker(child, c.range_start, c.range_end) IS NOT NULL THEN
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
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_log_head(
    p_topic_id bigint, p_partition int, p_after bigint, p_below bigint, p_limit int)
RETURNS TABLE (part oid, row_ctid tid, seq bigint, enqueued_at timestamptz, bytes bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT x.tableoid, x.ctid, x.enqueue_seq, x.enqueued_at, x.payload_bytes
    FROM generate_series(0, 9) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.tableoid, m.ctid, m.enqueue_seq, m.enqueued_at, m.payload_bytes
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


-- The whole run for pg_cron (`CALL ...`), committing after every step and batch. Same steps, same order as the
-- in-app runner; skipped when another runner holds the lock. A step that fails (for one topic, one partition) is
-- reported with RAISE WARNING and the run goes on. No SET clause (it would forbid COMMIT): every name is qualified.
CREATE OR REPLACE PROCEDURE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___run_maintenance(
    p_expiry_seconds int DEFAULT 604800,
    p_batch int DEFAULT __BATCH_DELETE_LIMIT__,
    p_max_batches int DEFAULT 200)
LANGUAGE plpgsql
AS $fn$
DECLARE
    key constant bigint := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key();
    r record;
    policy text;
    outcome text;
    n bigint;
    i int;
    st bigint[];
    bud bigint;
    cursor_id bigint;
BEGIN
    IF NOT pg_catalog.pg_try_advisory_lock(key) THEN
        RAISE NOTICE 'pgQueue maintenance skipped: another runner holds the lock';
        RETURN;
    END IF;
    BEGIN
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions();
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue maintenance: premaking partitions failed: %', SQLERRM;
    END;
    COMMIT;
    BEGIN
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_seed_ledger();
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue maintenance: seeding the sequence ledger failed: %', SQLERRM;
    END;
    COMMIT;
    FOR r IN SELECT d.partition_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_candidates() d LOOP
        BEGIN
            outcome := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_partition(r.partition_name);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgQueue maintenance: dropping partition % failed: %', r.partition_name, SQLERRM;
            outcome := 'failed';
        END;
        COMMIT;
        -- each attempt queues the traffic behind it for the lock timeout: one per run
        EXIT WHEN outcome = 'busy';
    END LOOP;
    FOREACH policy IN ARRAY ARRAY['age', 'rowCap', 'byteCap', 'aggressive'] LOOP
        FOR r IN SELECT t.id, t.topic_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ORDER BY t.id LOOP
            st := NULL; bud := NULL; i := 0;
            LOOP
                BEGIN
                    SELECT b.deleted, b.budget, b.state INTO n, bud, st
                    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_retention_batch(policy, r.id, st, bud, p_batch, p_expiry_seconds) b;
                EXCEPTION WHEN OTHERS THEN
                    RAISE WARNING 'pgQueue maintenance: % retention of topic % failed: %', policy, r.topic_name, SQLERRM;
                    n := 0;
                END;
                COMMIT;
                i := i + 1;
                EXIT WHEN n < p_batch OR i >= p_max_batches;
            END LOOP;
        END LOOP;
    END LOOP;
    cursor_id := 0;
    LOOP
        BEGIN
            SELECT s.last_id INTO cursor_id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_leases(cursor_id, p_batch) s;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgQueue maintenance: sweeping orphaned leases failed: %', SQLERRM;
            cursor_id := NULL;
        END;
        COMMIT;
        EXIT WHEN cursor_id IS NULL;
    END LOOP;
    BEGIN
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_advance_offsets();
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue maintenance: advancing stranded offsets failed: %', SQLERRM;
    END;
    COMMIT;
    BEGIN
        FOR r IN SELECT * FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_registrations(p_expiry_seconds) LOOP
            RAISE LOG 'pgQueue maintenance: expired registration of group % on topic % (last heartbeat %)',
                r.consumer_group, r.topic_name, r.last_heartbeat_at;
        END LOOP;
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_expire_members(p_expiry_seconds);
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue maintenance: expiring registrations and members failed: %', SQLERRM;
    END;
    COMMIT;
    PERFORM pg_catalog.pg_advisory_unlock(key);
END
$fn$;

-- DataHub's entry point (`SELECT <schema>.<prefix>_apply_retention()`, called by its Java store and Python
-- `apply_topic_retention` in a transaction of their own), with DataHub's signature and policies, run by our steps:
-- age, row cap, byte cap and aggressive retention (registrations never expire here, as in DataHub), at most 50
-- batches of __BATCH_DELETE_LIMIT__ rows per topic and policy, then expired partitions, last, so the lock a drop
-- takes is held only until the caller commits. Skipped (NOTICE) while another maintenance runner works.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___apply_retention()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    batch constant int := __BATCH_DELETE_LIMIT__;
    max_batches constant int := 50;
    r record;
    policy text;
    n bigint;
    i int;
    st bigint[];
    bud bigint;
    cursor_id bigint := 0;
    pages int := 0;
BEGIN
    IF NOT pg_try_advisory_xact_lock(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_lock_key()) THEN
        RAISE NOTICE 'pgQueue retention skipped: another maintenance runner holds the lock';
        RETURN;
    END IF;
    BEGIN
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions();
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_seed_ledger();
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue retention: premake / ledger seeding failed: %', SQLERRM;
    END;
    FOREACH policy IN ARRAY ARRAY['age', 'rowCap', 'byteCap', 'aggressive'] LOOP
        FOR r IN SELECT t.id, t.topic_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t ORDER BY t.id LOOP
            BEGIN
                st := NULL; bud := NULL; i := 0;
                LOOP
                    SELECT b.deleted, b.budget, b.state INTO n, bud, st
                    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_retention_batch(policy, r.id, st, bud, batch, 0) b;
                    i := i + 1;
                    EXIT WHEN n < batch OR i >= max_batches;
                END LOOP;
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'pgQueue retention: % retention of topic % failed: %', policy, r.topic_name, SQLERRM;
            END;
        END LOOP;
    END LOOP;
    BEGIN
        WHILE cursor_id IS NOT NULL AND pages < max_batches * 10 LOOP
            SELECT s.last_id INTO cursor_id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_sweep_leases(cursor_id, batch) s;
            pages := pages + 1;
        END LOOP;
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_advance_offsets();
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'pgQueue retention: lease sweep / offset advance failed: %', SQLERRM;
    END;
    FOR r IN SELECT d.partition_name FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_partition_candidates() d LOOP
        BEGIN
            EXIT WHEN __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_drop_partition(r.partition_name) = 'busy';
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgQueue retention: dropping partition % failed: %', r.partition_name, SQLERRM;
        END;
    END LOOP;
END
$fn$;
