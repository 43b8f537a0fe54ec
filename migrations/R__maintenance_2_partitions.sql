-- Maintenance (see R__maintenance_1_positions.sql): expired message partitions, dropped whole when nothing in them
-- must stay.
-- Every function pins search_path (pg_catalog first, pg_temp last) and schema-qualifies what it touches.
-- JIT is off in every function: generic plans carry estimates large enough to trigger it, and compiling costs far
-- more than the bounded work it would speed up. A per-priority scan runs one index probe per priority,
-- generate_series(0, __MAX_PRIORITY__), the priorities the library accepts (src/config/priorityBands.ts).

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
                'SELECT max(x.seq) FROM generate_series(0, __MAX_PRIORITY__) AS pr(priority) CROSS JOIN LATERAL ('
                ' SELECT m.enqueue_seq AS seq FROM %s m WHERE m.topic_id = $1 AND m.partition_id = $2'
                ' AND m.priority = pr.priority ORDER BY m.enqueue_seq DESC LIMIT 1) x', p_child)
                INTO child_max USING tp.id, p;
            CONTINUE WHEN child_max IS NULL;
            -- the log's rows outside this partition, by enqueued_at ranges so that only other partitions are probed
            SELECT min(x.seq) INTO older_min
            FROM generate_series(0, __MAX_PRIORITY__) AS pr(priority)
            CROSS JOIN LATERAL (
                SELECT m.enqueue_seq AS seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
                WHERE m.topic_id = tp.id AND m.partition_id = p AND m.priority = pr.priority AND m.enqueued_at < p_start
                ORDER BY m.enqueue_seq LIMIT 1) x;
            SELECT min(x.seq) INTO newer_min
            FROM generate_series(0, __MAX_PRIORITY__) AS pr(priority)
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
