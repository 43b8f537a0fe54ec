import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** A stored message as the consumer reads it. */
export interface FetchedRow {
  seq: string
  priority: number
  routingKey: string
  messageKey: Buffer | null
  flags: number
  payload: Buffer
  compression: number
  headers: unknown
  timestampMs: string
  /** enqueued_at in ms: the queue-time metric measures from here even when the producer set a timestamp */
  enqueuedAtMs: string
  payloadBytes: number
}

export interface FetchedPartition {
  /** next_seq - 1: the Kafka log-end offset */
  highWatermark: string
  rows: FetchedRow[]
}

export const PRIORITY_LEVELS = 10

const sql = statements((t) => ({
  // One statement per fetch round, for every partition the member owns: for each priority, the next rows above
  // that priority's position (rows of one priority are in seq order; the caller splits the budget across priority
  // bands). The ledger row comes first so an empty partition still reports its high watermark.
  // Cheaper to ship than the obvious form (measured, docs/performance.md): the payload as base64 (a third more
  // bytes than raw, where bytea's text form, hex, is twice as many and slower to encode and parse) and no ORDER BY:
  // the nested loops already produce each partition's rows by priority then seq, and fetchPartitions checks that
  // (sorting only if needed). The timestamp stays numeric (extract) so it rounds exactly as offsetsByTimestamp does.
  // The per-priority range is written as a row comparison so that only the dequeue index serves it, whatever the
  // statistics say (see the commit statement in offsets.ts).
  fetch: `
    SELECT p.idx::int AS idx, (s.next_seq - 1)::text AS high, m.*
    FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS p(topic_id, partition_id, idx)
    JOIN ${t.partitionSeq} s ON s.topic_id = p.topic_id AND s.partition_id = p.partition_id
    LEFT JOIN LATERAL (
      SELECT x.enqueue_seq::text AS seq, x.priority, x.routing_key AS "routingKey", x.message_key AS "messageKey",
             x.kafka_flags AS flags, encode(x.payload, 'base64') AS payload, x.payload_compression AS compression,
             x.headers,
             COALESCE(x.message_timestamp, (extract(epoch FROM x.enqueued_at) * 1000)::int8)::text AS "timestampMs",
             (extract(epoch FROM x.enqueued_at) * 1000)::int8::text AS "enqueuedAtMs",
             x.payload_bytes::int AS "payloadBytes"
      FROM generate_series(0, ${PRIORITY_LEVELS - 1}) AS pr(priority)
      CROSS JOIN LATERAL (
        SELECT * FROM ${t.message} y
        WHERE y.topic_id = p.topic_id AND y.partition_id = p.partition_id
          AND (y.priority, y.enqueue_seq) > (pr.priority::int2, ($3::int8[])[(p.idx - 1) * ${PRIORITY_LEVELS} + pr.priority + 1])
          AND y.priority <= pr.priority::int2
        ORDER BY y.priority, y.enqueue_seq
        LIMIT $4
      ) x
    ) m ON true`,
}))

export interface PartitionFetch {
  topicId: string
  partition: number
  /** processed-through seq per priority 0..9 */
  positions: readonly bigint[]
}

/**
 * Reads up to `limit` rows per priority of every partition, in one round trip. The result is aligned with
 * `partitions`; an entry is null when that partition has no ledger row.
 */
export async function fetchPartitions(
  db: Queryable,
  t: Tables,
  partitions: PartitionFetch[],
  limit: number,
): Promise<Array<FetchedPartition | null>> {
  const res = await run(db, sql(t).fetch, [
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
    partitions.flatMap((p) => p.positions.map(String)),
    limit,
  ])
  const out: Array<FetchedPartition | null> = partitions.map(() => null)
  for (const row of res.rows as Array<FetchedRow & { idx: number; high: string; payload: Buffer | string | null }>) {
    const entry = (out[row.idx - 1] ??= { highWatermark: row.high, rows: [] })
    if (row.seq === null) continue
    row.payload = Buffer.from(row.payload as string, 'base64')
    entry.rows.push(row as FetchedRow)
  }
  for (const entry of out) if (entry && !inOrder(entry.rows)) entry.rows.sort(byPriorityThenSeq)
  return out
}

/** seq is int8 as text without leading zeros: a shorter string is a smaller number. */
const seqLess = (a: string, b: string): boolean => a.length < b.length || (a.length === b.length && a < b)

const byPriorityThenSeq = (a: FetchedRow, b: FetchedRow): number =>
  a.priority !== b.priority ? a.priority - b.priority : seqLess(a.seq, b.seq) ? -1 : a.seq === b.seq ? 0 : 1

function inOrder(rows: FetchedRow[]): boolean {
  for (let i = 1; i < rows.length; i++) if (byPriorityThenSeq(rows[i - 1], rows[i]) > 0) return false
  return true
}
