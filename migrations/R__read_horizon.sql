-- The read horizon: how old the enqueued_at of a message row that is not visible yet can be, and how new.
-- Fetch and commit bound their message probes by it so that only the time partitions that can hold the rows they
-- look for are touched (docs/decisions/scale-011-read-horizon.md gives the reasoning; src/consumer/readFloors.ts
-- the bookkeeping).
--
-- enqueued_at defaults to now(), the writer's transaction start, which is the very value pg_stat_activity reports as
-- xact_start. A row that no snapshot taken from here on has seen yet belongs to a transaction still open now (its
-- xact_start is listed below, in this database) or to one that starts later (its start is later than this
-- statement's). lo is therefore the oldest open transaction's start (or this statement's start), hi the newest.
-- lo is NULL (no bound can be given) when some open transaction cannot be seen: a backend of this database whose
-- xact_start this role may not read (grant pg_read_all_stats to the function's owner), statistics collection off
-- (track_activities), or a prepared (two-phase) transaction of this database, which has no backend any more.
-- Autovacuum workers never write message rows and are left out (they may run for hours). A backend still starting up
-- (no state yet) has no transaction: whatever it begins will start later than this statement.
-- SECURITY DEFINER (src/store/roles.ts): the function reveals two timestamps, never which session holds them.
CREATE OR REPLACE FUNCTION __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___read_horizon(OUT lo timestamptz, OUT hi timestamptz)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT CASE WHEN bool_or(a.unknown) OR EXISTS (SELECT 1 FROM pg_catalog.pg_prepared_xacts x WHERE x.database = pg_catalog.current_database())
                THEN NULL
                ELSE LEAST(min(a.xact_start), pg_catalog.statement_timestamp()) END,
           GREATEST(max(a.xact_start), pg_catalog.statement_timestamp())
    FROM (
        SELECT s.xact_start,
               (s.xact_start IS NULL AND (s.query = '<insufficient privilege>' OR s.state = 'disabled')) AS unknown
        FROM pg_catalog.pg_stat_activity s
        WHERE s.datid = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
          AND s.backend_type IS DISTINCT FROM 'autovacuum worker'
    ) a
$fn$;
