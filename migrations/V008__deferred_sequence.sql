-- Sequence numbers assigned at COMMIT for messages written inside a longer transaction (producer transactions,
-- the outbox). Such rows are inserted with a negative provisional enqueue_seq (never visible to a reader: it is
-- uncommitted, and readers only look above offsets >= 0); a deferred constraint trigger takes the real seq from
-- the partition's ledger when the transaction commits. The ledger row is then locked only for the commit itself,
-- so an open transaction no longer stalls other producers of the partition, and seq order is still commit order.

CREATE SEQUENCE IF NOT EXISTS __PGQUEUE_PREFIX___provisional_seq;

-- The first event of a (topic, partition) numbers all of this transaction's provisional rows there in one go (their
-- provisional values decrease in insertion order); later events find their row already numbered. Uncommitted rows of
-- other transactions are invisible here, so only this transaction's rows are touched.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___assign_deferred_seq()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = __PGQUEUE_SCHEMA__, public
AS $fn$
DECLARE
    pending bigint;
    first_seq bigint;
BEGIN
    PERFORM 1 FROM __PGQUEUE_PREFIX___message
    WHERE id = NEW.id AND enqueued_at = NEW.enqueued_at AND enqueue_seq < 0;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT count(*) INTO pending FROM __PGQUEUE_PREFIX___message
    WHERE topic_id = NEW.topic_id AND partition_id = NEW.partition_id AND enqueue_seq < 0;
    UPDATE __PGQUEUE_PREFIX___partition_seq SET next_seq = next_seq + pending
    WHERE topic_id = NEW.topic_id AND partition_id = NEW.partition_id
    RETURNING next_seq - pending INTO first_seq;
    IF first_seq IS NULL THEN
        RAISE EXCEPTION 'no sequence ledger row for topic % partition %', NEW.topic_id, NEW.partition_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    UPDATE __PGQUEUE_PREFIX___message m SET enqueue_seq = first_seq + p.rn - 1
    FROM (
        SELECT id, enqueued_at, row_number() OVER (ORDER BY enqueue_seq DESC) AS rn
        FROM __PGQUEUE_PREFIX___message
        WHERE topic_id = NEW.topic_id AND partition_id = NEW.partition_id AND enqueue_seq < 0
    ) p
    WHERE m.id = p.id AND m.enqueued_at = p.enqueued_at;
    RETURN NULL;
END
$fn$;

-- Row events fire at commit in insertion order, so a transaction's messages keep their order within a partition.
CREATE CONSTRAINT TRIGGER __PGQUEUE_PREFIX___deferred_seq
    AFTER INSERT ON __PGQUEUE_PREFIX___message
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.enqueue_seq < 0)
    EXECUTE FUNCTION __PGQUEUE_PREFIX___assign_deferred_seq();
