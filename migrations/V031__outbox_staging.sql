-- Outbox sends from REPEATABLE READ and SERIALIZABLE transactions (docs/decisions/outbox-010-staged-numbering.md).
-- Such a transaction cannot take a seq from the ledger (its snapshot is older than the ledger row other writers move,
-- so the update fails with 40001), so its messages wait here, unnumbered, and move into the message table after the
-- caller's COMMIT, in commit order per partition, numbered by <prefix>_number_outbox (R__outbox_numbering.sql), which
-- any producer, consumer or maintenance run drives. DataHub's clients read only the message table: they never see
-- these rows. The caller's transaction only inserts here (no foreign key, no reads), so nothing in it conflicts with
-- other transactions.

-- One row per caller transaction that staged messages. ticket: taken at that transaction's COMMIT (a deferred
-- trigger), the order the numbering follows; a transaction whose COMMIT returned before another's began has the
-- smaller ticket.
CREATE SEQUENCE IF NOT EXISTS __PGQUEUE_PREFIX___outbox_tx_id;
CREATE SEQUENCE IF NOT EXISTS __PGQUEUE_PREFIX___outbox_ticket;
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___outbox_tx (
    id bigint PRIMARY KEY,
    ticket bigint,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The staged messages: the columns the message table gets, plus the transaction. id keeps the send order.
CREATE TABLE IF NOT EXISTS __PGQUEUE_PREFIX___outbox_message (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx_id bigint NOT NULL,
    topic_id bigint NOT NULL,
    partition_id int NOT NULL,
    routing_key text NOT NULL,
    priority smallint NOT NULL,
    payload bytea NOT NULL,
    payload_compression smallint NOT NULL,
    headers jsonb,
    kafka_flags smallint NOT NULL,
    message_key bytea,
    message_timestamp bigint
);
CREATE INDEX IF NOT EXISTS __PGQUEUE_PREFIX___outbox_message_tx ON __PGQUEUE_PREFIX___outbox_message (tx_id);
