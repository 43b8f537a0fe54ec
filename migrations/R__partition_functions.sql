-- Native range partitions for the message table, so pgQueue works without pg_partman (managed PostgreSQL, the
-- embedded server). Partition width and premake come from DATAHUB_PGQUEUE_RETENTION_PARTMAN_INTERVAL / _PREMAKE;
-- changing them changes this script's checksum, so the function is redefined and new partitions use the new width.
-- ensure_partitions runs SECURITY DEFINER for writers and readers (src/store/roles.ts): search_path is pinned
-- (pg_catalog first, pg_temp last) and every name is schema-qualified.

CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_floor(p_at timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
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

-- How many partitions past the current one are kept made: the configured premake, and never less than three days'
-- worth, so a premake that fails (lock timeout) is retried many times before any insert needs the partition.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partitions_ahead()
RETURNS int
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
AS $fn$
    SELECT GREATEST(__PARTITION_PREMAKE__,
                    ceil(extract(epoch FROM interval '3 days') / extract(epoch FROM interval '__PARTITION_INTERVAL__'))::int)
$fn$;

-- Creates the partition holding p_at and the ones after it up to the premake horizon when missing; returns how many
-- it made. p_at must lie in the window the schema can need: up to the horizon ahead of now(), and back as far as the
-- longest topic age retention (at least 30 days) plus two widths; anything else is refused (22023), so no caller
-- can make unbounded numbers of partitions. Creation is serialised by an advisory lock; CREATE ... PARTITION OF
-- locks the message table, so it waits at most 200 ms (lock_timeout) and otherwise stops, to be retried by the next
-- call long before the partition is needed. A range that overlaps a partition of an older width is skipped.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions(p_at timestamptz DEFAULT now())
RETURNS int
LANGUAGE plpgsql
SET search_path = pg_catalog, __PGQUEUE_SCHEMA__, pg_temp
SET lock_timeout = '200ms'
AS $fn$
DECLARE
    step constant interval := interval '__PARTITION_INTERVAL__';
    ahead constant int := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partitions_ahead();
    earliest timestamptz;
    latest timestamptz := now() + (ahead + 1) * step;
    lo timestamptz;
    hi timestamptz;
    child text;
    made int := 0;
BEGIN
    SELECT now() - GREATEST(interval '30 days', COALESCE(max(t.retention_max_age_seconds), 0) * interval '1 second') - 2 * step
      INTO earliest FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic t;
    IF p_at IS NULL OR p_at < earliest OR p_at > latest THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('__PGQUEUE_PREFIX___ensure_partitions: %s is outside the allowed window [%s, %s]', p_at, earliest, latest);
    END IF;
    lo := __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___partition_floor(p_at);
    PERFORM pg_advisory_xact_lock(hashtext('__PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message_partitions'));
    FOR i IN 0..ahead LOOP
        hi := lo + step;
        child := '__PGQUEUE_PREFIX___message_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24');
        IF to_regclass('__PGQUEUE_SCHEMA__.' || quote_ident(child)) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE TABLE __PGQUEUE_SCHEMA__.%I PARTITION OF __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___message FOR VALUES FROM (%L) TO (%L)',
                               child, lo, hi);
                made := made + 1;
            EXCEPTION
                WHEN invalid_object_definition THEN
                    NULL; -- overlaps a partition of another width
                WHEN lock_not_available THEN
                    RAISE NOTICE '__PGQUEUE_PREFIX___ensure_partitions: message table busy, % left for the next call', child;
                    RETURN made;
            END;
        END IF;
        lo := hi;
    END LOOP;
    RETURN made;
END
$fn$;

SELECT __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___ensure_partitions();
