-- Failed handler attempts per (group, message) for the dead-letter extension (src/deadLetter/): a consumer that
-- restarts mid-retry continues the count instead of starting over, so a poison message reaches its dead-letter
-- topic after maxAttempts attempts in all, however often the process dies. A row lives only while its message is
-- failing: it is deleted when the message succeeds or is dead-lettered.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___delivery_attempt (
    consumer_group text NOT NULL,
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    enqueue_seq bigint NOT NULL,
    attempts int NOT NULL CHECK (attempts > 0),
    last_error text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic_id, partition_id, enqueue_seq)
);
