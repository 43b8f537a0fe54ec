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
  fetch: `
    SELECT p.idx::int AS idx, (s.next_seq - 1)::text AS high, m.*
    FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS p(topic_id, partition_id, idx)
    JOIN ${t.partitionSeq} s ON s.topic_id = p.topic_id AND s.partition_id = p.partition_id
    LEFT JOIN LATERAL (
      SELECT x.enqueue_seq::text AS seq, x.priority, x.routing_key AS "routingKey", x.message_key AS "messageKey",
             x.kafka_flags AS flags, x.payload, x.payload_compression AS compression, x.headers,
             COALESCE(x.message_timestamp, (extract(epoch FROM x.enqueued_at) * 1000)::int8)::text AS "timestampMs",
             x.payload_bytes::int AS "payloadBytes"
      FROM generate_series(0, ${PRIORITY_LEVELS - 1}) AS pr(priority)
      CROSS JOIN LATERAL (
        SELECT * FROM ${t.message} y
        WHERE y.topic_id = p.topic_id AND y.partition_id = p.partition_id AND y.priority = pr.priority
          AND y.enqueue_seq > ($3::int8[])[(p.idx - 1) * ${PRIORITY_LEVELS} + pr.priority + 1]
        ORDER BY y.enqueue_seq
        LIMIT $4
      ) x
    ) m ON true
    ORDER BY p.idx, m.priority, m.seq::int8`,
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
  const res = await run<FetchedRow & { idx: number; high: string }>(db, sql(t).fetch, [
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
    partitions.flatMap((p) => p.positions.map(String)),
    limit,
  ])
  const out: Array<FetchedPartition | null> = partitions.map(() => null)
  for (const row of res.rows) {
    const entry = (out[row.idx - 1] ??= { highWatermark: row.high, rows: [] })
    if (row.seq !== null) entry.rows.push(row)
  }
  return out
}
