-- admin.resetOffsets / setOffsets with '-1' (latest) or '-2' (earliest) store that marker on Kafka: fetchOffsets
-- reports it until the group commits, and the next consumer resolves it with its own fromBeginning (KafkaJS treats a
-- negative committed offset as none). offset_value keeps the watermark the marker meant at reset time, so DataHub's
-- readers of this table (which know no markers) start where the reset pointed; start_offset (V015) holds it too, so
-- a DataHub commit that moves offset_value past it ends the marker as a commit of ours does.
ALTER TABLE __PGQUEUE_PREFIX___consumer_offset
    ADD COLUMN IF NOT EXISTS reset_to smallint
        CONSTRAINT __PGQUEUE_PREFIX___consumer_offset_reset_to CHECK (reset_to IN (-1, -2));
