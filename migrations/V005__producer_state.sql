-- Producer state for exactly-once: idempotent producers and transactional-id fencing.

-- The last producer sequence an idempotent producer wrote to a partition, and the enqueue_seq it got. A batch
-- retried after an ambiguous failure (the connection dropped during COMMIT) carries the same sequence and is
-- answered from here instead of being written twice. Rows of producers gone for a week are removed by maintenance.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___producer_sequence (
    producer_id text NOT NULL,
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    last_sequence bigint NOT NULL,
    last_base_seq bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (producer_id, topic_id, partition_id)
) WITH (fillfactor = 50);

-- One row per transactional id: a producer that starts with the same id bumps the epoch, and a transaction of
-- an older epoch (a zombie) is refused at commit.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___transactional_producer (
    transactional_id text PRIMARY KEY,
    producer_epoch bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);

-- The backend running this id's open transaction: a newer producer taking the id terminates it, as Kafka aborts a
-- zombie's open transaction, so the zombie's row locks cannot stall the successor.
ALTER TABLE __PGQUEUE_PREFIX___transactional_producer
    ADD COLUMN IF NOT EXISTS txn_backend_pid int,
    ADD COLUMN IF NOT EXISTS txn_started_at timestamptz;
