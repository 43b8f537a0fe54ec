-- Sequence allocation shared with DataHub's own producers (docs/decisions/002). DataHub takes
-- pg_advisory_xact_lock(<key of topic:partition>) and writes MAX(enqueue_seq)+1 without touching our ledger; every
-- write of ours takes the same lock, in (topic_id, partition_id) order, and allocates from the ledger, which the
-- triggers below keep above every stored row (DataHub's included). Sequence order is commit order: the lock is held
-- until the writer's transaction ends. Only READ COMMITTED writers: a statement inside a plpgsql function sees what
-- committed before it, so a query made after taking the lock sees the previous holder's rows.
-- Every function runs with search_path pinned to pg_catalog, the queue schema, pg_temp, and qualifies every name.

-- DataHub's key (reference §3, test vectors §12): the first 8 bytes of SHA-256("<topicId>:<partitionId>") as an
-- unsigned big-endian integer, mod 2^62 (= its low 62 bits, so the signed reading masked gives the same number).
-- plpgsql, not sql: a sql function with a SET clause is never inlined and is parsed and planned again in every
-- transaction that calls it (most of a small send's server time); plpgsql keeps its plans for the session.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_key(p_topic_id bigint, p_partition int)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    RETURN ('x' || left(encode(sha256(convert_to(p_topic_id::text || ':' || p_partition::text, 'UTF8')), 'hex'), 16))::bit(64)::bigint
           & 4611686018427387903;
END
$fn$;

-- DataHub's lock for one partition, held to the end of the transaction. p_holding: the transaction already holds
-- other partitions' locks (the commit-time numbering of several partitions). Ours are all taken in one order, but
-- DataHub's enqueue_batch takes its locks in message order, so a wait while holding may be half of a cycle with it.
-- Such a wait goes in slices of half of deadlock_timeout; before each slice the holders' wait chains are searched for
-- this backend, and only a cycle through it gives up (55P03, retriable), so we, not DataHub's producer, are the one
-- to yield before PostgreSQL's detector picks a victim. A holder that is merely slow (a loaded machine, a long
-- transaction of another schema: the key has no schema in it) is waited for, up to the session's own lock_timeout.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_partition(p_topic_id bigint, p_partition int, p_holding boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    key constant bigint := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_key(p_topic_id, p_partition);
    previous text;
    slice bigint;
    budget bigint;
    remaining bigint;
    started timestamptz;
BEGIN
    IF NOT p_holding THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(key);
        RETURN;
    END IF;
    IF pg_catalog.pg_try_advisory_xact_lock(key) THEN
        RETURN;
    END IF;
    previous := pg_catalog.current_setting('lock_timeout');
    budget := (extract(epoch FROM previous::interval) * 1000)::bigint; -- 0: the session sets no bound of its own
    slice := greatest(10, (extract(epoch FROM pg_catalog.current_setting('deadlock_timeout')::interval) * 500)::bigint);
    started := pg_catalog.clock_timestamp();
    LOOP
        -- checked before each slice, so a cycle that a holder closed before this wait began is seen at once
        IF __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_waits_for_me(key) THEN
            PERFORM pg_catalog.set_config('lock_timeout', previous, true);
            RAISE EXCEPTION 'lock of partition % of topic % not taken: its holder waits for this transaction', p_partition, p_topic_id
                USING ERRCODE = 'lock_not_available',
                      HINT = 'retriable, nothing was written: DataHub''s enqueue_batch locks partitions in message order';
        END IF;
        IF budget > 0 THEN
            remaining := budget - (extract(epoch FROM pg_catalog.clock_timestamp() - started) * 1000)::bigint;
            IF remaining <= 0 THEN
                PERFORM pg_catalog.set_config('lock_timeout', previous, true);
                RAISE EXCEPTION 'canceling statement due to lock timeout' USING ERRCODE = 'lock_not_available';
            END IF;
        END IF;
        PERFORM pg_catalog.set_config('lock_timeout', (CASE WHEN budget > 0 THEN least(slice, remaining) ELSE slice END)::text, true);
        BEGIN
            PERFORM pg_catalog.pg_advisory_xact_lock(key);
            PERFORM pg_catalog.set_config('lock_timeout', previous, true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            NULL; -- the slice ended: look for a cycle again
        END;
    END LOOP;
END
$fn$;

-- Whether a holder of the advisory lock `p_key` waits, directly or through others, for a lock this backend holds:
-- the wait would close a cycle. Read from ONE snapshot of pg_locks, not pg_blocking_pids: each call of that takes
-- its own, so a holder that committed meanwhile and, on the same connection, asked for one of our locks looked like a
-- cycle (one lockOrder.test.ts run in CI). Only a granted lock in a conflicting mode is an edge: pg_blocking_pids also
-- names waiters queued ahead, and a holder queued behind DDL that waits for us is no cycle, PostgreSQL's deadlock
-- check lets it go ahead of the DDL. Conflicts are PostgreSQL's table (lock.c), mode i as bit i-1.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_waits_for_me(p_key bigint)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    WITH RECURSIVE modes(mode, bit, conflicts) AS (
        VALUES ('AccessShareLock', 1, 128), ('RowShareLock', 2, 192), ('RowExclusiveLock', 4, 240),
               ('ShareUpdateExclusiveLock', 8, 248), ('ShareLock', 16, 236), ('ShareRowExclusiveLock', 32, 252),
               ('ExclusiveLock', 64, 254), ('AccessExclusiveLock', 128, 255)
    ), locks AS MATERIALIZED (
        SELECT l.locktype, l.database, l.relation, l.page, l.tuple, l.virtualxid, l.transactionid, l.classid, l.objid,
               l.objsubid, l.pid, l.granted, m.bit, m.conflicts
        FROM pg_catalog.pg_locks l JOIN modes m ON m.mode = l.mode
        WHERE l.pid IS NOT NULL
    ), edges AS MATERIALIZED (
        SELECT DISTINCT w.pid AS waiter, h.pid AS holder
        FROM locks w JOIN locks h
          ON h.granted AND h.pid <> w.pid AND (w.conflicts & h.bit) <> 0
         AND h.locktype = w.locktype AND h.database IS NOT DISTINCT FROM w.database
         AND h.relation IS NOT DISTINCT FROM w.relation AND h.page IS NOT DISTINCT FROM w.page
         AND h.tuple IS NOT DISTINCT FROM w.tuple AND h.virtualxid IS NOT DISTINCT FROM w.virtualxid
         AND h.transactionid IS NOT DISTINCT FROM w.transactionid AND h.classid IS NOT DISTINCT FROM w.classid
         AND h.objid IS NOT DISTINCT FROM w.objid AND h.objsubid IS NOT DISTINCT FROM w.objsubid
        WHERE NOT w.granted
    ), chain(pid) AS (
        SELECT l.pid FROM locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
          AND l.classid = ((p_key >> 32) & 4294967295)::oid AND l.objid = (p_key & 4294967295)::oid AND l.objsubid = 1
        UNION
        SELECT e.holder FROM chain c JOIN edges e ON e.waiter = c.pid
    )
    SELECT EXISTS (SELECT 1 FROM chain WHERE pid = pg_catalog.pg_backend_pid())
$fn$;

-- Takes p_count seqs of one partition under DataHub's lock; returns the first. A partition with no ledger row (made
-- by a client that keeps none) is seeded here, in the writer's own transaction, past its stored rows.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___take_seq(p_topic_id bigint, p_partition int, p_count bigint, p_holding boolean)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    first_seq bigint;
BEGIN
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_partition(p_topic_id, p_partition, p_holding);
    UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s SET next_seq = s.next_seq + p_count
    WHERE s.topic_id = p_topic_id AND s.partition_id = p_partition
    RETURNING s.next_seq - p_count INTO first_seq;
    IF first_seq IS NULL THEN
        INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq AS s (topic_id, partition_id, next_seq)
        VALUES (p_topic_id, p_partition,
                -- GREATEST: this transaction's own provisional rows (negative) are visible here
                GREATEST(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(p_topic_id, p_partition), 0) + 1 + p_count)
        ON CONFLICT (topic_id, partition_id) DO UPDATE SET next_seq = s.next_seq + p_count
        RETURNING s.next_seq - p_count INTO first_seq;
    END IF;
    RETURN first_seq;
END
$fn$;

-- A send's allocation (one call per partition and statement): the first seq, whether the batch had been written, and
-- where the partition's log starts (its first stored seq before this write, for logStartOffset; NULL when empty).
-- Idempotent producers pass their id and the batch's last sequence: the duplicate check runs after the lock is held,
-- so a retry that waited behind its own first attempt (whose connection dropped) sees that attempt's commit and is
-- answered with its offsets instead of writing twice. ROWS 1: with the default estimate (1,000 rows) the send's prepared
-- statement kept a custom plan for small sends and was planned again at every execution.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___allocate_seq(
    p_topic_id bigint, p_partition int, p_count bigint, p_producer_id text DEFAULT NULL, p_last_sequence bigint DEFAULT NULL)
RETURNS TABLE (first_seq bigint, duplicate boolean, low_seq bigint)
LANGUAGE plpgsql
ROWS 1
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    seq bigint;
    low bigint;
BEGIN
    PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_partition(p_topic_id, p_partition, false);
    low := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_next_seq_after(p_topic_id, p_partition, 0);
    IF p_producer_id IS NOT NULL THEN
        SELECT ps.last_base_seq INTO seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___producer_sequence ps
        WHERE ps.producer_id = p_producer_id AND ps.topic_id = p_topic_id AND ps.partition_id = p_partition
          AND ps.last_sequence >= p_last_sequence;
        IF FOUND THEN
            RETURN QUERY SELECT seq, true, low;
            RETURN;
        END IF;
    END IF;
    seq := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___take_seq(p_topic_id, p_partition, p_count, false);
    IF p_producer_id IS NOT NULL THEN
        INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___producer_sequence AS ps
            (producer_id, topic_id, partition_id, last_sequence, last_base_seq)
        VALUES (p_producer_id, p_topic_id, p_partition, p_last_sequence, seq)
        ON CONFLICT (producer_id, topic_id, partition_id) DO UPDATE
            SET last_sequence = EXCLUDED.last_sequence, last_base_seq = EXCLUDED.last_base_seq, updated_at = pg_catalog.now();
    END IF;
    RETURN QUERY SELECT seq, false, low;
END
$fn$;

-- A send over several partitions, in one statement (src/store/enqueueMany.ts, docs/decisions/write-011): the
-- partitions come in (topic_id, partition_id) order, the global order every multi-partition writer of ours takes
-- DataHub's locks in; the first lock blocks, the others are taken with lock_partition's wait while holding, which
-- gives up only on a cycle (DataHub's enqueue_batch locks in message order). Then every ledger row moves in one UPDATE
-- (partitions without one are seeded by take_seq) and each partition's log start before this write is read in one
-- query. Returns, per input position, the first seq and the log start (NULL when the partition held no rows).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___allocate_partitions(
    p_topic_ids bigint[], p_partitions int[], p_counts bigint[])
RETURNS TABLE (first_seqs bigint[], low_seqs bigint[])
LANGUAGE plpgsql
ROWS 1
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    n constant int := pg_catalog.cardinality(p_topic_ids);
    keys bigint[];
    firsts bigint[];
    lows bigint[];
BEGIN
    SELECT pg_catalog.array_agg(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_key(c.t, c.p) ORDER BY c.i) INTO keys
    FROM unnest(p_topic_ids, p_partitions) WITH ORDINALITY AS c(t, p, i);
    FOR i IN 1..n LOOP
        IF i = 1 THEN
            PERFORM pg_catalog.pg_advisory_xact_lock(keys[i]);
        ELSIF NOT pg_catalog.pg_try_advisory_xact_lock(keys[i]) THEN
            PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_partition(p_topic_ids[i], p_partitions[i], true);
        END IF;
    END LOOP;
    -- the log starts, before this write's rows exist (multi-argument unnest is FROM-clause syntax: not schema-qualified)
    SELECT pg_catalog.array_agg((
        SELECT m.enqueue_seq FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = c.t AND m.partition_id = c.p AND m.enqueue_seq > 0
        ORDER BY m.enqueue_seq LIMIT 1) ORDER BY c.i) INTO lows
    FROM unnest(p_topic_ids, p_partitions) WITH ORDINALITY AS c(t, p, i);
    WITH moved AS (
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s SET next_seq = s.next_seq + c.cnt
        FROM unnest(p_topic_ids, p_partitions, p_counts) AS c(t, p, cnt)
        WHERE s.topic_id = c.t AND s.partition_id = c.p
        RETURNING s.topic_id, s.partition_id, s.next_seq - c.cnt AS first_seq
    )
    SELECT pg_catalog.array_agg(m.first_seq ORDER BY c.i) INTO firsts
    FROM unnest(p_topic_ids, p_partitions) WITH ORDINALITY AS c(t, p, i)
    LEFT JOIN moved m ON m.topic_id = c.t AND m.partition_id = c.p;
    FOR i IN 1..n LOOP
        IF firsts[i] IS NULL THEN
            firsts[i] := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___take_seq(p_topic_ids[i], p_partitions[i], p_counts[i], true);
        END IF;
    END LOOP;
    RETURN QUERY SELECT firsts, lows;
END
$fn$;

-- Name of the transaction-local setting listing the partitions ("topic:partition,...") that hold this transaction's
-- provisional rows; 'done' once they are numbered. One per schema + prefix.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___pending_setting()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    SELECT 'pgqueue.pending_' || left(md5('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX__'), 16)
$fn$;

-- Called by a send inside a caller's transaction, before its provisional rows are inserted: records the partition for
-- the commit-time numbering. false for isolation levels whose snapshot would make the commit-time allocation fail
-- (40001) or miss rows committed meanwhile: such a send stages its messages instead (R__outbox_numbering.sql).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___defer_partition(p_topic_id bigint, p_partition int)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    setting constant text := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___pending_setting();
    entry constant text := p_topic_id::text || ':' || p_partition::text;
    pending text := pg_catalog.current_setting(setting, true);
    isolation constant text := pg_catalog.current_setting('transaction_isolation');
BEGIN
    IF isolation <> 'read committed' THEN
        RETURN false;
    END IF;
    IF pending IS NULL OR pending IN ('', 'done') THEN
        pending := entry;
    ELSIF pg_catalog.strpos(',' || pending || ',', ',' || entry || ',') = 0 THEN
        pending := pending || ',' || entry;
    ELSE
        RETURN true;
    END IF;
    PERFORM pg_catalog.set_config(setting, pending, true);
    RETURN true;
END
$fn$;

-- The deferred constraint trigger of V008: at COMMIT the first event numbers every provisional row of this
-- transaction, partition by partition in (topic_id, partition_id) order whatever order they were written in, so two
-- committing transactions always take the locks in the same order and cannot deadlock. Later events return at once.
-- Provisional values decrease in insertion order, so a transaction's rows keep their order within a partition.
-- Uncommitted rows of other transactions are invisible here: only this transaction's rows are touched.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___assign_deferred_seq()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    setting constant text := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___pending_setting();
    pending text := pg_catalog.current_setting(setting, true);
    part record;
    n bigint;
    first_seq bigint;
    holding boolean := false;
BEGIN
    IF pending = 'done' THEN
        RETURN NULL;
    END IF;
    -- no list: rows queued by a writer of an older version; number this row's partition
    IF pending IS NULL OR pending = '' THEN
        pending := NEW.topic_id::text || ':' || NEW.partition_id::text;
    END IF;
    FOR part IN
        SELECT DISTINCT pg_catalog.split_part(e, ':', 1)::bigint AS topic_id, pg_catalog.split_part(e, ':', 2)::int AS partition_id
        FROM pg_catalog.unnest(pg_catalog.string_to_array(pending, ',')) AS e
        ORDER BY 1, 2
    LOOP
        SELECT count(*) INTO n FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m
        WHERE m.topic_id = part.topic_id AND m.partition_id = part.partition_id AND m.enqueue_seq < 0;
        CONTINUE WHEN n = 0;
        first_seq := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___take_seq(part.topic_id, part.partition_id, n, holding);
        holding := true;
        UPDATE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m SET enqueue_seq = first_seq + p.rn - 1
        FROM (
            SELECT x.id, x.enqueued_at, row_number() OVER (ORDER BY x.enqueue_seq DESC) AS rn
            FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message x
            WHERE x.topic_id = part.topic_id AND x.partition_id = part.partition_id AND x.enqueue_seq < 0
        ) p
        WHERE m.id = p.id AND m.enqueued_at = p.enqueued_at;
    END LOOP;
    PERFORM pg_catalog.set_config(setting, 'done', true);
    RETURN NULL;
END
$fn$;

-- Row trigger on message inserts by other clients: rows written by DataHub's producers (MAX+1 under the advisory lock,
-- no ledger update) move the ledger past them, in their own transaction and under the lock they hold, so watermarks,
-- commits, start positions and our next allocation all see them. Rows of ours carry kafka_flags bit 4 ("numbered
-- from the ledger", see FLAG_FROM_LEDGER in src/store/enqueue.ts) and are skipped by the WHEN clause, so the trigger
-- costs our inserts nothing (a statement trigger's transition table halved our 1,000-row batches).
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___advance_ledger()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq AS s (topic_id, partition_id, next_seq)
    VALUES (NEW.topic_id, NEW.partition_id, NEW.enqueue_seq + 1)
    ON CONFLICT (topic_id, partition_id) DO UPDATE SET next_seq = EXCLUDED.next_seq
        WHERE s.next_seq < EXCLUDED.next_seq;
    RETURN NULL;
END
$fn$;

-- Row trigger on the topic catalogue: topics and partitions that only DataHub's clients created (ensure_topic, its
-- partition-count upsert) get their ledger rows in the creating transaction, past any rows already stored there.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___seed_topic_ledger()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq (topic_id, partition_id, next_seq)
    SELECT NEW.id, p, GREATEST(__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___maintenance_max_seq(NEW.id, p), 0) + 1
    FROM pg_catalog.generate_series(CASE WHEN TG_OP = 'UPDATE' THEN OLD.partition_count ELSE 0 END, NEW.partition_count - 1) AS p
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$fn$;

REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___assign_deferred_seq() FROM PUBLIC;
REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___advance_ledger() FROM PUBLIC;
REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___seed_topic_ledger() FROM PUBLIC;

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___advance_ledger ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message;
CREATE TRIGGER __PGQUEUE_PREFIX___advance_ledger
    AFTER INSERT ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message
    FOR EACH ROW WHEN (NEW.enqueue_seq > 0 AND (NEW.kafka_flags & 4) = 0)
    EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___advance_ledger();

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___seed_topic_ledger ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic;
CREATE TRIGGER __PGQUEUE_PREFIX___seed_topic_ledger
    AFTER INSERT ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic
    FOR EACH ROW EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___seed_topic_ledger();

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___seed_grown_ledger ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic;
CREATE TRIGGER __PGQUEUE_PREFIX___seed_grown_ledger
    AFTER UPDATE OF partition_count ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic
    FOR EACH ROW WHEN (NEW.partition_count > OLD.partition_count)
    EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___seed_topic_ledger();
