-- The message table's topic foreign key goes (docs/decisions/write-011-topic-guard-and-one-statement-sends.md): its
-- per-row check was a third of an insert's server time. What it guaranteed stays, more cheaply:
--   * a row of ours (kafka_flags bit 4) is numbered from its partition's ledger row, which has the same foreign key
--     (ON DELETE CASCADE): the ledger update locks that row until the writer commits, so the topic exists while the
--     rows go in and a topic delete waits for the writer, then deletes its rows (R__topic_guard.sql);
--   * every other row (DataHub's clients) is checked by a row trigger, as the foreign key did;
--   * a topic delete deletes its messages (the trigger replacing ON DELETE CASCADE).
-- Whatever its name (P_message_topic_id_fkey unless the prefix made it longer than 63 bytes).
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT con.conname FROM pg_catalog.pg_constraint con
        WHERE con.conrelid = '__PGQUEUE_PREFIX___message'::regclass AND con.contype = 'f'
          AND con.confrelid = '__PGQUEUE_PREFIX___topic'::regclass
    LOOP
        EXECUTE format('ALTER TABLE __PGQUEUE_PREFIX___message DROP CONSTRAINT %I', c.conname);
    END LOOP;
END
$$;
