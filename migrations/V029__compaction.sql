-- Log compaction (cleanup.policy=compact, docs/compaction.md): what the maintenance step keeps between batches.
-- Additive: DataHub's clients never read these tables, and messages keep their layout (no index on the key is
-- added to the hot message table; the key map below is built by maintenance alone).

-- Kafka's offset map, kept: per log partition and key, the highest seq scanned so far. The key is stored as its
-- SHA-256 (keys can be larger than a B-tree entry; Kafka's cleaner keys its map by a digest too).
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___compaction_key (
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    key_hash bytea NOT NULL,
    last_seq bigint NOT NULL,
    PRIMARY KEY (topic_id, partition_id, key_hash)
);

-- Per log partition: how far the key map is built (scanned_through), how far the last completed cleaning pass
-- reached (cleaned_through) and how many rows it left (clean_rows, for min.cleanable.dirty.ratio), and the pass in
-- progress (pass_cursor / pass_bound, NULL when none) with what it kept so far.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___compaction_state (
    topic_id bigint NOT NULL REFERENCES __PGQUEUE_PREFIX___topic (id) ON DELETE CASCADE,
    partition_id int NOT NULL CHECK (partition_id >= 0),
    scanned_through bigint NOT NULL DEFAULT 0,
    cleaned_through bigint NOT NULL DEFAULT 0,
    clean_rows bigint NOT NULL DEFAULT 0,
    pass_cursor bigint,
    pass_bound bigint,
    pass_kept bigint NOT NULL DEFAULT 0,
    -- the oldest tombstone a pass kept (its delete.retention.ms had not run out): a pass is due when it runs out,
    -- even without dirty rows; kept as a time so a changed delete.retention.ms applies at once
    oldest_tombstone_at timestamptz,
    pass_oldest_tombstone_at timestamptz,
    PRIMARY KEY (topic_id, partition_id)
);
