-- Maintenance and retention (docs/retention.md), in five files run in name order: 1 where each partition's log
-- stands, 2 expired message partitions, 3 row retention, 4 housekeeping, 5 the step list and its drivers. Each
-- function is ONE bounded step that runs in the caller's transaction; the drivers (src/maintenance/run.ts in the
-- app, __PGQUEUE_PREFIX___run_maintenance() under pg_cron, __PGQUEUE_PREFIX___apply_retention() for DataHub's
-- callers) call them one at a time, so a failure of one step for one topic never stops the others.
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

-- Highest stored seq of one partition, NULL when it holds no rows: the anchor. One ordered probe of DataHub's unique
-- key (topic_id, partition_id, enqueue_seq, enqueued_at) per message partition. These position functions are
-- plpgsql, not sql: a sql function with SET clauses is never inlined and is planned again in every transaction that
-- calls it, and a send calls next_seq_after (its logStartOffset) every time; plpgsql keeps its plans per session.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
BEGIN
    RETURN (SELECT m.enqueue_seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
            WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition
            ORDER BY m.enqueue_seq DESC LIMIT 1);
END
$fn$;

-- Smallest stored seq above p_after in one partition, NULL when there is none.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id bigint, p_partition int, p_after bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
BEGIN
    RETURN (SELECT m.enqueue_seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
            WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.enqueue_seq > p_after
            ORDER BY m.enqueue_seq LIMIT 1);
END
$fn$;

-- Last seq handed out for a partition. The ledger is authoritative; MAX(seq) covers rows written by DataHub's own
-- producers (they allocate MAX+1 and never touch the ledger).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_high_seq(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
BEGIN
    RETURN GREATEST(
        (SELECT s.next_seq - 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s
         WHERE s.topic_id = p_topic_id AND s.partition_id = p_partition),
        __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, p_partition),
        0);
END
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
