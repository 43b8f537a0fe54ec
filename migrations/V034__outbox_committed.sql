-- A staging transaction's ticket (V031) goes in a table of its own, inserted by its COMMIT's deferred trigger, instead
-- of being updated into its outbox_tx row: the update looked that row up inside the caller's transaction, and with
-- statistics saying outbox_tx is tiny (autovacuum between bursts) it was planned as a scan of the whole table, whose
-- predicate lock made concurrent SERIALIZABLE callers fail with 40001. An insert reads nothing.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___outbox_committed (
    tx_id bigint PRIMARY KEY,
    ticket bigint NOT NULL
);

-- locked first, so the copy below (a statement of its own: a snapshot taken after the lock) sees every transaction
-- that committed under the old trigger
LOCK TABLE __PGQUEUE_PREFIX___outbox_tx IN ACCESS EXCLUSIVE MODE;
INSERT INTO __PGQUEUE_PREFIX___outbox_committed (tx_id, ticket)
SELECT id, ticket FROM __PGQUEUE_PREFIX___outbox_tx WHERE ticket IS NOT NULL
ON CONFLICT DO NOTHING;
ALTER TABLE __PGQUEUE_PREFIX___outbox_tx DROP COLUMN IF EXISTS ticket;
