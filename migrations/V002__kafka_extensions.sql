-- What the KafkaJS API needs beyond DataHub's V001. Additive: DataHub clients ignore these columns and tables.

-- Kafka message fields DataHub rows do not carry. kafka_flags bit 1 = value is null (tombstone; payload is empty),
-- bit 2 = key is null. message_key holds the key bytes only when routing_key (text) cannot represent them.
-- message_timestamp is the producer's timestamp in ms when it gave one; otherwise enqueued_at is the timestamp.
ALTER TABLE __PGQUEUE_PREFIX___message
    ADD COLUMN IF NOT EXISTS kafka_flags smallint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS message_key bytea,
    ADD COLUMN IF NOT EXISTS message_timestamp bigint;

-- Lease and ack rows must never block dropping an old message partition (DataHub bug: DETACH fails on the FK).
-- Orphaned lease rows are swept by maintenance instead.
ALTER TABLE __PGQUEUE_PREFIX___message_group_lease
    DROP CONSTRAINT IF EXISTS __PGQUEUE_PREFIX___message_group_lease_msg_fk;

-- Per-partition sequence ledger: the next enqueue_seq to hand out. Lives apart from message rows, so retention
-- can empty a partition without the sequence restarting (DataHub's MAX(enqueue_seq)+1 restarts at 1 and leaves
-- every consumer STUCK_AHEAD). The row lock taken by the allocating UPDATE serialises producers of one partition
-- until commit, so sequence order is commit order and a rollback leaves no gap.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___partition_seq (
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    next_seq bigint NOT NULL DEFAULT 1 CHECK (next_seq >= 1),
    epoch bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (topic_id, partition_id)
) WITH (fillfactor = 50);

-- Seed the ledger for topics that already hold messages (tables DataHub created before this migration).
INSERT INTO __PGQUEUE_PREFIX___partition_seq (topic_id, partition_id, next_seq)
SELECT t.id, p.partition_id, COALESCE((
        SELECT MAX(m.enqueue_seq) FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = t.id AND m.partition_id = p.partition_id), 0) + 1
FROM __PGQUEUE_PREFIX___topic t
CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
ON CONFLICT DO NOTHING;

-- Kafka topic configuration entries (createTopics configEntries), kept as given.
ALTER TABLE __PGQUEUE_PREFIX___topic
    ADD COLUMN IF NOT EXISTS config jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Kafka commit metadata, and per-priority progress: with priorities a partition is consumed in priority order, so
-- each priority has its own processed-through seq; offset_value stays the contiguous watermark across all of them.
-- committed_at is NULL for a starting position the consumer wrote before the group committed anything: admin
-- reports such a row as '-1' (nothing committed), as Kafka does.
ALTER TABLE __PGQUEUE_PREFIX___consumer_offset
    ADD COLUMN IF NOT EXISTS metadata text,
    ADD COLUMN IF NOT EXISTS priority_offsets bigint[],
    ADD COLUMN IF NOT EXISTS committed_at timestamptz;

-- Group membership (KafkaJS consumer groups without a coordinator): members heartbeat here, and each member
-- derives the same partition assignment from the live member set.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___group_member (
    consumer_group text NOT NULL,
    member_id text NOT NULL,
    client_id text NOT NULL,
    client_host text NOT NULL,
    topics text[] NOT NULL DEFAULT '{}',
    session_timeout_ms int NOT NULL CHECK (session_timeout_ms > 0),
    joined_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, member_id)
) WITH (fillfactor = 50);

-- One lease per (group, topic, partition): the member holding it is the only one fetching that partition for the
-- group, exactly as a Kafka partition assignment. It expires after the member's session timeout unless renewed.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___partition_lease (
    consumer_group text NOT NULL,
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    lock_owner text NOT NULL,
    locked_until timestamptz NOT NULL,
    PRIMARY KEY (consumer_group, topic_id, partition_id)
) WITH (fillfactor = 50);
