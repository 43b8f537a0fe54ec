-- Outbox sends from REPEATABLE READ and SERIALIZABLE transactions (V031, docs/decisions/outbox-010-staged-numbering.md):
-- the caller's transaction stages its messages unnumbered; after its COMMIT the numbering step moves them into the
-- message table with seqs from the partition's ledger, under DataHub's lock, as every writer of ours does
-- (R__sequence_functions.sql). Every function runs with search_path pinned and qualifies every name.

-- The caller transaction's outbox id, its row made by the first staged send. Nothing is read from a table (the
-- setting says whether the row exists), so a SERIALIZABLE caller takes no predicate lock on our tables and a
-- REPEATABLE READ one never meets a row another transaction changed. A rolled-back savepoint undoes the row and the
-- setting together. The setting's name is one per schema + prefix.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_begin()
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    setting constant text := 'pgqueue.outbox_' || pg_catalog.left(pg_catalog.md5('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX__'), 16);
    current text := pg_catalog.current_setting(setting, true);
    tx bigint;
BEGIN
    IF current IS NOT NULL AND current <> '' THEN
        RETURN current::bigint;
    END IF;
    tx := pg_catalog.nextval('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_tx_id');
    INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_tx (id) VALUES (tx);
    PERFORM pg_catalog.set_config(setting, tx::text, true);
    RETURN tx;
END
$fn$;

-- Deferred trigger on outbox_tx: at the caller's COMMIT the transaction takes its ticket, the order its messages are
-- numbered in. Tickets follow real time: a transaction that began committing after another's COMMIT returned has a
-- larger one. It inserts the ticket (V034) and reads nothing: an update of the caller's row had to find it first, and
-- a SERIALIZABLE caller's lookup (a whole-table scan when outbox_tx is small) took a predicate lock others conflicted with.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_ticket()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_committed (tx_id, ticket)
    VALUES (NEW.id, pg_catalog.nextval('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_ticket'));
    RETURN NULL;
END
$fn$;

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___outbox_ticket ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_tx;
CREATE CONSTRAINT TRIGGER __PGQUEUE_PREFIX___outbox_ticket
    AFTER INSERT ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_tx
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_ticket();

-- The numbering step, one short READ COMMITTED transaction: up to p_max_tx committed outbox transactions (the rows
-- this statement sees; open ones are invisible and wait for a later step), oldest ticket first, move into the message
-- table. The partitions' locks are taken in (topic_id, partition_id) order, as every multi-partition writer of ours
-- takes them; a transaction another step numbered while this one waited is gone when the locks are held, so two
-- steps at once number each message once. Within a partition the messages get consecutive seqs by (ticket, send
-- order): commit order between transactions, send order within one. Listeners of each topic are notified (delivered
-- at this step's COMMIT). Returns the number of transactions numbered. A crash anywhere rolls the whole step back.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___number_outbox(p_max_tx int DEFAULT 100, p_channel text DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    -- the client passes the channel (long names are hashed there); a caller without it (pg_cron) notifies when short
    channel constant text := COALESCE(p_channel,
        CASE WHEN pg_catalog.length('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX__') <= 63 THEN '__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX__' END);
    txs bigint[];
    topics bigint[] := '{}';
    part record;
    holding boolean := false;
    first_seq bigint;
BEGIN
    SELECT pg_catalog.array_agg(x.id) INTO txs FROM (
        SELECT c.tx_id AS id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_committed c ORDER BY c.ticket LIMIT p_max_tx
    ) x;
    IF txs IS NULL THEN
        RETURN 0;
    END IF;
    -- messages of a topic deleted since they were staged go with it
    DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_message m
    WHERE m.tx_id = ANY (txs)
      AND NOT EXISTS (SELECT 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t WHERE t.id = m.topic_id);
    FOR part IN
        SELECT DISTINCT m.topic_id, m.partition_id FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_message m
        WHERE m.tx_id = ANY (txs) ORDER BY 1, 2
    LOOP
        PERFORM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___lock_partition(part.topic_id, part.partition_id, holding);
        holding := true;
    END LOOP;
    -- what is still staged now that the locks are held (a step that held them first numbered and deleted the rest)
    SELECT pg_catalog.array_agg(c.tx_id) INTO txs FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_committed c WHERE c.tx_id = ANY (txs);
    IF txs IS NULL THEN
        RETURN 0;
    END IF;
    FOR part IN
        SELECT m.topic_id, m.partition_id, pg_catalog.count(*) AS n FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_message m
        WHERE m.tx_id = ANY (txs) GROUP BY 1, 2 ORDER BY 1, 2
    LOOP
        first_seq := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___take_seq(part.topic_id, part.partition_id, part.n, true);
        -- kafka_flags bit 4: numbered from the ledger (the DataHub-row trigger skips it)
        INSERT INTO __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message
            (topic_id, partition_id, routing_key, enqueue_seq, priority, payload, payload_compression, headers, kafka_flags,
             message_key, message_timestamp)
        SELECT m.topic_id, m.partition_id, m.routing_key,
               first_seq + pg_catalog.row_number() OVER (ORDER BY c.ticket, m.id) - 1,
               m.priority, m.payload, m.payload_compression, m.headers, m.kafka_flags | 4, m.message_key, m.message_timestamp
        FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_message m
        JOIN __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_committed c ON c.tx_id = m.tx_id
        WHERE m.tx_id = ANY (txs) AND m.topic_id = part.topic_id AND m.partition_id = part.partition_id;
        IF NOT part.topic_id = ANY (topics) THEN
            topics := topics || part.topic_id;
        END IF;
    END LOOP;
    DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_message m WHERE m.tx_id = ANY (txs);
    DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_tx o WHERE o.id = ANY (txs);
    DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_committed c WHERE c.tx_id = ANY (txs);
    IF channel IS NOT NULL THEN
        PERFORM pg_catalog.pg_notify(channel, t::text) FROM pg_catalog.unnest(topics) AS t;
    END IF;
    RETURN pg_catalog.cardinality(txs);
END
$fn$;

REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_begin() FROM PUBLIC;
REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___outbox_ticket() FROM PUBLIC;
REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___number_outbox(int, text) FROM PUBLIC;
