-- Native range partitions for the message table, so pgQueue works without pg_partman (managed PostgreSQL, the
-- embedded server). Partition width and premake come from DATAHUB_PGQUEUE_RETENTION_PARTMAN_INTERVAL / _PREMAKE;
-- changing them changes this script's checksum, so the function is redefined and new partitions use the new width.

CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___partition_floor(p_at timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE
AS $fn$
    -- Start of the partition holding p_at, computed in UTC so every session agrees whatever its TimeZone.
    SELECT CASE '__PARTITION_INTERVAL__'
        WHEN '1 hour'   THEN date_trunc('hour', p_at AT TIME ZONE 'UTC')
        WHEN '6 hours'  THEN date_trunc('day', p_at AT TIME ZONE 'UTC')
                             + (floor(extract(hour FROM p_at AT TIME ZONE 'UTC') / 6) * interval '6 hours')
        WHEN '12 hours' THEN date_trunc('day', p_at AT TIME ZONE 'UTC')
                             + (floor(extract(hour FROM p_at AT TIME ZONE 'UTC') / 12) * interval '12 hours')
        WHEN '1 day'    THEN date_trunc('day', p_at AT TIME ZONE 'UTC')
        WHEN '1 week'   THEN date_trunc('week', p_at AT TIME ZONE 'UTC')
        WHEN '1 month'  THEN date_trunc('month', p_at AT TIME ZONE 'UTC')
    END AT TIME ZONE 'UTC'
$fn$;

-- Creates the partition holding p_at and the next __PARTITION_PREMAKE__ ones when missing; returns how many it made.
-- Safe to call from many processes at once: creation is serialised by an advisory lock, and a range that overlaps a
-- partition made with an older width is skipped (the older one already covers it).
-- It runs SECURITY DEFINER (src/store/roles.ts): pg_temp is searched last and every name is schema-qualified, so a
-- caller's temporary objects can never stand in for ours.
CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___ensure_partitions(p_at timestamptz DEFAULT now())
RETURNS int
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
DECLARE
    step constant interval := interval '__PARTITION_INTERVAL__';
    lo timestamptz := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_floor(p_at);
    hi timestamptz;
    child text;
    made int := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message_partitions'));
    FOR i IN 0..__PARTITION_PREMAKE__ LOOP
        hi := lo + step;
        child := '__PGQUEUE_PREFIX___message_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24');
        IF to_regclass('__PGQUEUE_SCHEMA__.' || quote_ident(child)) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE TABLE __PGQUEUE_SCHEMA__.%I PARTITION OF __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message FOR VALUES FROM (%L) TO (%L)',
                               child, lo, hi);
                made := made + 1;
            EXCEPTION WHEN invalid_object_definition THEN
                NULL; -- overlaps a partition of another width
            END;
        END IF;
        lo := hi;
    END LOOP;
    RETURN made;
END
$fn$;

SELECT __PGQUEUE_PREFIX___ensure_partitions();
