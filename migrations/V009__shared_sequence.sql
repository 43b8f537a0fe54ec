-- One sequence protocol with DataHub's producers (R__sequence_functions.sql, docs/decisions/002).

-- Provisional rows (negative seqs, numbered at COMMIT) found per partition without scanning the partition's rows:
-- the index holds only rows still waiting for their seq.
CREATE INDEX IF NOT EXISTS __PGQUEUE_PREFIX___message_provisional
    ON __PGQUEUE_PREFIX___message (topic_id, partition_id) WHERE enqueue_seq < 0;

-- Ledger rows for partitions DataHub's clients added before the triggers existed, past their stored rows; and
-- ledgers that fell behind rows DataHub wrote meanwhile.
INSERT INTO __PGQUEUE_PREFIX___partition_seq AS s (topic_id, partition_id, next_seq)
SELECT t.id, p.partition_id, COALESCE((
        SELECT MAX(m.enqueue_seq) FROM __PGQUEUE_PREFIX___message m
        WHERE m.topic_id = t.id AND m.partition_id = p.partition_id), 0) + 1
FROM __PGQUEUE_PREFIX___topic t
CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
ON CONFLICT (topic_id, partition_id) DO UPDATE SET next_seq = EXCLUDED.next_seq WHERE s.next_seq < EXCLUDED.next_seq;
