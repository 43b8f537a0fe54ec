/**
 * The enqueued_at range a fetch or commit probe of one partition reads (docs/decisions/scale-011-read-horizon.md).
 * `floor` and `ceiling` (int8 microseconds since 1970, both NULL = unbounded) come from the member's read floors
 * (src/consumer/readFloors.ts): no row above the positions they were recorded for is older than `floor` or newer than
 * the later of `ceiling` and now. SLACK widens both sides for clock adjustments and for the instant between a
 * writer's start timestamp and its report in pg_stat_activity. `ceiling` is also the server's time when the floor
 * was read: a server clock now behind it by more than SLACK has been set back, and then nothing is bounded.
 *
 * The bounds are constants or parameters of the probe, so the executor prunes the message table's time partitions
 * (EXPLAIN ANALYZE shows "Subplans Removed"): one or two are touched whatever the number of partitions.
 */
const SLACK = `interval '5 minutes'`

const micros = (us: string) => `'epoch'::timestamptz + ${us} * interval '1 microsecond'`

export function timeBounds(floor: string, ceiling: string): string {
  const unbounded = `${floor} IS NULL OR ${ceiling} IS NULL OR statement_timestamp() < ${micros(ceiling)} - ${SLACK}`
  return `SELECT CASE WHEN ${unbounded} THEN '-infinity'::timestamptz ELSE ${micros(floor)} - ${SLACK} END AS lo,
      CASE WHEN ${unbounded} THEN 'infinity'::timestamptz
           ELSE GREATEST(statement_timestamp(), ${micros(ceiling)}) + ${SLACK} END AS hi`
}
