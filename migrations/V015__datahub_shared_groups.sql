-- Consumer groups shared with DataHub's own consumers (docs/compatibility.md, "Sharing with DataHub"). Additive:
-- DataHub's clients neither read nor write these columns.

-- The offset_value a consumer of ours wrote as its starting position before the group committed anything. Such a row
-- reads as "nothing committed" (Kafka's -1) only while committed_at is NULL and offset_value is still this value:
-- DataHub's commit_for_group moves offset_value and leaves our columns alone, and that is a commit like any other.
ALTER TABLE __PGQUEUE_PREFIX___consumer_offset
    ADD COLUMN IF NOT EXISTS start_offset bigint;

-- When a consumer of this library last refreshed the registration. DataHub's poll loop refreshes last_heartbeat_at
-- alone, so a last_heartbeat_at later than this one is a DataHub consumer polling the group.
ALTER TABLE __PGQUEUE_PREFIX___consumer_registration
    ADD COLUMN IF NOT EXISTS library_heartbeat_at timestamptz;
