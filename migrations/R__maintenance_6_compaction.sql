-- Maintenance (see R__maintenance_1_positions.sql): log compaction of topics whose cleanup.policy contains
-- 'compact' (docs/compaction.md). Like Kafka's cleaner it works in two phases per log partition, each call ONE
-- bounded batch: extend the key map (_compaction_key: the highest seq of every key, built from the rows in seq
-- order), then, when enough of the log is dirty, walk the compactable part of the log and delete what the map
-- supersedes. Rows are only ever deleted, never rewritten: offsets never change and never repeat, holes are allowed.
-- It never deletes: a partition's highest-seq row (the anchor), a row above the committed offset of the slowest
-- registered group, a row of the head (younger than min.compaction.lag.ms, by the running maximum of enqueued_at
-- along the log, as age retention counts), nor the latest row of a key unless it is a tombstone past
-- delete.retention.ms. Keyless rows (DataHub's producers cannot write them; ours refuse them) are removed, as
-- Kafka's cleaner drops them. A DELETE takes row locks on the rows it removes only: no producer or consumer waits.
-- Every function pins search_path (pg_catalog first, pg_temp last) and schema-qualifies what it touches; JIT off.

-- The topic's compaction settings, NULL when its cleanup.policy does not contain 'compact'. Values were checked
-- by admin (src/admin/compactionSettings.ts); Kafka's defaults otherwise. max_lag_ms NULL = Long.MAX_VALUE.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_settings(p_config jsonb)
RETURNS TABLE (min_lag_ms bigint, max_lag_ms bigint, delete_retention_ms bigint, dirty_ratio float8)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    SELECT COALESCE((p_config->>'min.compaction.lag.ms')::bigint, 0),
           NULLIF(COALESCE((p_config->>'max.compaction.lag.ms')::bigint, 9223372036854775807), 9223372036854775807),
           COALESCE((p_config->>'delete.retention.ms')::bigint, 86400000),
           COALESCE((p_config->>'min.cleanable.dirty.ratio')::float8, 0.5)
    WHERE 'compact' = ANY (string_to_array(replace(lower(COALESCE(p_config->>'cleanup.policy', 'delete')), ' ', ''), ','))
$fn$;

-- Every log partition of a compacted topic, in (topic, partition) order: what a run's compaction step walks.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_plan()
RETURNS TABLE (topic_id bigint, topic_name text, partition_id int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT t.id, t.topic_name, p.partition_id
    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t
    CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
    WHERE EXISTS (SELECT 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_settings(t.config))
    ORDER BY t.id, p.partition_id
$fn$;

-- The first p_limit rows of one partition's log with p_after < seq < p_below (maintenance_log_head), with the key
-- as compaction compares it: the SHA-256 of the bytes a consumer sees as the key, NULL for a keyless row.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_rows(
    p_topic_id bigint, p_partition int, p_after bigint, p_below bigint, p_limit int)
RETURNS TABLE (part oid, row_ctid tid, seq bigint, enqueued_at timestamptz, flags smallint, key_hash bytea)
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT h.part, h.row_ctid, h.seq, h.enqueued_at, h.flags,
           CASE WHEN h.flags & 2 = 0 THEN sha256(COALESCE(h.message_key, convert_to(h.routing_key, 'UTF8'))) END
    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_log_head(p_topic_id, p_partition, p_after, p_below, p_limit) h
$fn$;

-- Smallest seq above p_after whose row is younger than p_cutoff (NULL when none): every row below it, and only
-- those, have a running maximum of enqueued_at older than the cutoff. One index range per priority.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_first_young_seq(
    p_topic_id bigint, p_partition int, p_after bigint, p_cutoff timestamptz)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
    SELECT min(x.enqueue_seq)
    FROM generate_series(0, __MAX_PRIORITY__) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT m.enqueue_seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition AND m.priority = pr.priority
          AND m.enqueue_seq > p_after AND m.enqueued_at >= p_cutoff
        ORDER BY m.enqueue_seq LIMIT 1
    ) x
$fn$;

-- One batch of compaction for one log partition: a key-map batch while rows above scanned_through exist, else one
-- batch of a cleaning pass (started only when due: dirty ratio, max.compaction.lag.ms, or a kept tombstone's
-- delete.retention.ms having run out). `more` says another call has work now; a non-compacted topic does nothing.
-- The compactable part ends at the lowest of: the anchor - 1, the key map's reach, the first row of the head, and
-- the lowest committed offset of the registered (unexpired) groups, as aggressive retention reads it (a registered
-- group with no offset, or STUCK_AHEAD, holds everything). No registered group: only the time rule applies.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_batch(
    p_topic_id bigint, p_partition int, p_limit int, p_expiry_seconds int DEFAULT 0)
RETURNS TABLE (scanned bigint, deleted bigint, tombstones bigint, more boolean)
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET jit = off
AS $fn$
DECLARE
    cfg record;
    st record;
    anchor bigint;
    hold bigint;
    young bigint;
    bound bigint;
    dirty bigint;
    oldest timestamptz;
    n bigint;
    last bigint;
    kept bigint;
    tomb_at timestamptz;
    del_parts oid[];
    del_ctids tid[];
    gone_keys bytea[];
    gone_seqs bigint[];
BEGIN
    scanned := 0; deleted := 0; tombstones := 0; more := false;
    SELECT s.* INTO cfg
    FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t
    CROSS JOIN LATERAL __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_settings(t.config) s
    WHERE t.id = p_topic_id AND p_partition < t.partition_count;
    IF NOT FOUND OR p_limit < 1 THEN
        RETURN NEXT;
        RETURN;
    END IF;
    INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state (topic_id, partition_id)
    VALUES (p_topic_id, p_partition) ON CONFLICT DO NOTHING;
    SELECT c.* INTO st FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state c
    WHERE c.topic_id = p_topic_id AND c.partition_id = p_partition;
    anchor := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, p_partition);
    IF anchor IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;

    -- phase 1: the key map. A visible seq implies every lower one is committed (seqs are handed out under a lock
    -- held until commit, by us and by DataHub's producers), so scanned_through never skips a row.
    IF st.scanned_through < anchor THEN
        WITH r AS (
            SELECT * FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_rows(
                p_topic_id, p_partition, st.scanned_through, anchor + 1, p_limit)
        ), latest AS (
            INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_key AS k (topic_id, partition_id, key_hash, last_seq)
            SELECT p_topic_id, p_partition, r.key_hash, max(r.seq) FROM r WHERE r.key_hash IS NOT NULL GROUP BY r.key_hash
            ON CONFLICT (topic_id, partition_id, key_hash) DO UPDATE SET last_seq = GREATEST(k.last_seq, EXCLUDED.last_seq)
        )
        SELECT count(*), max(r.seq) INTO n, last FROM r;
        IF n > 0 THEN
            UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state c SET scanned_through = last
            WHERE c.topic_id = p_topic_id AND c.partition_id = p_partition;
        END IF;
        scanned := n;
        -- a full batch: more to scan. Otherwise go on to clean in this call, so a steady stream of new rows cannot
        -- keep every call in this phase
        IF n >= p_limit THEN
            more := true;
            RETURN NEXT;
            RETURN;
        END IF;
        st.scanned_through := COALESCE(last, st.scanned_through);
    END IF;

    -- phase 2: start a cleaning pass when one is due
    IF st.pass_cursor IS NULL THEN
        SELECT CASE WHEN c.blocked_reason = 'no registered group' THEN NULL ELSE COALESCE(c.purge_through, 0) END
          INTO hold
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_consumed_through(p_topic_id, p_partition, p_expiry_seconds) c;
        young := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_first_young_seq(
            p_topic_id, p_partition, st.cleaned_through, now() - cfg.min_lag_ms * interval '1 millisecond');
        -- LEAST ignores NULL: no group, no young row
        bound := LEAST(st.scanned_through, anchor - 1, hold, young - 1);
        dirty := GREATEST(bound - st.cleaned_through, 0);
        IF dirty > 0 AND cfg.max_lag_ms IS NOT NULL THEN
            SELECT m.enqueued_at INTO oldest FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
            WHERE m.topic_id = p_topic_id AND m.partition_id = p_partition
              AND m.enqueue_seq = __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id, p_partition, st.cleaned_through)
            LIMIT 1;
        END IF;
        IF NOT (dirty > 0 AND dirty::float8 / (st.clean_rows + dirty) >= cfg.dirty_ratio
                OR COALESCE(dirty > 0 AND oldest < now() - cfg.max_lag_ms * interval '1 millisecond', false)
                OR COALESCE(st.oldest_tombstone_at < now() - cfg.delete_retention_ms * interval '1 millisecond' AND bound > 0, false)) THEN
            RETURN NEXT;
            RETURN;
        END IF;
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state c
        SET pass_cursor = 0, pass_bound = bound, pass_kept = 0, pass_oldest_tombstone_at = NULL
        WHERE c.topic_id = p_topic_id AND c.partition_id = p_partition;
        st.pass_cursor := 0; st.pass_bound := bound; st.pass_kept := 0; st.pass_oldest_tombstone_at := NULL;
    END IF;

    -- one batch of the pass: a row goes when the key map holds a later seq of its key, when it has no key, or when
    -- it is its key's latest row, a tombstone, and older than delete.retention.ms (the key then leaves the map)
    WITH r AS (
        SELECT r.*, k.last_seq,
               CASE WHEN r.key_hash IS NULL THEN true
                    WHEN k.last_seq > r.seq THEN true
                    WHEN r.flags & 1 <> 0 AND k.last_seq = r.seq
                         AND r.enqueued_at < now() - cfg.delete_retention_ms * interval '1 millisecond' THEN true
                    ELSE false END AS drop_it
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_compaction_rows(
            p_topic_id, p_partition, st.pass_cursor, st.pass_bound + 1, p_limit) r
        LEFT JOIN __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_key k
          ON k.topic_id = p_topic_id AND k.partition_id = p_partition AND k.key_hash = r.key_hash
    )
    SELECT count(*), max(r.seq), count(*) FILTER (WHERE NOT r.drop_it),
           min(r.enqueued_at) FILTER (WHERE NOT r.drop_it AND r.flags & 1 <> 0),
           array_agg(r.part) FILTER (WHERE r.drop_it), array_agg(r.row_ctid) FILTER (WHERE r.drop_it),
           array_agg(r.key_hash) FILTER (WHERE r.drop_it AND r.last_seq = r.seq),
           array_agg(r.seq) FILTER (WHERE r.drop_it AND r.last_seq = r.seq)
      INTO n, last, kept, tomb_at, del_parts, del_ctids, gone_keys, gone_seqs
    FROM r;
    IF del_parts IS NOT NULL THEN
        deleted := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_delete_located(del_parts, del_ctids);
    END IF;
    IF gone_keys IS NOT NULL THEN
        DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_key k
        USING unnest(gone_keys, gone_seqs) AS g(key_hash, seq)
        WHERE k.topic_id = p_topic_id AND k.partition_id = p_partition AND k.key_hash = g.key_hash AND k.last_seq = g.seq;
        tombstones := cardinality(gone_keys);
    END IF;
    IF n < p_limit THEN
        -- the pass reached its bound: what it kept is the clean part the dirty ratio compares against
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state c
        SET cleaned_through = st.pass_bound, clean_rows = st.pass_kept + kept, pass_cursor = NULL, pass_bound = NULL,
            pass_kept = 0, oldest_tombstone_at = LEAST(st.pass_oldest_tombstone_at, tomb_at), pass_oldest_tombstone_at = NULL
        WHERE c.topic_id = p_topic_id AND c.partition_id = p_partition;
    ELSE
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___compaction_state c
        SET pass_cursor = last, pass_kept = st.pass_kept + kept, pass_oldest_tombstone_at = LEAST(st.pass_oldest_tombstone_at, tomb_at)
        WHERE c.topic_id = p_topic_id AND c.partition_id = p_partition;
        more := true;
    END IF;
    RETURN NEXT;
END
$fn$;
