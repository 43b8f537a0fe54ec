-- What the message table's topic foreign key guaranteed, without its per-row check on our inserts (V033). See
-- docs/decisions/write-011-topic-guard-and-one-statement-sends.md.

-- Rows written by other clients (DataHub's producers: no kafka_flags bit 4) must name an existing topic, checked as
-- the foreign key did (the topic row is key-share locked until the writer commits, so a delete waits for it). The
-- error is the foreign key's: SQLSTATE 23503, constraint <prefix>_message_topic_id_fkey.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___check_message_topic()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    PERFORM 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t WHERE t.id = NEW.topic_id FOR KEY SHARE OF t;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'insert or update on table "%" violates foreign key constraint "%"', TG_TABLE_NAME, '__PGQUEUE_PREFIX___message_topic_id_fkey'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = '__PGQUEUE_PREFIX___message_topic_id_fkey',
                  DETAIL = pg_catalog.format('Key (topic_id)=(%s) is not present in table "%s".', NEW.topic_id, '__PGQUEUE_PREFIX___topic');
    END IF;
    RETURN NULL;
END
$fn$;

-- ON DELETE CASCADE of a topic to its messages. First waits for the writers of ours that hold one of its partitions'
-- ledger rows (they commit rows the delete must see; the ledger's own cascade waits for them too, in whichever order
-- the two triggers fire), then deletes with a snapshot taken after them.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___delete_topic_messages()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
BEGIN
    PERFORM 1 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_seq s WHERE s.topic_id = OLD.id FOR UPDATE OF s;
    DELETE FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message m WHERE m.topic_id = OLD.id;
    RETURN NULL;
END
$fn$;

REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___check_message_topic() FROM PUBLIC;
REVOKE ALL ON FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___delete_topic_messages() FROM PUBLIC;

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___check_message_topic ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message;
CREATE TRIGGER __PGQUEUE_PREFIX___check_message_topic
    AFTER INSERT OR UPDATE OF topic_id ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message
    FOR EACH ROW WHEN ((NEW.kafka_flags & 4) = 0)
    EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___check_message_topic();

DROP TRIGGER IF EXISTS __PGQUEUE_PREFIX___delete_topic_messages ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic;
CREATE TRIGGER __PGQUEUE_PREFIX___delete_topic_messages
    AFTER DELETE ON __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic
    FOR EACH ROW EXECUTE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___delete_topic_messages();
