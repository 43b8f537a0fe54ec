/**
 * The enqueued_at range a fetch or commit reads the message table in (docs/decisions/scale-011-read-horizon.md),
 * as microseconds since 1970; src/consumer/readFloors.ts says why no row the statement looks for lies outside it.
 * Written into statements as timestamptz constants (literals or parameters of an unnamed statement): the planner
 * prunes the time partitions outside it and never opens them, which an expression over now() or a lateral column
 * would not let it do (pruning then happens in the executor, after planning and locking every partition).
 *
 * Statements compare with `partition_floor(lo)`, the start of the time partition holding lo (an IMMUTABLE function
 * of a constant: folded while planning, so pruning still applies): the range then covers whole partitions, which
 * the statistics agree with. A bound inside a partition, newer than what ANALYZE last saw, made the planner expect
 * almost no rows and read the (topic, partition, seq, enqueued_at) index with a sort instead of the dequeue index:
 * every row of the partition per priority probe.
 */
export interface ReadRange {
  lo: bigint
  hi: bigint
}

/** µs since 1970 as an ISO timestamp, rounded to the millisecond outward (down for lo, up for hi). */
function iso(us: bigint, up: boolean): string {
  const ms = us / 1000n + (up && us % 1000n !== 0n ? 1n : 0n)
  const text = new Date(Number(ms)).toISOString()
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(text)) throw new RangeError(`read range: timestamp out of range (${us} µs)`)
  return text
}

/** The range as timestamptz text; unbounded = -infinity .. infinity. */
export function readRange(range: ReadRange | undefined): { lo: string; hi: string } {
  if (!range) return { lo: '-infinity', hi: 'infinity' }
  return { lo: iso(range.lo, false), hi: iso(range.hi, true) }
}
